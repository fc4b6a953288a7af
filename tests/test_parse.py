"""Answer parsing: tolerant about where the answer is, strict about what an answer line is."""

from __future__ import annotations

import json

import pytest

from ctbench.answer import Hop, RcaEntry, path_line
from ctbench.scoring.parse import ParsedAnswer, parse_paths, parse_rca

VRRP = "global VRRP hot standby redundancy protocol not enabled"
POLICY = "security policy rule does not permit the corresponding user"
PREFIX = "IP prefix list missing the corresponding user source IP address"
SHUT = "shutdown"

RCA_NODES = ["FW_01", "FW_02", "BJHQ_CSR1000V_GW_01", "Core_SW_01", "BoardLeaf-01"]
LABELS = {
    VRRP: VRRP,
    POLICY: POLICY,
    PREFIX: PREFIX,
    SHUT: SHUT,
    "interface shutdown": SHUT,
    "vrrp not enabled": VRRP,
}


def resolve(label: str) -> str | None:
    return LABELS.get(label.strip().lower()) or LABELS.get(label.strip())


def upper_iface(node: str, obj: str) -> str:
    return obj.upper() if obj.lower().startswith("ge") else obj


def rca(text: str | None) -> ParsedAnswer:
    return parse_rca(text, node_names=RCA_NODES, resolve_label=resolve, normalize_object=upper_iface)


# --------------------------------------------------------------------------- RCA


def test_rca_plain_lines_two_entries_rca90() -> None:
    got = rca("BoardLeaf-01;GE1/0/0;shutdown\nBoardLeaf-01;GE1/0/1;shutdown\n")
    assert got.status == "answered"
    assert got.rca == {RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT), RcaEntry("BoardLeaf-01", "GE1/0/1", SHUT)}
    assert got.paths is None and got.invalid_lines == () and got.family == "rca"


def test_rca_whitespace_case_alias_bullets_and_object_normaliser() -> None:
    text = "  - boardleaf-01 ;  ge1/0/0 ; Interface Shutdown\n 2) FW_02; 114.114.114.114 ;vrrp not enabled"
    got = rca(text)
    assert got.rca == {RcaEntry("BoardLeaf-01", "GE1/0/0", SHUT), RcaEntry("FW_02", "114.114.114.114", VRRP)}


def test_rca_duplicates_removed() -> None:
    got = rca("FW_02;8.8.8.8;" + VRRP + "\nfw_02 ; 8.8.8.8 ; VRRP not enabled\n")
    assert got.rca == {RcaEntry("FW_02", "8.8.8.8", VRRP)}


def test_rca_prose_around_answer_is_ignored() -> None:
    text = (
        "I checked the firewall and found the VRRP hot standby disabled.\n"
        "Therefore the root cause is:\n"
        f"FW_02;114.114.114.114;{VRRP}\n"
        "Let me know if you need more."
    )
    got = rca(text)
    assert got.status == "answered"
    assert got.rca == {RcaEntry("FW_02", "114.114.114.114", VRRP)}


def test_rca_result_tag_wins_over_prose_lines() -> None:
    text = (
        f"Candidate considered: FW_01;10.3.10.1;{POLICY}\n<result>\nFW_02;114.114.114.114;{VRRP}\n</result>"
    )
    assert rca(text).rca == {RcaEntry("FW_02", "114.114.114.114", VRRP)}


def test_rca_last_tag_block_is_the_answer_and_answer_tag_accepted() -> None:
    text = (
        f"<answer>FW_01;10.3.10.1;{POLICY}</answer> on reflection\n"
        f"<ANSWER type='rca'>FW_02;8.8.8.8;{VRRP}</ANSWER>"
    )
    assert rca(text).rca == {RcaEntry("FW_02", "8.8.8.8", VRRP)}


def test_rca_bad_tagged_answer_is_not_rescued_from_prose() -> None:
    text = f"I suspect FW_01;10.3.10.1;{POLICY}\n<result>\nFW_02;114.114.114.114\n</result>"
    got = rca(text)
    assert got.status == "unparsable"
    assert got.rca == frozenset()
    assert got.invalid_lines == ("FW_02;114.114.114.114",)


def test_rca_tagged_cause_with_an_unknown_label_is_what_the_agent_said() -> None:
    text = (
        f"I suspect FW_01;10.3.10.1;{POLICY}\n<result>\nFW_02;114.114.114.114;OSPF misconfigured\n</result>"
    )
    got = rca(text)
    assert got.status == "answered"  # a stated cause, not rescued from prose, not dropped
    assert got.rca == {RcaEntry("FW_02", "114.114.114.114", "OSPF misconfigured")}
    assert got.invalid_lines == ()
    assert got.unresolved_lines == (
        ("FW_02;114.114.114.114;OSPF misconfigured", "unknown root-cause label 'OSPF misconfigured'"),
    )


def test_rca_fenced_block_and_final_answer_marker() -> None:
    fenced = f"Commands used:\n```\ndisplay vrrp\n```\nAnswer:\n```text\nFW_02;114.114.114.114;{VRRP}\n```\n"
    assert rca(fenced).rca == {RcaEntry("FW_02", "114.114.114.114", VRRP)}
    marker = f"Reasoning...\n**Final answer:**\n---\n- `FW_02;114.114.114.114;{VRRP}`\n"
    got = rca(marker)
    assert got.rca == {RcaEntry("FW_02", "114.114.114.114", VRRP)} and got.invalid_lines == ()
    same_line = f"Final Answer: FW_02;114.114.114.114;{VRRP}"
    assert rca(same_line).rca == {RcaEntry("FW_02", "114.114.114.114", VRRP)}


def test_rca_unclosed_tag_runs_to_end() -> None:
    assert rca(f"<result>\nFW_02;8.8.8.8;{VRRP}\n").rca == {RcaEntry("FW_02", "8.8.8.8", VRRP)}


def test_rca_invalid_lines_kept_next_to_valid_ones() -> None:
    text = (
        f"<result>\nFW_02;8.8.8.8;{VRRP}\nFW_09;8.8.8.8;{VRRP}\nFW_01;x;cosmic rays\n"
        f"FW_01;a;b;{VRRP}\n</result>"
    )
    got = rca(text)
    assert got.status == "answered"
    # lines with the schema's shape are stated causes, whatever they name; the four-field one is not
    assert got.rca == {
        RcaEntry("FW_02", "8.8.8.8", VRRP),
        RcaEntry("FW_09", "8.8.8.8", VRRP),
        RcaEntry("FW_01", "x", "cosmic rays"),
    }
    assert got.invalid_lines == (f"FW_01;a;b;{VRRP}",)
    assert got.unresolved_lines == (
        (f"FW_09;8.8.8.8;{VRRP}", "unknown node 'FW_09'"),
        ("FW_01;x;cosmic rays", "unknown root-cause label 'cosmic rays'"),
    )


def test_rca_trailing_separator_and_fullwidth_separator_tolerated() -> None:
    got = rca(f"FW_02;8.8.8.8;{VRRP};\nFW_01；10.3.10.1；{POLICY}")
    assert got.rca == {RcaEntry("FW_02", "8.8.8.8", VRRP), RcaEntry("FW_01", "10.3.10.1", POLICY)}


def test_rca_object_normaliser_value_error_keeps_the_stated_object() -> None:
    def strict(node: str, obj: str) -> str:
        if obj == "bogus":
            raise ValueError(f"no interface {obj} on {node}")
        return obj

    got = parse_rca(
        f"FW_02;bogus;{VRRP}", node_names=RCA_NODES, resolve_label=resolve, normalize_object=strict
    )
    assert got.status == "answered" and got.rca == {RcaEntry("FW_02", "bogus", VRRP)}
    assert got.unresolved_lines == ((f"FW_02;bogus;{VRRP}", "object 'bogus': no interface bogus on FW_02"),)


@pytest.mark.parametrize("text", [None, "", "   \n\t", "<result></result>", "<result>\n```\n```\n</result>"])
def test_rca_empty_answer_q12(text: str | None) -> None:
    got = rca(text)
    assert got.status == "empty" and got.rca == frozenset() and got.invalid_lines == ()


def test_rca_prose_only_is_unparsable_q12() -> None:
    got = rca("I investigated FW_02 and the VRRP status looks wrong, but I am not sure.")
    assert got.status == "unparsable" and got.rca == frozenset() and got.invalid_lines == ()


def test_rca_tag_with_prose_only_is_unparsable_with_invalid_lines() -> None:
    got = rca("<result>The VRRP on FW_02 is disabled</result>")
    assert got.status == "unparsable"
    assert got.invalid_lines == ("The VRRP on FW_02 is disabled",)


def test_rca_case_only_collision_needs_exact_spelling() -> None:
    got = parse_rca("fw_a;x;shutdown\nFW_a;y;shutdown", node_names=["FW_A", "fw_a"], resolve_label=resolve)
    assert got.rca == {RcaEntry("fw_a", "x", SHUT), RcaEntry("FW_a", "y", SHUT)}
    assert got.unresolved_lines == (("FW_a;y;shutdown", "unknown node 'FW_a'"),)


# --------------------------------------------------------------------------- paths

PATH_NODES = ["SZ_Server_Cluster3", "SZ_Core", "SZ_Core_01", "PE1", "PE_2", "BJ_GW", "SH_Agg", "SH_SAL_PC01"]


def norm_iface(node: str, iface: str) -> str:
    return iface.replace("GigabitEthernet", "GE").replace("gigabitethernet", "GE")


def paths(text: str | None) -> ParsedAnswer:
    return parse_paths(text, node_names=PATH_NODES, normalize_interface=norm_iface)


def test_path_longest_known_prefix_split_and_normaliser() -> None:
    got = paths("SZ_Server_Cluster3_eth0 -> SZ_Core_01_GigabitEthernet1/0/1 -> SZ_Core_GE0/0/2 -> PE_2")
    assert got.status == "answered"
    assert got.paths == (
        (
            Hop("SZ_Server_Cluster3", "eth0"),
            Hop("SZ_Core_01", "GE1/0/1"),
            Hop("SZ_Core", "GE0/0/2"),
            Hop("PE_2", None),
        ),
    )
    assert got.rca is None and got.family == "path"


def test_path_unicode_arrow_case_insensitive_nodes_and_no_spaces() -> None:
    got = paths("sz_core_GE1/0/1→pe1_GE2/0/0->sh_sal_pc01")
    assert got.paths == ((Hop("SZ_Core", "GE1/0/1"), Hop("PE1", "GE2/0/0"), Hop("SH_SAL_PC01", None)),)


def test_path_node_without_egress_is_a_hop_without_interface() -> None:
    got = paths("SZ_Core_01 -> PE1_GE0/0/1 -> BJ_GW")
    assert got.paths == ((Hop("SZ_Core_01", None), Hop("PE1", "GE0/0/1"), Hop("BJ_GW", None)),)


def test_path_duplicates_removed_order_kept() -> None:
    text = "PE1_GE1 -> BJ_GW\nSZ_Core_GE2 -> PE_2\npe1_GE1 -> bj_gw\n"
    got = paths(text)
    assert got.paths == ((Hop("PE1", "GE1"), Hop("BJ_GW")), (Hop("SZ_Core", "GE2"), Hop("PE_2")))


@pytest.mark.parametrize(
    "bad",
    [
        "PE1_GE1 -> -> BJ_GW",  # empty token
        "PE1_GE1",  # one hop is no path
        "-> BJ_GW",
    ],
)
def test_path_invalid_lines(bad: str) -> None:
    got = paths(f"<result>\n{bad}\n</result>")
    assert got.status == "unparsable" and got.paths == () and got.invalid_lines == (bad,)


@pytest.mark.parametrize(
    ("stated", "hops", "problem"),
    [
        ("Unknown_GE1 -> PE1", (Hop("Unknown_GE1"), Hop("PE1")), "unknown hop 'Unknown_GE1'"),
        ("PE1_GE1 -> Nowhere", (Hop("PE1", "GE1"), Hop("Nowhere")), "unknown node 'Nowhere'"),
        (
            "PE1_GE1 -> BJ_GW_GE2",
            (Hop("PE1", "GE1"), Hop("BJ_GW_GE2")),
            "unknown node 'BJ_GW_GE2'",
        ),  # terminal: a node
        (
            "PE1_GE1 -> X_1 -> Y_2 -> BJ_GW",
            (Hop("PE1", "GE1"), Hop("X_1"), Hop("Y_2"), Hop("BJ_GW")),
            "unknown hop 'X_1'; unknown hop 'Y_2'",
        ),
    ],
)
def test_declared_paths_through_unknown_hops_are_what_the_agent_said(
    stated: str, hops: tuple[Hop, ...], problem: str
) -> None:
    got = paths(f"<result>\n{stated}\nPE1_GE1 -> BJ_GW\n</result>")
    assert got.status == "answered" and got.paths == (hops, (Hop("PE1", "GE1"), Hop("BJ_GW")))
    assert got.unresolved_lines == ((stated, problem),) and got.invalid_lines == ()


def test_undeclared_arrows_between_unknown_ends_are_prose() -> None:
    got = paths("I guess packets -> somewhere\nPE1_GE1 -> X_9 -> BJ_GW\n")
    assert got.paths == ((Hop("PE1", "GE1"), Hop("X_9"), Hop("BJ_GW")),)
    assert got.invalid_lines == ("I guess packets -> somewhere",)


def test_path_prose_lines_without_arrow_are_ignored_outside_tags() -> None:
    got = paths("The traffic goes through the core.\nPE1_GE1 -> BJ_GW\nDone.")
    assert got.paths == ((Hop("PE1", "GE1"), Hop("BJ_GW")),) and got.invalid_lines == ()


def test_path_twelve_hops_roundtrip_pr100() -> None:
    nodes = [f"N_{i:02d}" for i in range(12)]
    gold = tuple(Hop(n, f"GE1/0/{i}") for i, n in enumerate(nodes[:-1])) + (Hop(nodes[-1]),)
    got = parse_paths(path_line(gold), node_names=nodes, normalize_interface=lambda n, i: i)
    assert got.paths == (gold,)
    assert len(got.paths[0]) == 12


# --------------------------------------------------------------------------- JSON


def test_json_roundtrip_is_deterministic() -> None:
    a = rca(f"FW_02;8.8.8.8;{VRRP}\nFW_01;10.3.10.1;{POLICY}\nFW_09;x;{VRRP}")
    dumped = json.dumps(a.to_json())
    assert ParsedAnswer.from_json(json.loads(dumped)) == a
    b = rca(f"FW_01;10.3.10.1;{POLICY}\nFW_02;8.8.8.8;{VRRP}\nFW_09;x;{VRRP}")
    assert [e["node"] for e in a.to_json()["rca"]] == [e["node"] for e in b.to_json()["rca"]]
    p = paths("SZ_Core_01 -> PE1_GE0/0/1 -> BJ_GW")
    assert ParsedAnswer.from_json(json.loads(json.dumps(p.to_json()))) == p
    e = rca("")
    assert ParsedAnswer.from_json(e.to_json()) == e


def test_parsed_answer_invariants() -> None:
    with pytest.raises(ValueError):
        ParsedAnswer("answered", rca=frozenset())
    with pytest.raises(ValueError):
        ParsedAnswer("empty")
    with pytest.raises(ValueError):
        ParsedAnswer("bogus", rca=frozenset())  # type: ignore[arg-type]
