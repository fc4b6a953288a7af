"""nft on a lab's Linux devices answers as nftables' own ``nft`` does: whole keywords, long options by
unique prefix (getopt_long), and nft's own error texts.

``tests/fixtures/nft/nft_answers.json`` holds what the real nft (1.0.6) printed for each input, run as
root in a network namespace (``tests/fixtures/nft/record_nft_answers.py`` writes it). The dialect must
accept exactly the inputs nft accepted and print nft's error for the others; where root and nft are
available the inputs are run again and must still give the fixture's answers, so it cannot drift.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctbench.dialects import Dialect, get_dialect
from ctbench.dialects._grammar import Kw, parse_template

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = json.loads((ROOT / "tests/fixtures/nft/nft_answers.json").read_text())
ROWS: list[dict[str, object]] = FIXTURE["answers"]
ACCEPTED = [str(r["input"]) for r in ROWS if r["status"] == 0]
REFUSED = [(str(r["input"]), str(r["output"])) for r in ROWS if r["status"] != 0]
NOT_EMULATED = {
    # nft reads an unknown first word as the start of another statement and words its error by what
    # follows ("unexpected ruleset, expecting string"); the dialect refuses these with its own text.
    "nft l r", "nft lis ruleset", "nft li", "nft List ruleset",
    # getopt_long lists an ambiguous option's possibilities in its option table's order, the dialect
    # alphabetically: the same two, the other way round.
    "nft --s list ruleset",
}  # fmt: skip


@pytest.fixture(scope="module")
def linux() -> Dialect:
    return get_dialect("linux")


def test_whole_word_marker_compiles_to_a_keyword_typed_in_full() -> None:
    assert parse_template("=list") == Kw("list", whole=True)
    assert parse_template("list") == Kw("list")


def test_the_fixture_covers_both_sides() -> None:
    assert len(ACCEPTED) >= 15 and len(REFUSED) >= 20
    assert {"nft --hand list ruleset", "nft --state list ruleset"} <= set(ACCEPTED)  # long options abbreviate
    assert {"nft list rul", "nft list tab"} <= {line for line, _ in REFUSED}  # keywords do not


@pytest.mark.parametrize("line", ACCEPTED)
def test_what_nft_accepts_resolves(linux: Dialect, line: str) -> None:
    res = linux.resolve(line)
    assert res.error is None, linux.render_error(res.error, line, "# ")


def test_abbreviated_long_options_resolve_to_the_whole_option(linux: Dialect) -> None:
    assert linux.resolve("nft --hand list ruleset").canonical == "nft --handle list ruleset"
    assert linux.resolve("nft --state list ruleset").canonical == "nft --stateless list ruleset"
    assert linux.resolve("nft list  ruleset").canonical == "nft list ruleset"
    assert linux.resolve("ip a").canonical == "ip address"  # ip beside it still abbreviates


@pytest.mark.parametrize(("line", "output"), [r for r in REFUSED if r[0] not in NOT_EMULATED])
def test_what_nft_refuses_gets_nfts_own_error(linux: Dialect, line: str, output: str) -> None:
    res = linux.resolve(line)
    assert res.error is not None, f"{line!r} resolved to {res.canonical!r}; nft refuses it"
    assert linux.render_error(res.error, line, "root@H3:~# ") == output


@pytest.mark.parametrize("line", sorted(NOT_EMULATED))
def test_first_word_typos_are_refused_in_the_dialects_words(linux: Dialect, line: str) -> None:
    assert linux.resolve(line).error is not None


def test_the_replay_of_a_recorded_lab_task_answers_nfts_error() -> None:
    from ctbench.replay.engine import ReplayEngine
    from ctbench.replay.observation import Outcome
    from ctbench.store import TaskSet

    ts = TaskSet.open(ROOT / "tasks/labs/recorded")
    output = dict(REFUSED)["nft list rul"]
    with ReplayEngine(ts).open_session("RCA-LAB-014") as session:
        assert session.run("FW1", "nft list rul").text == output
        assert session.run("FW1", "nft list ruleset").outcome == Outcome.RECORDED
        assert session.run("FW1", "nft l r").outcome != Outcome.RECORDED


# ---------------------------------------------------------------------------- against the real nft


@pytest.fixture(scope="module")
def nft_namespace() -> Iterator[str]:
    missing = [what for what, ok in (("root", os.geteuid() == 0), ("nft (nftables)", shutil.which("nft")),
                                     ("ip (iproute2)", shutil.which("ip"))) if not ok]  # fmt: skip
    if missing:
        pytest.skip("re-running nft needs " + ", ".join(missing))
    ns = f"ctb-nft{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        for rule in ("add table inet filter",
                     "add chain inet filter input { type filter hook input priority 0; policy accept; }"):  # fmt: skip
            subprocess.run(["ip", "netns", "exec", ns, "nft", rule], check=True)
        yield ns
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)


def test_the_real_nft_still_answers_as_the_fixture(nft_namespace: str) -> None:
    version = subprocess.run(["nft", "--version"], capture_output=True, text=True, check=False).stdout.strip()
    if version not in str(FIXTURE["source"]):
        pytest.skip(f"the fixture was recorded with another nft ({version} here)")
    differ = []
    for row in ROWS:
        argv = ["ip", "netns", "exec", nft_namespace, *shlex.split(str(row["input"]))]
        real = subprocess.run(argv, capture_output=True, text=True, check=False)
        if (real.returncode, real.stdout + real.stderr) != (row["status"], row["output"]):
            differ.append(f"{row['input']!r}: {real.returncode} {real.stdout + real.stderr!r}")
    assert differ == [], "\n".join(differ)
