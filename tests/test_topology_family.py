"""The topology restoration family: parsing ``NodeA(port)->NodeB(port)`` lines and scoring link sets.

Gold: the bundled campus-lab network's own cabling, ports through its real dialects; answers are
hand-made and their scores computed by hand in the comments.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ctbench.scoring.families import TaskFamily, TopologyFamily, families
from ctbench.scoring.topology import gold_problems, link, network_links, parse_links, score_links
from ctbench.store import TaskSet
from tests.conftest import REPO


@pytest.fixture(scope="module")
def campus() -> tuple[frozenset, list[str], object]:
    ts = TaskSet(REPO / "tasks")
    net = ts.network("campus-lab")
    devices = net.device_map()
    norm = ts.vendors.normalizer(devices)
    return network_links(net.links, norm), list(devices), norm


def _parse(text: str, campus: tuple) -> object:
    _, names, norm = campus
    return parse_links(text, node_names=names, normalize_port=norm)


def test_the_gold_written_out_scores_exact(campus: tuple) -> None:
    gold, names, _ = campus
    assert len(gold) >= 6
    text = "\n".join(f"{a}({ap})->{b}({bp})" for (a, ap), (b, bp) in sorted(gold))
    parsed = _parse(f"<answer>\n{text}\n</answer>", campus)
    assert parsed.status == "answered" and parsed.schema_violations == ()
    s = score_links(gold, parsed)
    assert (s.exact, s.link_iou, s.node_pair_iou) == (True, 1.0, 1.0)


def test_direction_case_and_short_port_names_do_not_matter(campus: tuple) -> None:
    # GE0/0/24 is the Huawei short name of GigabitEthernet0/0/24; fw_01 is FW_01
    parsed = _parse("Final answer:\nfw_01(GigabitEthernet1/0/1) -> CORE_SW_01(GE0/0/24)", campus)
    assert parsed.links == {link(("CORE_SW_01", "GigabitEthernet0/0/24"), ("FW_01", "GigabitEthernet1/0/1"))}


def test_hand_made_wrong_answers_score_as_computed_by_hand(campus: tuple) -> None:
    gold, _, _ = campus
    n = len(gold)
    ordered = sorted(gold)
    half = ordered[: n // 2]
    text = "\n".join(f"{a}({ap})->{b}({bp})" for (a, ap), (b, bp) in half)
    s = score_links(gold, _parse(text, campus))
    # half the links, nothing wrong: IoU = (n//2) / n
    assert not s.exact and s.link_iou == pytest.approx((n // 2) / n)
    # the right neighbours through a wrong port: no link matches (IoU 0), the node pair does (1/n)
    (a, ap), (b, bp) = ordered[0]
    wrong_port = f"{a}({ap})->{b}(eth9)"
    s = score_links(gold, _parse(wrong_port, campus))
    assert s.link_iou == 0.0 and s.node_pair_iou == pytest.approx(1 / n)
    # every gold link plus one invented: IoU n/(n+1), not exact
    extra = "\n".join(f"{a}({ap})->{b}({bp})" for (a, ap), (b, bp) in ordered) + "\nPC_01(eth1)->SRV_01(eth1)"
    s = score_links(gold, _parse(extra, campus))
    assert not s.exact and s.link_iou == pytest.approx(n / (n + 1))


def test_schema_violations_and_empty_answers(campus: tuple) -> None:
    gold, _, _ = campus
    p = _parse("<answer>\nNOPE_01(eth0)->PC_01(eth0)\nPC_01 eth0 ACC_SW_01\n</answer>", campus)
    assert p.status == "answered" and p.unresolved_lines[0][1] == "unknown node 'NOPE_01'"
    assert p.schema_violations == ("NOPE_01(eth0)->PC_01(eth0)", "PC_01 eth0 ACC_SW_01")
    assert score_links(gold, p).link_iou == 0.0
    loose = _parse("I looked around.\nPC_01(eth0)->ACC_SW_01(GigabitEthernet1/0/1)\nthen stopped", campus)
    assert loose.schema_violations == () and score_links(gold, loose).link_iou == pytest.approx(1 / len(gold))
    assert (
        _parse("", campus).status == "empty"
        and _parse("<answer>nothing</answer>", campus).status == "unparsable"
    )
    assert score_links(gold, None).exact is False


def test_gold_check_finds_unknown_devices_and_doubled_ports(campus: tuple) -> None:
    gold, names, _ = campus
    devices = dict.fromkeys(names)
    assert gold_problems(gold, devices) == []
    bad = {*gold, link(("PC_01", "eth0"), ("GHOST", "x"))}
    problems = gold_problems(bad, devices)
    assert any("link end 'GHOST' is not in the network" in p for p in problems), problems
    assert any("PC_01(eth0) already holds link" in p for p in problems), problems
    loop = link(("PC_01", "eth0"), ("PC_01", "eth0"))
    assert gold_problems({loop}, devices) == ["PC_01(eth0)->PC_01(eth0): a link joins a port to itself"]


def test_families_are_a_registry_with_three_built_ins() -> None:
    found = families()
    assert list(found)[:3] == ["rca", "path", "topology"]
    assert all(isinstance(f, TaskFamily) for f in found.values())
    topo = found["topology"]
    assert isinstance(topo, TopologyFamily) and topo.columns[0] == "exact"
    assert "NodeA(port)->NodeB(port)" in topo.answer_format


def test_rca_and_path_families_score_as_the_metrics_do(tmp_path: Path) -> None:
    ts = TaskSet(REPO / "tasks")
    from ctbench.scoring.judge import Judges

    judges = Judges(ts)
    fam = families()
    for task_id in ("RCA-001", "PATH-001"):
        judge = judges.judge(task_id)
        text = "\n".join(ts.load_hidden(ts.ref(task_id)).gold_answer_lines(ts.ref(task_id).family))
        f = fam[judge.family]
        parsed = f.parse(
            text,
            node_names=judge.node_names,
            resolve_label=ts.taxonomy.resolve,
            normalize=judge.reader.normalize,
        )
        assert f.score(judge.gold, parsed)["exact"] is True
        assert f.gold_problems(judge.gold, judge.devices) == []
