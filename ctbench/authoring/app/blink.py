"""Cursor blinking, switched off for tests and snapshots (a blinking cursor makes screenshots flaky)."""

from __future__ import annotations

from textual.dom import DOMNode
from textual.widgets import Input, TextArea


def apply_blink(node: DOMNode) -> None:
    """Apply the app's ``cursor_blink`` setting (default on) to every text field under ``node``."""
    blink = bool(getattr(node.app, "cursor_blink", True))
    if blink:
        return
    for widget in node.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False
