"""The authoring app (Textual): browse tasks, write and revise them, try them through the replay backend.

Importing this package imports Textual; the command line imports it only when a terminal app is asked
for, so scripted commands and the rest of ctbench stay light.
"""
