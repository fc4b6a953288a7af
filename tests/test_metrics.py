"""Metric definitions on hand-worked cases, including the paper's own examples (A.7, E.3)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path as FsPath

import pytest

from ctbench.answer import Hop, Path, RcaEntry
from ctbench.scoring.metrics import (
    LabelWeights,
    NodeInfo,
    NodeWeights,
    ScoringConfig,
    TaskRecord,
    TaskUsage,
    Topology,
    best_matching,
    entry_match,
    evidence_counts,
    hierarchical_loc,
    hierarchical_rca,
    iou,
    label_sim,
    node_sim,
    path_edge_set,
    path_endpoints,
    score_paths,
    score_rca,
    score_task,
)
from ctbench.scoring.parse import ParsedAnswer
from ctbench.scoring.summary import aggregate, summarize

VRRP = "global VRRP hot standby redundancy protocol not enabled"
POLICY = "security policy rule does not permit the corresponding user"
PREFIX = "IP prefix list missing the corresponding user source IP address"
OSPF = "OSPF configuration error"
SHUT = "shutdown"

# Paper E.3 gold answers.
Q7_GOLD = frozenset(
    {RcaEntry("FW_01", "10.3.10.1", POLICY), RcaEntry("BJHQ_CSR1000V_GW_01", "10.1.120.251", PREFIX)}
)
Q10_GOLD = frozenset({RcaEntry("FW_02", "114.114.114.114", VRRP)})
Q11_GOLD = frozenset({RcaEntry("FW_02", "8.8.8.8", VRRP)})
RCA90_GOLD = frozenset({RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT), RcaEntry("BoardLeaf-01", "GE1/0/1", SHUT)})


def answered(*entries: RcaEntry) -> ParsedAnswer:
    return ParsedAnswer("answered", rca=frozenset(entries))


def answered_paths(*paths: Path) -> ParsedAnswer:
    return ParsedAnswer("answered", paths=tuple(paths))


def approx(x: float) -> object:
    return pytest.approx(x, abs=1e-12)


# --------------------------------------------------------------------------- IoU / RCA


def test_iou_basics() -> None:
    assert iou({1, 2}, {2, 3}) == approx(1 / 3)
    assert iou(set(), {1}) == 0.0
    assert iou(set(), set()) == 1.0


def test_rca_exact_match() -> None:
    s = score_rca(RCA90_GOLD, set(RCA90_GOLD))
    assert (s.exact, s.loc, s.ident, s.triplet) == (True, 1.0, 1.0, 1.0)


def test_rca90_missing_one_of_two_shutdowns() -> None:
    s = score_rca(RCA90_GOLD, {RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT)})
    assert not s.exact
    assert s.loc == approx(1 / 2)  # {(BL, GE1/0/0)} vs two pairs
    assert s.ident == 1.0  # the label set {shutdown} is the same
    assert s.triplet == approx(1 / 2)


def test_rca90_extra_cause() -> None:
    extra = set(RCA90_GOLD) | {RcaEntry("BoardLeaf-01", "GE1/0/2", SHUT)}
    s = score_rca(RCA90_GOLD, extra)
    assert not s.exact and s.loc == approx(2 / 3) and s.ident == 1.0 and s.triplet == approx(2 / 3)


def test_q7_missing_cause() -> None:
    s = score_rca(Q7_GOLD, {RcaEntry("FW_01", "10.3.10.1", POLICY)})
    assert (s.exact, s.loc, s.ident, s.triplet) == (False, approx(0.5), approx(0.5), approx(0.5))


def test_q10_wrong_mechanism() -> None:
    s = score_rca(Q10_GOLD, {RcaEntry("FW_02", "114.114.114.114", OSPF)})
    assert (s.exact, s.loc, s.ident, s.triplet) == (False, 1.0, 0.0, 0.0)


def test_q11_wrong_node() -> None:
    s = score_rca(Q11_GOLD, {RcaEntry("Core_SW_01", "8.8.8.8", VRRP)})
    assert (s.exact, s.loc, s.ident, s.triplet) == (False, 0.0, 1.0, 0.0)


def test_q18_extra_and_mislocalised() -> None:
    pred = {
        RcaEntry("BJHQ_CSR1000V_GW_01", "10.1.120.251", PREFIX),
        RcaEntry("FW_01", "114.114.114.114", VRRP),
    }
    s = score_rca(Q10_GOLD, pred)
    assert s.loc == 0.0 and s.ident == approx(1 / 2) and s.triplet == 0.0 and not s.exact


def test_swapped_labels_keep_loc_and_id_but_lose_triplet() -> None:
    gold = {RcaEntry("A", "x", VRRP), RcaEntry("B", "y", SHUT)}
    pred = {RcaEntry("A", "x", SHUT), RcaEntry("B", "y", VRRP)}
    s = score_rca(gold, pred)
    assert (s.loc, s.ident, s.triplet, s.exact) == (1.0, 1.0, 0.0, False)


@pytest.mark.parametrize("pred", [None, frozenset()])
def test_q12_empty_prediction_scores_zero(pred: frozenset[RcaEntry] | None) -> None:
    s = score_rca(Q10_GOLD, pred)
    assert (s.exact, s.loc, s.ident, s.triplet) == (False, 0.0, 0.0, 0.0)


# --------------------------------------------------------------------------- paths


def chain(*tokens: tuple[str, str | None]) -> Path:
    return tuple(Hop(n, e) for n, e in tokens)


P_ABCD = chain(("A", "e1"), ("B", "e2"), ("C", "e3"), ("D", None))
P1 = chain(("A", "e1"), ("B", "e2"), ("D", None))
P2 = chain(("A", "e5"), ("C", "e6"), ("D", None))
P3 = chain(("A", "e1"), ("E", "e7"), ("F", None))


def test_path_exact() -> None:
    s = score_paths([P_ABCD], [P_ABCD])
    assert (s.exact, s.loc, s.rest, s.sequence) == (True, 1.0, 1.0, 1.0)
    assert (s.edges_intersection, s.edges_union) == (3, 3)


def test_path_endpoints_are_role_labelled() -> None:
    assert path_endpoints([P1, P3]) == {("src", "A"), ("dst", "D"), ("dst", "F")}


def test_path_reversed_endpoints_do_not_match() -> None:
    rev = chain(("D", "e3"), ("C", "e2"), ("B", "e1"), ("A", None))
    s = score_paths([P_ABCD], [rev])
    assert s.loc == 0.0 and s.rest == 0.0 and s.sequence == 0.0 and not s.exact


def test_path_wrong_egress_spoils_two_edges() -> None:
    wrong = chain(("A", "e1"), ("B", "e9"), ("C", "e3"), ("D", None))
    s = score_paths([P_ABCD], [wrong])
    # gold edges (A1,B2) (B2,C3) (C3,D); predicted (A1,B9) (B9,C3) (C3,D): 1 shared of 5
    assert s.loc == 1.0 and s.rest == approx(1 / 5) and s.sequence == 0.0 and not s.exact
    assert (s.edges_intersection, s.edges_union) == (1, 5)


def test_path_missing_path() -> None:
    s = score_paths([P1, P2], [P1])
    assert s.loc == 1.0  # both gold paths share src A and dst D
    assert s.rest == approx(2 / 4)
    assert s.sequence == approx(1 / 2)
    assert not s.exact


def test_path_extra_path() -> None:
    s = score_paths([P1, P2], [P1, P2, P3])
    assert s.loc == approx(2 / 3)  # ("dst", F) is extra
    assert s.rest == approx(4 / 6)  # (A1,E7) and (E7,F) are extra
    assert s.sequence == approx(2 / 3)
    assert not s.exact


def test_path_exact_ignores_order_and_duplicates_of_paths() -> None:
    assert score_paths([P1, P2], [P2, P1, P2]).exact


@pytest.mark.parametrize("pred", [None, ()])
def test_path_empty_prediction(pred: tuple[Path, ...] | None) -> None:
    s = score_paths([P1], pred)
    assert (s.exact, s.loc, s.rest, s.sequence, s.edges_intersection, s.edges_union) == (False, 0, 0, 0, 0, 2)


def test_pr100_twelve_element_path() -> None:
    nodes = [
        "SZ_Server_Cluster3",
        "SZ_Core_01",
        "SZ_Core_02",
        "SZ_PE_01",
        "BB_P_01",
        "BJ_PE_01",
        "BJ_GW_01",
        "BJ_PE_02",
        "SH_PE_01",
        "SH_Agg_01",
        "SH_Acc_01",
        "SH_SAL_PC01",
    ]
    gold = tuple(Hop(n, f"GE1/0/{i}") for i, n in enumerate(nodes[:-1])) + (Hop(nodes[-1]),)
    assert len(gold) == 12 and len(path_edge_set([gold])) == 11
    assert score_paths([gold], [gold]).exact
    bad = list(gold)
    bad[5] = Hop(bad[5].node, "GE9/9/9")  # wrong egress on the 6th hop
    s = score_paths([gold], [tuple(bad)])
    assert (s.edges_intersection, s.edges_union) == (9, 13)
    assert s.rest == approx(9 / 13) and s.loc == 1.0 and s.sequence == 0.0


# --------------------------------------------------------------------------- evidence


def test_evidence_counts_dedupe_executed() -> None:
    golden = {
        ("FW_02", "display vrrp"),
        ("FW_02", "display current-configuration"),
        ("Core", "display lldp neighbor"),
    }
    executed = [
        ("FW_02", "display vrrp"),
        ("FW_02", "display vrrp"),
        ("FW_02", "display ip interface brief"),
        ("Core", "display lldp neighbor"),
    ]
    e = evidence_counts(golden, executed)
    assert (e.covered, e.golden, e.executed, e.complete) == (2, 3, 3, False)
    assert evidence_counts(golden, None).executed == 0
    # device must match too
    assert evidence_counts({("FW_02", "display vrrp")}, [("FW_01", "display vrrp")]).covered == 0


# --------------------------------------------------------------------------- hierarchical (B.2)

LEVELS = {
    "a": ("A1", "A2", "Z3"),
    "x": ("A1", "X2", "X3"),
    "y": ("Y1", "A2", "Y3"),
    "b": ("B1", "X2", "B3"),
    "c": ("C1", "C2", "B3"),
    VRRP: ("redundancy", "control plane", "configuration"),
    OSPF: ("routing protocol", "control plane", "configuration"),
    PREFIX: ("route policy", "policy", "configuration"),
    SHUT: ("port state", "physical", "interface"),
}


def test_label_sim_levels_and_weights() -> None:
    assert label_sim("a", "a", LEVELS) == 1.0
    assert label_sim("a", "x", LEVELS) == 0.75  # same L1
    assert label_sim("a", "y", LEVELS) == 0.5  # same L2
    assert label_sim("b", "c", LEVELS) == 0.25  # same L3
    assert label_sim(VRRP, SHUT, LEVELS) == 0.0
    assert label_sim("a", "unknown", LEVELS) == 0.0
    assert label_sim("unknown", "unknown", LEVELS) == 1.0
    w = LabelWeights(exact=1.0, l1=0.9, l2=0.6, l3=0.3, other=0.1)
    assert [label_sim("a", t, LEVELS, w) for t in ("x", "y", "c")] == [0.9, 0.6, 0.1]


def test_hierarchical_rca_uses_optimal_not_greedy_matching() -> None:
    gold = {RcaEntry("N", "o1", "a"), RcaEntry("N", "o2", "b")}
    pred = {RcaEntry("N", "o1", "x"), RcaEntry("N", "o2", "y")}
    # sim(a,x)=.75 sim(a,y)=.5 sim(b,x)=.5 sim(b,y)=0: greedy a->x gives .75, optimal a->y,b->x gives 1.0
    assert hierarchical_rca(gold, pred, LEVELS) == approx(1.0 / 2)


def test_hierarchical_rca_q10_and_recall_orientation() -> None:
    assert hierarchical_rca(Q10_GOLD, {RcaEntry("FW_02", "114.114.114.114", OSPF)}, LEVELS) == 0.5
    # one predicted entry for two gold entries: at most 1/2
    assert hierarchical_rca(Q7_GOLD, {RcaEntry("FW_01", "10.3.10.1", POLICY)}, LEVELS) == 0.5
    # extra predicted entries are not penalised (recall-oriented, Table 16)
    pred = set(Q10_GOLD) | {RcaEntry("X", "y", SHUT)}
    assert hierarchical_rca(Q10_GOLD, pred, LEVELS) == 1.0
    assert hierarchical_rca(Q10_GOLD, None, LEVELS) == 0.0


def test_best_matching_rectangular() -> None:
    assert best_matching([1, 2], [1], lambda g, p: float(g == p)) == 1.0
    assert best_matching([], [1], lambda g, p: 1.0) == 0.0


def test_exact_entry_match_equals_the_assignment_solver() -> None:
    """entry_match counts equal labels / locations class by class; the solver must agree."""
    rng = random.Random(5)
    for _ in range(300):
        gold = {
            RcaEntry(rng.choice("AB"), rng.choice("xy"), rng.choice(["L1", "L2", "L3"]))
            for _ in range(rng.randint(1, 4))
        }
        pred = {
            RcaEntry(rng.choice("ABC"), rng.choice("xyz"), rng.choice(["L1", "L2", "L4"]))
            for _ in range(rng.randint(0, 5))
        }
        em = entry_match(gold, pred)
        g, p = sorted(gold), sorted(pred)
        assert em.id_exact == best_matching(g, p, lambda a, b: float(a.label == b.label))
        assert em.loc_exact == best_matching(g, p, lambda a, b: float(a[:2] == b[:2]))


# --------------------------------------------------------------------------- topology (B.3)

TOPO = Topology.from_links(
    {
        "FW_01": NodeInfo("BJ", "firewall", "FW-HA"),
        "FW_02": NodeInfo("BJ", "firewall", "FW-HA"),
        "Core_SW_01": ("BJ", "core", None),
        "Core_SW_02": ("BJ", "core", None),
        "Agg_01": ("SH", "aggregation", None),
        "Acc_01": ("SH", "access", None),
    },
    [("FW_02", "Core_SW_01"), ("Core_SW_01", "Agg_01"), ("Agg_01", "Acc_01")],
)


def test_node_sim_rules_in_order() -> None:
    assert node_sim("FW_02", "FW_02", TOPO) == 1.0
    assert node_sim("FW_02", "FW_01", TOPO) == 0.75  # same cluster
    assert node_sim("Core_SW_01", "Core_SW_02", TOPO) == 0.5  # same site and role (no cluster)
    assert node_sim("FW_02", "Core_SW_01", TOPO) == 0.25  # neighbours (adjacency is symmetric)
    assert node_sim("Core_SW_01", "FW_02", TOPO) == 0.25
    assert node_sim("FW_02", "Agg_01", TOPO) == 0.0  # two hops, k=1
    assert node_sim("FW_02", "Agg_01", TOPO, NodeWeights(k=2)) == 0.25
    assert node_sim("FW_02", "Acc_01", TOPO, NodeWeights(k=2)) == 0.0
    assert node_sim("FW_02", "Acc_01", TOPO, NodeWeights(k=3)) == 0.25
    assert node_sim("FW_02", "Core_SW_01", None) == 0.0
    assert node_sim("FW_02", "Nowhere", TOPO) == 0.0
    assert node_sim("FW_02", "FW_01", TOPO, NodeWeights(cluster=0.9)) == 0.9


def test_entry_match_q11_and_q10() -> None:
    q11 = entry_match(Q11_GOLD, {RcaEntry("Core_SW_01", "8.8.8.8", VRRP)}, levels=LEVELS, topology=TOPO)
    assert (q11.n_gold, q11.id_exact, q11.id_hierarchical, q11.loc_exact, q11.loc_hierarchical) == (
        1,
        1.0,
        1.0,
        0.0,
        0.25,
    )
    q10 = entry_match(Q10_GOLD, {RcaEntry("FW_02", "114.114.114.114", OSPF)}, levels=LEVELS, topology=TOPO)
    assert (q10.id_exact, q10.id_hierarchical, q10.loc_exact, q10.loc_hierarchical) == (0.0, 0.5, 1.0, 1.0)
    assert hierarchical_loc(Q11_GOLD, {RcaEntry("FW_01", "8.8.8.8", VRRP)}, TOPO) == 0.75


def test_entry_match_rca90_one_of_two() -> None:
    e = entry_match(RCA90_GOLD, {RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT)})
    # RCA-ID IoU is 1 here, but the entry-match ID is recall over gold entries: 1 of 2
    assert (e.id_exact, e.loc_exact, e.loc_hierarchical, e.id_hierarchical) == (1.0, 1.0, 1.0, None)
    # right node, wrong object: exact loc 0, hierarchical (node-only) loc 1
    f = entry_match(Q11_GOLD, {RcaEntry("FW_02", "9.9.9.9", VRRP)})
    assert (f.loc_exact, f.loc_hierarchical) == (0.0, 1.0)


# --------------------------------------------------------------------------- aggregation

NO_USAGE = TaskUsage()


def rca_record(
    tid: str,
    gold: frozenset[RcaEntry],
    pred: ParsedAnswer | None,
    golden: set[tuple[str, str]],
    executed: list[tuple[str, str]],
    usage: TaskUsage = NO_USAGE,
    **meta: object,
) -> TaskRecord:
    return TaskRecord(tid, "rca", gold, pred, frozenset(golden), tuple(executed), usage, meta, TOPO)


def make_records() -> list[TaskRecord]:
    g1 = {("FW_02", "display vrrp"), ("FW_02", "display current-configuration")}
    return [
        # exactly correct, evidence incomplete (1 of 2)
        rca_record(
            "q1",
            Q10_GOLD,
            answered(*Q10_GOLD),
            g1,
            [("FW_02", "display vrrp"), ("FW_02", "ping")],
            TaskUsage(4, 10.0, 1000, 100),
            observability="O1",
            categories=["C2"],
        ),
        # q10: wrong mechanism
        rca_record(
            "q10",
            Q10_GOLD,
            answered(RcaEntry("FW_02", "114.114.114.114", OSPF)),
            g1,
            list(g1),
            TaskUsage(6, 20.0, 3000, None),
            observability="O1",
            categories=["C2", "C3"],
        ),
        # q12: empty answer
        rca_record(
            "q12",
            Q10_GOLD,
            ParsedAnswer("empty", rca=frozenset()),
            {("FW_02", "display vrrp")},
            [],
            TaskUsage(None, 30.0, 500, 50),
            observability="O2",
            categories=["C3"],
        ),
        # exactly correct, complete evidence
        rca_record(
            "q90",
            RCA90_GOLD,
            answered(*RCA90_GOLD),
            {("BoardLeaf-01", "display lldp neighbor")},
            [("BoardLeaf-01", "display lldp neighbor")],
            TaskUsage(2, 5.0, 200, 20),
            observability="O1",
            categories=["C1"],
        ),
        # timeout: no prediction at all
        rca_record(
            "q7",
            Q7_GOLD,
            None,
            {("FW_01", "display security-policy")},
            [],
            TaskUsage(),
            observability="O2",
            categories=["C1", "C4"],
        ),
        TaskRecord(
            "p1",
            "path",
            (P1, P2),
            answered_paths(P1),
            frozenset({("A", "display ip routing-table")}),
            (("A", "display ip routing-table"),),
            TaskUsage(8, 40.0, 5000, 500),
            {"paths": 2},
        ),
        TaskRecord(
            "p2",
            "path",
            (P_ABCD,),
            answered_paths(P_ABCD),
            frozenset({("A", "x"), ("B", "y"), ("C", "z")}),
            (("A", "x"), ("B", "q")),
            TaskUsage(3, 15.0, 800, 80),
            {"paths": 1},
        ),
    ]


def test_aggregate_hand_values() -> None:
    agg = aggregate(make_records(), ScoringConfig(levels=LEVELS))
    rca = agg["rca"]
    assert rca["n_tasks"] == 5
    assert rca["status"] == {"answered": 3, "unparsable": 0, "empty": 1, "missing": 1}
    assert rca["accuracy"] == approx(2 / 5) and rca["n_correct"] == 2
    assert rca["loc_iou"] == approx((1 + 1 + 0 + 1 + 0) / 5)
    assert rca["id_iou"] == approx((1 + 0 + 0 + 1 + 0) / 5)
    assert rca["triplet_iou"] == approx(2 / 5)
    # evidence: C = 1+2+0+1+0 = 4, G = 2+2+1+1+1 = 7, A = 2+2+0+1+0 = 5
    assert rca["evidence"] == {
        "covered": 4,
        "golden": 7,
        "executed": 5,
        "coverage": approx(4 / 7),
        "f1": approx(8 / 12),
    }
    # correct tasks q1 (1/2) and q90 (1/1): one incomplete, pooled 2/3
    assert rca["evidence_on_correct"] == {
        "n_correct": 2,
        "incomplete": 1,
        "incomplete_freq": 0.5,
        "covered": 2,
        "golden": 3,
        "coverage": approx(2 / 3),
    }
    em = rca["entry_match"]
    assert em["n_gold_entries"] == 1 + 1 + 1 + 2 + 2
    assert em["id_exact"] == {"macro": approx(2 / 5), "micro": approx(3 / 7)}
    assert em["id_hierarchical"] == {"macro": approx(2.5 / 5), "micro": approx(3.5 / 7)}
    assert em["loc_exact"] == {"macro": approx(3 / 5), "micro": approx(4 / 7)}
    assert rca["failures"] == {"n_wrong": 3, "F1": 0, "F2": 0, "F3": 0, "F4": 1, "F5": 2}
    path = agg["path"]
    assert path["n_tasks"] == 2 and path["accuracy"] == 0.5
    assert path["loc_iou"] == 1.0
    assert path["rest_iou"] == approx((0.5 + 1.0) / 2)
    assert path["sequence_iou"] == approx((0.5 + 1.0) / 2)
    assert path["micro_edge_iou"] == approx((2 + 3) / (4 + 3))
    assert path["evidence"]["coverage"] == approx((1 + 1) / (1 + 3))
    assert path["evidence"]["f1"] == approx(2 * 2 / ((1 + 3) + (1 + 2)))
    assert path["evidence_on_correct"]["incomplete"] == 1
    eff = agg["efficiency"]["all"]
    assert eff["rounds"] == {"n": 5, "missing": 2, "mean": approx(23 / 5), "median": 4.0}
    assert eff["latency_s"]["n"] == 6 and eff["latency_s"]["median"] == 17.5
    assert eff["total_tokens"] == {
        "n": 5,
        "missing": 2,
        "mean": approx((1100 + 550 + 220 + 5500 + 880) / 5),
        "median": 880.0,
    }
    assert agg["efficiency"]["rca"]["rounds"]["n"] == 3


def test_aggregate_without_taxonomy_leaves_hierarchical_id_empty() -> None:
    agg = aggregate(make_records())
    assert agg["rca"]["entry_match"]["id_hierarchical"] == {"macro": None, "micro": None}


def test_aggregate_empty_family_keeps_schema() -> None:
    agg = aggregate([r for r in make_records() if r.family == "rca"])
    assert agg["path"]["n_tasks"] == 0 and agg["path"]["accuracy"] is None
    assert agg["path"]["micro_edge_iou"] is None


def test_aggregate_rejects_duplicates_and_family_mismatch() -> None:
    recs = make_records()
    with pytest.raises(ValueError):
        aggregate([recs[0], recs[0]])
    with pytest.raises(ValueError):
        TaskRecord("x", "rca", Q10_GOLD, answered_paths(P1))


def test_aggregate_order_independent_and_json_stable() -> None:
    recs = make_records()
    first = json.dumps(aggregate(recs, ScoringConfig(levels=LEVELS)))
    shuffled = recs[:]
    random.Random(3).shuffle(shuffled)
    assert json.dumps(aggregate(shuffled, ScoringConfig(levels=LEVELS))) == first


def test_task_scores_json_and_failure_label() -> None:
    s = score_task(make_records()[1], ScoringConfig(levels=LEVELS))
    out = s.to_json()
    assert out["failure"] == "F4" and out["entry_match"]["id_hierarchical"] == 0.5
    json.dumps(out)


def test_aggregate_json_byte_identical_across_hash_seeds(tmp_path: FsPath) -> None:
    """Frozensets iterate in hash order, which changes with PYTHONHASHSEED: the dump must not."""
    script = textwrap.dedent("""
        import json, sys
        sys.path.insert(0, sys.argv[1])
        from tests.test_metrics import LEVELS, make_records
        from ctbench.scoring.metrics import ScoringConfig, score_task
        from ctbench.scoring.summary import aggregate
        recs = make_records()
        out = {"agg": aggregate(recs, ScoringConfig(levels=LEVELS)),
               "tasks": [score_task(r).to_json() for r in recs],
               "answers": [r.prediction.to_json() for r in recs if r.prediction]}
        print(json.dumps(out))
    """)
    root = str(FsPath(__file__).resolve().parents[1])
    dumps = set()
    for seed in ("1", "2", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        res = subprocess.run(
            [sys.executable, "-c", script, root],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            cwd=root,
        )
        dumps.add(res.stdout)
    assert len(dumps) == 1


def test_summarize_accepts_precomputed_scores() -> None:
    recs = make_records()
    assert summarize([score_task(r) for r in recs]) == aggregate(recs)


def test_task_record_coerces_plain_tuples_and_rejects_paths_as_rca_gold() -> None:
    rec = TaskRecord("t", "rca", frozenset({("FW_02", "8.8.8.8", VRRP)}))  # type: ignore[arg-type]
    assert rec.gold == Q11_GOLD
    with pytest.raises(ValueError):
        TaskRecord("t", "rca", (P1,))  # type: ignore[arg-type]
