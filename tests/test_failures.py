"""F1-F5 failure taxonomy in the paper's priority order (E.2), on the paper's examples (E.3)."""

from __future__ import annotations

import pytest

from ctbench.answer import RcaEntry
from ctbench.scoring.failures import PRIORITY, classify_rca_failure, diagnose_rca_failure
from ctbench.scoring.parse import ParsedAnswer, parse_rca

VRRP = "global VRRP hot standby redundancy protocol not enabled"
POLICY = "security policy rule does not permit the corresponding user"
PREFIX = "IP prefix list missing the corresponding user source IP address"
OSPF = "OSPF configuration error"
SHUT = "shutdown"

GOLD_Q7 = frozenset(
    {RcaEntry("FW_01", "10.3.10.1", POLICY), RcaEntry("BJHQ_CSR1000V_GW_01", "10.1.120.251", PREFIX)}
)
GOLD_Q10 = frozenset({RcaEntry("FW_02", "114.114.114.114", VRRP)})
GOLD_Q11 = frozenset({RcaEntry("FW_02", "8.8.8.8", VRRP)})
GOLD_Q12 = GOLD_Q10
GOLD_Q18 = GOLD_Q10


def ans(*entries: RcaEntry) -> ParsedAnswer:
    return ParsedAnswer("answered", rca=frozenset(entries))


def test_q12_empty_answer_is_f5() -> None:
    assert classify_rca_failure(GOLD_Q12, ParsedAnswer("empty", rca=frozenset())) == "F5"
    assert (
        classify_rca_failure(
            GOLD_Q12, ParsedAnswer("unparsable", rca=frozenset(), invalid_lines=("FW_02 vrrp",))
        )
        == "F5"
    )
    assert classify_rca_failure(GOLD_Q12, None) == "F5"  # timeout / error: no answer at all


def test_q12_through_the_parser() -> None:
    parsed = parse_rca("", node_names=["FW_02"], resolve_label=lambda s: s)
    assert classify_rca_failure(GOLD_Q12, parsed) == "F5"


def test_q7_missing_independent_cause_is_f1() -> None:
    d = diagnose_rca_failure(GOLD_Q7, ans(RcaEntry("FW_01", "10.3.10.1", POLICY)))
    assert d is not None and (d.mode, d.missing, d.extra) == ("F1", 1, 0)


def test_q18_extra_non_gold_causes_is_f2_despite_mislocalisation() -> None:
    pred = ans(
        RcaEntry("BJHQ_CSR1000V_GW_01", "10.1.120.251", PREFIX), RcaEntry("FW_01", "114.114.114.114", VRRP)
    )
    d = diagnose_rca_failure(GOLD_Q18, pred)
    assert d is not None and (d.mode, d.missing, d.extra) == ("F2", 1, 2)


def test_q10_wrong_mechanism_is_f4() -> None:
    d = diagnose_rca_failure(GOLD_Q10, ans(RcaEntry("FW_02", "114.114.114.114", OSPF)))
    assert d is not None and d.mode == "F4"
    assert d.pairs == (
        (RcaEntry("FW_02", "114.114.114.114", VRRP), RcaEntry("FW_02", "114.114.114.114", OSPF)),
    )


def test_q11_wrong_node_right_mechanism_is_f3() -> None:
    assert classify_rca_failure(GOLD_Q11, ans(RcaEntry("Core_SW_01", "8.8.8.8", VRRP))) == "F3"


def test_wrong_object_right_node_and_label_is_f3() -> None:
    assert classify_rca_failure(GOLD_Q11, ans(RcaEntry("FW_02", "9.9.9.9", VRRP))) == "F3"


def test_wrong_mechanism_and_wrong_object_is_f4_not_f3() -> None:
    assert classify_rca_failure(GOLD_Q11, ans(RcaEntry("Core_SW_01", "1.1.1.1", OSPF))) == "F4"


def test_correct_answer_has_no_failure() -> None:
    assert classify_rca_failure(GOLD_Q7, ans(*GOLD_Q7)) is None


def test_coverage_deficit_beats_entry_errors() -> None:
    # misses one cause AND mislocalises the other -> set level first (F1)
    assert classify_rca_failure(GOLD_Q7, ans(RcaEntry("Core_SW_01", "10.3.10.1", POLICY))) == "F1"


def test_rca90_missing_and_extra_shutdown() -> None:
    gold = frozenset({RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT), RcaEntry("BoardLeaf-01", "GE1/0/1", SHUT)})
    assert classify_rca_failure(gold, ans(RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT))) == "F1"
    three = ans(*gold, RcaEntry("BoardLeaf-01", "GE1/0/2", SHUT))
    assert classify_rca_failure(gold, three) == "F2"
    # same count, one object wrong -> F3
    swapped = ans(RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT), RcaEntry("BoardLeaf-01", "GE1/0/3", SHUT))
    assert classify_rca_failure(gold, swapped) == "F3"


def test_entry_pairing_prefers_mechanism_agreement() -> None:
    # labels swapped between the two locations: each label is present, attached to the wrong place.
    gold = frozenset({RcaEntry("A", "x", VRRP), RcaEntry("B", "y", SHUT)})
    pred = ans(RcaEntry("A", "x", SHUT), RcaEntry("B", "y", VRRP))
    d = diagnose_rca_failure(gold, pred)
    assert d is not None and d.mode == "F3"
    assert all(g.label == p.label for g, p in d.pairs)


def test_mixed_entry_errors_mechanism_has_priority() -> None:
    gold = frozenset({RcaEntry("A", "x", VRRP), RcaEntry("B", "y", SHUT)})
    pred = ans(RcaEntry("C", "x", VRRP), RcaEntry("B", "y", OSPF))  # one F3-type, one F4-type entry
    assert classify_rca_failure(gold, pred) == "F4"


def test_priority_order_constant_matches_paper() -> None:
    assert PRIORITY == ("F5", "F1", "F2", "F4", "F3")


def test_path_answer_rejected() -> None:
    from ctbench.answer import Hop

    with pytest.raises(ValueError):
        diagnose_rca_failure(GOLD_Q10, ParsedAnswer("answered", paths=((Hop("A", "e"), Hop("B")),)))


# --------------------------------------------------------------------------- issue 16, item 8

A = RcaEntry("FW_02", "114.114.114.114", VRRP)
B = RcaEntry("BJHQ_CSR1000V_GW_01", "10.1.120.251", PREFIX)
UNRELATED_C = RcaEntry("Core_SW_01", "8.8.8.8", "routing loop on the core")
UNRELATED_D = RcaEntry("ACC_SW_01", "GE0/0/1", SHUT)


@pytest.mark.parametrize(
    ("gold", "pred", "mode"),
    [
        # set level: a gold cause dropped entirely is F1 whatever else the answer adds (E.2: coverage first)
        ({A, B}, {A, UNRELATED_C, UNRELATED_D}, "F1"),
        ({A}, {UNRELATED_C, UNRELATED_D}, "F1"),
        ({A, B}, {UNRELATED_C}, "F1"),
        ({A, B}, {RcaEntry("FW_09", "1.1.1.1", VRRP)}, "F1"),  # fewer causes: F1 even when one is addressed
        # ...but when every gold cause is returned or addressed, extra causes are F2 (q18)
        ({A}, {A, UNRELATED_C}, "F2"),
        ({A}, {RcaEntry("FW_01", "114.114.114.114", VRRP), RcaEntry("GW_01", "10.1.120.251", PREFIX)}, "F2"),
        (
            {A, B},
            {A, RcaEntry("BJHQ_CSR1000V_GW_01", "10.9.9.9", OSPF), UNRELATED_C},
            "F2",
        ),  # B addressed by node
        # comparable sets (equal counts): entry level, mechanism before object
        ({A, B}, {A, UNRELATED_C}, "F4"),  # wrong mechanism and wrong object (device included) -> F4
        ({A, B}, {RcaEntry("FW_01", A.object, VRRP), RcaEntry("GW_09", B.object, PREFIX)}, "F3"),
        (
            {A, B},
            {RcaEntry(A.node, A.object, PREFIX), RcaEntry(B.node, B.object, VRRP)},
            "F3",
        ),  # labels swapped
        ({A}, {RcaEntry(A.node, "9.9.9.9", OSPF)}, "F4"),
    ],
)
def test_failure_assignment_follows_e2_priority(gold: set[RcaEntry], pred: set[RcaEntry], mode: str) -> None:
    assert classify_rca_failure(frozenset(gold), ans(*pred)) == mode


def test_priority_is_total_f5_beats_everything() -> None:
    # an unparsable answer is F5 even though its invalid lines name the gold cause exactly
    parsed = ParsedAnswer("unparsable", rca=frozenset(), invalid_lines=(f"{A.node} {A.object} {A.label}",))
    assert classify_rca_failure(frozenset({A}), parsed) == "F5"


NODES = ["FW_01", "FW_02", "BJHQ_CSR1000V_GW_01", "Core_SW_01", "ACC_SW_01"]
LABELS = {VRRP: VRRP, PREFIX: PREFIX, POLICY: POLICY, SHUT: SHUT, OSPF: OSPF}


def parse(text: str) -> ParsedAnswer:
    return parse_rca(text, node_names=NODES, resolve_label=LABELS.get)


@pytest.mark.parametrize(
    ("text", "mode", "unresolved"),
    [
        # E.2 checks the schema first: a line outside it (unknown label or node) makes the answer F5,
        # before any set or entry comparison (it used to be F2, F3 or F4 by the set rule)
        (
            f"{A.node};{A.object};{VRRP}\nCore_SW_01;8.8.8.8;routing loop on the core",
            "F5",
            ["unknown root-cause label 'routing loop on the core'"],
        ),
        (
            f"<result>\n{A.node};{A.object};{VRRP}\nFW_99;8.8.8.8;{VRRP}\n</result>",
            "F5",
            ["unknown node 'FW_99'"],
        ),
        (
            f"Final answer: NOT_A_NODE;x;cosmic rays\n{A.node};{A.object};{VRRP}",
            "F5",
            ["unknown node 'NOT_A_NODE'; unknown root-cause label 'cosmic rays'"],
        ),
        ("<answer>FW_99;114.114.114.114;" + VRRP + "</answer>", "F5", ["unknown node 'FW_99'"]),
        (
            "<answer>FW_02;114.114.114.114;VRRP is broken</answer>",
            "F5",
            ["unknown root-cause label 'VRRP is broken'"],
        ),
        (
            "<answer>Nowhere_01;0.0.0.0;gremlins</answer>",
            "F5",
            ["unknown node 'Nowhere_01'; unknown root-cause label 'gremlins'"],
        ),
    ],
)
def test_stated_causes_with_unknown_names_count(text: str, mode: str, unresolved: list[str]) -> None:
    parsed = parse(text)
    assert parsed.status == "answered"
    assert [problem for _, problem in parsed.unresolved_lines] == unresolved
    assert classify_rca_failure(frozenset({A}), parsed) == mode
    again = ParsedAnswer.from_json(parsed.to_json())  # the parse record keeps them
    assert again == parsed


def test_a_line_of_the_wrong_shape_in_a_declared_answer_is_f5() -> None:
    """Inside answer tags every line is an answer line: one with two fields breaks the schema (F5),
    and the answer's parseable entries still count."""
    gold = frozenset({A, RcaEntry("FW_01", "1.1.1.1", PREFIX)})
    wrong_shape = parse(f"<answer>\n{A.node};{A.object};{VRRP}\nFW_01;{PREFIX}\n</answer>")
    assert wrong_shape.rca == {A} and wrong_shape.invalid_lines == (f"FW_01;{PREFIX}",)
    assert wrong_shape.schema_violations == (f"FW_01;{PREFIX}",)
    assert classify_rca_failure(gold, wrong_shape) == "F5"
    # the same two lines outside a declared answer: the short one is prose, the answer is F1
    loose = parse(f"{A.node};{A.object};{VRRP}\nFW_01;{PREFIX}\n")
    assert loose.rca == {A} and loose.schema_violations == ()
    assert classify_rca_failure(gold, loose) == "F1"
    # and a schema-clean answer of the same entries is judged by the set rule, as before
    assert classify_rca_failure(gold, parse(f"<answer>{A.node};{A.object};{VRRP}</answer>")) == "F1"


def test_prose_with_two_semicolons_is_not_a_cause_outside_a_declared_answer() -> None:
    text = f"I looked at it; nothing obvious; moving on\n{A.node};{A.object};{VRRP}\n"
    parsed = parse(text)
    assert parsed.rca == {A} and parsed.unresolved_lines == ()
    assert parsed.invalid_lines == ("I looked at it; nothing obvious; moving on",)
    assert classify_rca_failure(frozenset({A}), parsed) is None
