"""The replay reveals only what was asked (issue 25, item 7).

A task's recordings make the commands they hold valid on their device even where the vendor
grammar does not know them. They must not change any *error*: ``show spanning-tree mst`` answered
"% Incomplete command." only on the device that recorded ``show spanning-tree mst 1``, and
"% Invalid input" elsewhere - the error text told the agent what was recorded. Every vendor family:
each prefix and each extension of a recorded command outside the grammar answers exactly as on a
device without the recording. The protection-off half resolves with the recorded tree alone (the
old rule) and shows the error differs, so the equality can fail.
"""

from __future__ import annotations

import pytest

from ctbench.dialects import OS_FAMILIES, get_dialect

VERB = {"huawei_vrp": "display", "hp_comware": "display"}


@pytest.mark.parametrize("os_name", OS_FAMILIES)
def test_a_prefix_of_a_recorded_command_answers_as_where_nothing_was_recorded(os_name: str) -> None:
    d = get_dialect(os_name)
    verb = VERB.get(os_name, "show")
    command = f"{verb} zzprobe mst 1"
    recorded = frozenset({command})
    prompt = d.prompt("R1")
    assert d.resolve(command, recorded=recorded).ok and not d.resolve(command).ok
    changed = []
    for line in (f"{verb} zzprobe", f"{verb} zzprobe mst", f"{verb} zzprobe mst 2", f"{command} extra"):
        with_rec, without = d.resolve(line, recorded=recorded), d.resolve(line)
        assert with_rec.error is not None and without.error is not None, line
        assert d.render_error(with_rec.error, line, prompt) == d.render_error(without.error, line, prompt), (
            line
        )
        # protection off: the recorded tree alone decides the error (the rule before issue 25)
        extra = d._extras(recorded)
        assert extra is not None
        old = d._resolve_in(line, line, (*d._roots, (extra, True)))
        if old.error is not None and d.render_error(old.error, line, prompt) != d.render_error(
            without.error, line, prompt
        ):
            changed.append(line)
    assert changed, "the recorded tree alone answers every probe like the vendor grammar: nothing tested"


def test_cisco_spanning_tree_mst_the_case_of_the_issue() -> None:
    d = get_dialect("cisco_ios")
    line = "show spanning-tree mst"
    recorded = frozenset({"show spanning-tree mst 1"})
    got = d.render_error(d.resolve(line, recorded=recorded).error, line, "SW1#")
    assert "Incomplete" not in got and got == d.render_error(d.resolve(line).error, line, "SW1#")
