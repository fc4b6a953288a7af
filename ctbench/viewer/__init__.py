"""The run viewer (``ctb-eval view``): a Textual app over run folders.

Kept apart from :mod:`ctbench.evaluate`, which must never import Textual: ``ctb-eval score`` and the
runner do not pay for the TUI. :mod:`ctbench.viewer.data` holds the plain data the app shows.
"""
