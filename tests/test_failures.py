"""F1-F5 failure taxonomy in the paper's priority order (E.2), on the paper's examples (E.3)."""

from __future__ import annotations

import pytest

from ctbench.answer import RcaEntry
from ctbench.evaluate.failures import PRIORITY, classify_rca_failure, diagnose_rca_failure
from ctbench.evaluate.parse import ParsedAnswer, parse_rca

VRRP = "global VRRP hot standby redundancy protocol not enabled"
POLICY = "security policy rule does not permit the corresponding user"
PREFIX = "IP prefix list missing the corresponding user source IP address"
OSPF = "OSPF configuration error"
SHUT = "shutdown"

GOLD_Q7 = frozenset({RcaEntry("FW_01", "10.3.10.1", POLICY),
                     RcaEntry("BJHQ_CSR1000V_GW_01", "10.1.120.251", PREFIX)})
GOLD_Q10 = frozenset({RcaEntry("FW_02", "114.114.114.114", VRRP)})
GOLD_Q11 = frozenset({RcaEntry("FW_02", "8.8.8.8", VRRP)})
GOLD_Q12 = GOLD_Q10
GOLD_Q18 = GOLD_Q10


def ans(*entries: RcaEntry) -> ParsedAnswer:
    return ParsedAnswer("answered", rca=frozenset(entries))


def test_q12_empty_answer_is_f5() -> None:
    assert classify_rca_failure(GOLD_Q12, ParsedAnswer("empty", rca=frozenset())) == "F5"
    assert classify_rca_failure(GOLD_Q12, ParsedAnswer("unparsable", rca=frozenset(),
                                                       invalid_lines=("FW_02 vrrp",))) == "F5"
    assert classify_rca_failure(GOLD_Q12, None) == "F5"   # timeout / error: no answer at all


def test_q12_through_the_parser() -> None:
    parsed = parse_rca("", node_names=["FW_02"], resolve_label=lambda s: s)
    assert classify_rca_failure(GOLD_Q12, parsed) == "F5"


def test_q7_missing_independent_cause_is_f1() -> None:
    d = diagnose_rca_failure(GOLD_Q7, ans(RcaEntry("FW_01", "10.3.10.1", POLICY)))
    assert d is not None and (d.mode, d.missing, d.extra) == ("F1", 1, 0)


def test_q18_extra_non_gold_causes_is_f2_despite_mislocalisation() -> None:
    pred = ans(RcaEntry("BJHQ_CSR1000V_GW_01", "10.1.120.251", PREFIX), RcaEntry("FW_01", "114.114.114.114", VRRP))
    d = diagnose_rca_failure(GOLD_Q18, pred)
    assert d is not None and (d.mode, d.missing, d.extra) == ("F2", 1, 2)


def test_q10_wrong_mechanism_is_f4() -> None:
    d = diagnose_rca_failure(GOLD_Q10, ans(RcaEntry("FW_02", "114.114.114.114", OSPF)))
    assert d is not None and d.mode == "F4"
    assert d.pairs == ((RcaEntry("FW_02", "114.114.114.114", VRRP), RcaEntry("FW_02", "114.114.114.114", OSPF)),)


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
