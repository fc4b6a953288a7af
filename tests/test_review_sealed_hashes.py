"""Sealed gold keeps its hashes unguessable (issue 26): nothing committed lets anyone brute-force the gold.

A review record keeps, in plain text, the hash of each part of the task a verdict was given on
(``criteria.*.basis``, ``comparison.hashes``). RCA-101's gold is one line, ``CORE_SW_01;
GigabitEthernet0/0/24;shutdown``: a node of the public network, an interface named in the public
recordings, a label of the public taxonomy. The adversary here reads every git object of a fresh
clone of main after the merge (records, commit messages, trailers, trees) and the pull-request
description, builds every answer of that shape from the public material, hashes each the way a
part hash is taken (canonical JSON, sha256, written independently of ctbench's own code), and
looks the hex up. The team of tests/team_support.py takes RCA-101 through signed submit, assign,
blind, unseal, reveal with all-agree, pull request and merge on a bare remote.

``protection-off``: the set is sealed as before keyed hashes (no ``hash_key`` inside the sealed
gold, :func:`ctbench.sealing.with_hash_key` doing nothing): the adversary finds the gold among
its guesses. With the key (written inside the ciphertext) the hashes are ``hmac-sha256:`` and
nothing matches.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyrage")

from ctbench import sealing  # noqa: E402
from ctbench.approval.hashes import KEYED, content_hashes, stale_criteria  # noqa: E402
from ctbench.approval.records import load_records  # noqa: E402
from ctbench.store import TaskSet  # noqa: E402
from ctbench.yamlio import load_fast  # noqa: E402
from tests.review_support import git  # noqa: E402
from tests.team_support import Keys, all_objects, make_keys, make_team  # noqa: E402

pytestmark = pytest.mark.xdist_group("review-team")

GOLD = {"rca": [{"node": "CORE_SW_01", "object": "GigabitEthernet0/0/24", "label": "shutdown"}]}
_IFACE = re.compile(rb"\b(?:[A-Z][A-Za-z-]*Ethernet|Vlanif|Eth-Trunk|LoopBack|Loopback)\s?[\d/.:]+")


def _sha(value: Any) -> str:
    """What a plain part hash of ``value`` is, as anyone can read it off the public source."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def candidates(tasks: Path) -> list[dict[str, Any]]:
    """Every one-line RCA answer built from public material: nodes of the network, interfaces named
    in the visible recordings, labels (and their aliases) of the taxonomy."""
    task = load_fast(tasks / "rca" / "RCA-101" / "task.yaml")
    net = load_fast(tasks / "networks" / f"{task['network']}.yaml")
    nodes = sorted({str(d["name"]) for d in net["devices"]} | set(task["accessible"]))
    ifaces = {str(i) for d in net["devices"] for i in d.get("interfaces") or []}
    for rec in (tasks / "rca" / "RCA-101" / "recordings").rglob("*.txt"):
        ifaces |= {m.decode().replace(" ", "") for m in _IFACE.findall(rec.read_bytes())}
    ifaces |= set(re.findall(r"GigabitEthernet[\d/]+", " ".join(r["command"] for r in task["recordings"])))
    labels: set[str] = set()
    for entry in load_fast(tasks / "taxonomy.yaml").get("labels", []) or []:
        labels.add(str(entry["label"]))
    assert len(nodes) >= 5 and len(ifaces) >= 5 and len(labels) >= 5, (nodes, ifaces, labels)
    return [
        {"rca": [{"node": n, "object": o, "label": lab}]}
        for n in nodes
        for o in sorted(ifaces)
        for lab in sorted(labels)
    ]


def brute_force(haystack: bytes, guesses: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The guesses whose plain hash appears anywhere in ``haystack``."""
    return [g for g in guesses if _sha(g).encode() in haystack]


@pytest.fixture(scope="module")
def team_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Keys]:
    return make_keys(tmp_path_factory.mktemp("hash-keys"))


def test_the_adversary_recognises_a_plain_part_hash(tmp_path: Path) -> None:
    """The guess list holds the gold, and a plain hash of it is what the adversary looks for."""
    from tests.review_support import FIXTURE

    guesses = candidates(FIXTURE)
    assert GOLD in guesses and len(guesses) > 500
    assert brute_force(b"gold: sha256:" + _sha(GOLD).encode(), guesses) == [GOLD]


@pytest.mark.parametrize("protection", ["on", "protection-off"])
def test_nothing_committed_lets_anyone_brute_force_sealed_gold(
    tmp_path: Path, team_keys: dict[str, Keys], protection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if protection == "protection-off":  # sealed as before this change: no key inside the ciphertext
        monkeypatch.setattr(sealing, "with_hash_key", lambda plain, _where: plain)
    team = make_team(tmp_path / "t", team_keys, sealed=True)
    team.review("alice", "submit", "RCA-101")
    team.review("maint", "assign", "RCA-101", "--reviewer", "bob", "--apply")
    team.blind("bob")
    team.review("alice", "unseal", "RCA-101", "--for", "bob")
    out = team.review("bob", "reveal", "RCA-101", "--all-agree")
    assert "exact match: yes" in out
    pr = team.root / "pr.md"
    team.review("bob", "pr", "RCA-101", "--out", str(pr), "--no-push")
    team.review("maint", "merge", "RCA-101")
    fresh = team.root / "fresh"
    git("clone", "-q", str(team.remote), str(fresh), cwd=team.root)
    committed = all_objects(fresh) + git("log", "--all", "--format=%B", cwd=fresh).encode() + pr.read_bytes()

    guesses = candidates(fresh / "tasks")
    found = brute_force(committed, guesses)
    records = load_records(fresh / "tasks" / "rca" / "RCA-101")
    gold_hash = records[-1].criteria[next(iter(records[-1].criteria))].basis.get("gold") or ""
    if protection == "protection-off":
        assert found == [GOLD], "the adversary should recover the gold from a plain sha256"
        assert gold_hash.startswith("sha256:")
        out = team.review("maint", "audit", "RCA-101")  # the approval stands, and the audit says so
        assert "RCA-101 (approved): ok [blind by seal; signatures verified]" in out
        assert "note: round 1: the record's hashes of the sealed gold answer, golden actions, metadata" in out
        return
    assert found == [], f"the gold was recovered from committed hashes: {found}"
    assert gold_hash.startswith(KEYED)
    cmp_ = records[-1].comparison
    assert cmp_ is not None and (cmp_.hashes.gold or "").startswith(KEYED)
    # the keyed hashes still do their job: the audit and the run gate see an unchanged, approved task
    out = team.review("maint", "audit", "RCA-101")
    assert "RCA-101 (approved): ok [blind by seal; signatures verified]" in out
    assert "are plain sha256" not in out
    ts = TaskSet.open(team.tasks("maint"), identity=team.keys["maint"].age_identity)
    from ctbench.approval.check import approval_state

    assert approval_state(ts, "RCA-101") == (True, None)


def test_a_key_added_later_reopens_nothing_and_a_changed_gold_reopens_its_criteria(tmp_path: Path) -> None:
    """Hashes recorded before the key still match the same content; a changed gold never does."""
    from ctbench.approval.hashes import disk_reader
    from tests.review_support import FIXTURE

    folder = FIXTURE / "rca" / "RCA-101"
    before = content_hashes(disk_reader(folder))
    assert (before.gold or "").startswith("sha256:")
    keyed = tmp_path / "RCA-101"
    shutil.copytree(folder, keyed)
    (keyed / "hidden.yaml").write_bytes(sealing.with_hash_key((folder / "hidden.yaml").read_bytes(), "x"))
    assert b"hash_key: " in (keyed / "hidden.yaml").read_bytes()
    once = (keyed / "hidden.yaml").read_bytes()
    assert sealing.with_hash_key(once, "x") == once  # an existing key is never replaced
    now = content_hashes(disk_reader(keyed))
    assert (now.gold or "").startswith(KEYED) and now.gold != before.gold
    assert now.statement == before.statement  # visible parts are never keyed
    old_basis = before.subset(("statement", "recordings", "gold"))
    assert stale_criteria(lambda _c: old_basis, now) == {}
    changed = (keyed / "hidden.yaml").read_text().replace("label: shutdown", "label: wrong vlan")
    (keyed / "hidden.yaml").write_text(changed)
    after = content_hashes(disk_reader(keyed))
    stale = stale_criteria(lambda _c: old_basis, after)
    assert stale and all(parts == ["gold"] for parts in stale.values()), stale
    # a keyed basis never matches a different key: "never edit it" is enforced by the reopen
    assert not after.same("gold", now.gold)
