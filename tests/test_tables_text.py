"""Text tables show their cells as data: rich's markup, emoji codes and highlighting stay out."""

from __future__ import annotations

from ctbench.tables import Table, render_text


def test_a_cell_that_looks_like_markup_is_printed_as_written() -> None:
    label = "[bold]gpt-5[/] :smile: 10.0.0.1"
    out = render_text([Table("runs", ["run", "n"], [[label, 3]], note="[red]note[/]")], width=120)
    assert label in out  # a run label, a task id or a note is never swallowed or turned into an emoji
    assert "[red]note[/]" in out
    assert "\x1b" not in out  # and no colour reaches a file
