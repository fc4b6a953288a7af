"""Textual widgets shared by the authoring and review apps.

Import from the modules themselves (``from ctbench.tui.replay_console import ReplayConsole``): this
package imports Textual, so nothing in the core, replay or evaluate packages may import it.
"""
