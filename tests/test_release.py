"""``ctb-author release`` / ``import-release`` on a task set approved through the real review workflow.

The review world (tests/review_support.py: a bare remote, drafts by alice and carol) is taken through
``ctb-review submit / blind / reveal`` so two tasks are approved and one stays a draft; the release is
then made by the real console script and read back by the real ``datasets`` library three ways.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctbench.approval.gate import content_hash
from ctbench.releases import load_manifest, manifest_hash, sha256_file
from ctbench.store import TaskSet
from ctbench.yamlio import load_fast
from tests.conftest import run_cli
from tests.release_support import author_cli, check_rows, gold_strings, readable_text
from tests.review_support import RCA_ANSWER, RCA_COMMANDS, REPO, World, make_world, ok

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

pytestmark = pytest.mark.xdist_group("release")

PATH_ANSWER = (
    "PC_01_eth0 -> ACC_SW_01_GigabitEthernet1/0/48 -> CORE_SW_01_GigabitEthernet0/0/24 -> "
    "FW_01_GigabitEthernet1/0/2 -> GW_01_GigabitEthernet2 -> PE_01_ge-0/0/2 -> SRV_01\n"
)


class Released:
    def __init__(self, world: World, out: Path, gold: Path, summary: dict[str, Any]) -> None:
        self.world, self.out, self.gold, self.summary = world, out, gold, summary


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Released:
    root = tmp_path_factory.mktemp("release")
    world = make_world(root / "w")
    t = world.tasks
    answers = root / "answers"
    answers.mkdir()
    (answers / "rca.txt").write_text(RCA_ANSWER)
    (answers / "cmds.txt").write_text(RCA_COMMANDS)
    (answers / "path.txt").write_text(PATH_ANSWER)
    ok("submit", "RCA-101", "--as", "alice", tasks=t)
    ok("blind", "RCA-101", "--as", "bob", "--answer", str(answers / "rca.txt"), "--commands",
       str(answers / "cmds.txt"), tasks=t)  # fmt: skip
    ok("reveal", "RCA-101", "--as", "bob", "--all-agree", tasks=t)
    ok("merge", "RCA-101", "--as", "maint", tasks=t)  # each review is a branch: merged into main
    ok("submit", "PATH-101", "--as", "carol", tasks=t)
    ok("blind", "PATH-101", "--as", "dave", "--answer", str(answers / "path.txt"), tasks=t)
    ok("reveal", "PATH-101", "--as", "dave", "--all-agree", tasks=t)
    ok("merge", "PATH-101", "--as", "maint", tasks=t)
    out, gold = root / "release", root / "release-gold"
    proc = author_cli(
        "release", "1.0.0", "--tasks", str(t), "--out", str(out), "--gold-out", str(gold),
        "--license", "cc-by-4.0", "--json", cwd=root,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return Released(world, out, gold, json.loads(proc.stdout))


# --------------------------------------------------------------------------- what goes in


def test_only_retained_tasks_are_released_and_the_rest_listed(released: Released) -> None:
    assert released.summary["tasks"] == ["PATH-101", "RCA-101"]
    assert released.summary["excluded"] == [{"id": "RCA-102", "reason": "not approved (status draft)"}]
    m = load_manifest(released.out)
    assert m.version == "1.0.0" and m.license == "cc-by-4.0" and m.canary.startswith("CTBENCH CANARY")
    assert m.counts["by_family"] == {"rca": 1, "path": 1, "topology": 0}
    assert m.counts["by_stratum"]["rca"]["observability"] == {"O1": 1}
    assert m.review["reviewed"] == 2 and m.review["reviewers"] == ["bob", "dave"]
    assert m.review["blind_exact"] == "2/2" and m.review["approved_first_round"] == 2
    ts = TaskSet.open(released.world.tasks)
    for t in m.tasks:
        assert t.content_hash == content_hash(ts.ref(t.id).path, ts)
        assert "before the gold was revealed" in t.blindness
    for rel, digest in m.files.items():
        assert sha256_file(released.out / rel) == digest
    assert m.task_set["commit"] and len(m.task_set["commit"]) == 40


def test_the_card_declares_the_public_configs_gating_and_canary(released: Released) -> None:
    text = (released.out / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    header = load_fast(Path("README.md"), text.split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["tasks", "networks"]
    for c in header["configs"]:
        assert c["data_files"] == [{"split": "test", "path": f"{c['config_name']}/test-*.parquet"}]
    assert header["license"] == "cc-by-4.0"
    assert header["extra_gated_prompt"] and "checkbox" in header["extra_gated_fields"].values()
    assert header["canary"] == load_manifest(released.out).canary
    assert "exclude every document containing this string from training" in text


def test_no_gold_anywhere_under_the_public_folder(released: Released) -> None:
    ts = TaskSet.open(released.world.tasks)
    secrets = gold_strings(ts, ["RCA-101", "PATH-101"])
    public = readable_text(released.out)
    leaked = [s for s in secrets if s in public]
    assert leaked == []
    # the scan finds gold where it is, so it can fail: the explanations in the gold folder, the answer
    # lines in the review records (which quote the gold, and so stay out of a release)
    private = readable_text(released.gold)
    assert all(s in private for s in secrets if ";" not in s and "->" not in s)
    records = readable_text(released.world.tasks / "rca" / "RCA-101" / "reviews")
    assert "CORE_SW_01;GigabitEthernet0/0/24;shutdown" in records
    assert not list(released.out.rglob("hidden.yaml*")) and not list(released.out.rglob("reviews"))


# --------------------------------------------------------------------------- datasets loads it


def test_datasets_loads_it_three_ways_byte_exact(released: Released, tmp_path: Path) -> None:
    ts = TaskSet.open(released.world.tasks)
    cache = str(tmp_path / "hf")
    out = released.out
    by_json = datasets.load_dataset(
        "json", data_files={"test": str(out / "json" / "tasks.jsonl")}, split="test", cache_dir=cache
    )
    by_parquet = datasets.load_dataset(
        "parquet", data_files={"test": str(out / "tasks" / "*.parquet")}, split="test", cache_dir=cache
    )
    by_folder = datasets.load_dataset(str(out), "tasks", split="test", cache_dir=cache)
    networks = datasets.load_dataset(str(out), "networks", split="test", cache_dir=cache)
    n_rec = load_manifest(out).counts["recordings"]
    for ds, b64 in ((by_json, True), (by_parquet, False), (by_folder, False)):
        assert ds.num_rows == 2
        assert check_rows(list(ds), ts, b64=b64) == n_rec
    assert by_folder.features["recordings"].feature["output_bytes"].dtype == "binary"
    assert [r["name"] for r in networks] == ["campus-lab"]
    assert {d["name"] for d in networks[0]["devices"]} >= {"CORE_SW_01", "FW_01"}


# --------------------------------------------------------------------------- and back


def test_import_release_gives_the_published_content_hashes(released: Released, tmp_path: Path) -> None:
    back = tmp_path / "back"
    proc = author_cli(
        "import-release", str(released.out), "--gold", str(released.gold), "--out", str(back), "--json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    ts = TaskSet.open(back)
    m = load_manifest(back)
    assert manifest_hash(back) == manifest_hash(released.out)
    assert sorted(r.id for r in ts.refs()) == ["PATH-101", "RCA-101"]
    for t in m.tasks:
        assert content_hash(ts.ref(t.id).path, ts) == t.content_hash

    # a recording changed after the release is refused, and nothing is written
    tampered = tmp_path / "tampered"
    shutil.copytree(released.out, tampered)
    (tampered / "json" / "tasks.jsonl").write_text("{}\n")
    proc = author_cli("import-release", str(tampered), "--out", str(tmp_path / "t2"), cwd=tmp_path)
    assert proc.returncode != 0 and "json/tasks.jsonl" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "t2").exists()


def test_a_run_on_the_release_names_it(released: Released, tmp_path: Path) -> None:
    back, bare = tmp_path / "back", tmp_path / "bare"
    assert author_cli("import-release", str(released.out), "--gold", str(released.gold), "--out", str(back),
                      cwd=tmp_path).returncode == 0  # fmt: skip
    cache = {"CTBENCH_RELEASE_DIR": str(tmp_path / "cache")}
    # the release folder itself, its gold beside; no --allow-unreviewed: the release's content hashes
    # stand in for the review records it leaves out
    for tasks, extra, run_dir in (
        (released.out, ("--gold", str(released.gold)), tmp_path / "run"),
        (back, (), tmp_path / "run-imported"),
    ):
        proc = run_cli("evaluate", "run", "--agent", "oracle", "--tasks", str(tasks), *extra, "--out",
                       str(run_dir), cwd=tmp_path, timeout=300, env=cache)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        config = load_fast(run_dir / "run.yaml")
        assert sorted(config["tasks"]) == ["PATH-101", "RCA-101"]
        assert config["task_set"]["release"] == "1.0.0"
        assert config["task_set"]["release_hash"] == manifest_hash(released.out)
        assert config["unreviewed"] == [] and config["skipped"] == []
        assert json.loads((run_dir / "scores.json").read_text())["summary"]["rca"]["accuracy"] == 1.0
        report = run_cli("evaluate", "report", str(run_dir), "--format", "md", cwd=tmp_path, timeout=300)
        assert report.returncode == 0, report.stderr
        assert "release 1.0.0" in report.stdout
    # the cached task set is checked on every use: tampered, it is refused, not run
    (cached,) = (tmp_path / "cache").iterdir()
    (cached / "rca" / "RCA-101" / "hidden.yaml").write_text("id: RCA-101\nanswer: {rca: []}\n")
    proc = run_cli("evaluate", "run", "--agent", "oracle", "--tasks", str(released.out), "--gold",
                   str(released.gold), "--out", str(tmp_path / "r4"), cwd=tmp_path, env=cache)  # fmt: skip
    assert proc.returncode != 0 and "RCA-101: content hash" in proc.stderr and "Traceback" not in proc.stderr

    # a task edited after the release is no longer the released task: the gate says so
    task_file = back / "rca" / "RCA-101" / "task.yaml"
    task_file.write_text(task_file.read_text().replace("Find the", "Please find the"))
    proc = run_cli("evaluate", "run", "--agent", "oracle", "--tasks", str(back), "--out", str(tmp_path / "r2"),
                   cwd=tmp_path, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skipped = load_fast(tmp_path / "r2" / "run.yaml")["skipped"]
    assert skipped == [{"task_id": "RCA-101", "reason": "changed since its release: its content hash differs "
                        "from RELEASE.yaml"}]  # fmt: skip

    # without the gold the tasks cannot be run: the gate says what is missing
    assert author_cli("import-release", str(released.out), "--out", str(bare), cwd=tmp_path).returncode == 0
    proc = run_cli("evaluate", "run", "--agent", "null", "--tasks", str(bare), "--out", str(tmp_path / "r3"),
                   cwd=tmp_path, timeout=300)  # fmt: skip
    assert proc.returncode != 0 and "hidden.yaml is missing" in proc.stderr


def test_gold_inside_the_public_folder_is_refused(released: Released, tmp_path: Path) -> None:
    out = tmp_path / "pub"
    proc = author_cli(
        "release", "1.0.1", "--tasks", str(released.world.tasks), "--out", str(out),
        "--gold-out", str(out / "gold"), "--license", "cc-by-4.0", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2 and "overlap" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_the_bundled_set_with_the_override_all_355_recordings(tmp_path: Path) -> None:
    """The bundled seed tasks were never reviewed: --allow-unreviewed releases them and says so."""
    out, gold = tmp_path / "rel", tmp_path / "gold"
    proc = author_cli(
        "release", "0.1.0-seed", "--tasks", str(REPO / "tasks"), "--out", str(out), "--gold-out", str(gold),
        "--license", "cc-by-4.0", "--allow-unreviewed", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    m = load_manifest(out)
    assert len(m.tasks) == 34 and m.counts["recordings"] == 359 and len(m.review["unreviewed"]) == 34
    assert "Not reviewed" in (out / "README.md").read_text(encoding="utf-8")
    ds = datasets.load_dataset(str(out), "tasks", split="test", cache_dir=str(tmp_path / "hf"))
    assert ds.num_rows == 34
    assert check_rows(list(ds), TaskSet.open(REPO / "tasks")) == 359
    # an unreviewed release vouches for nothing: its tasks still need --allow-unreviewed to run
    back = tmp_path / "back"
    assert (
        author_cli(
            "import-release", str(out), "--gold", str(gold), "--out", str(back), cwd=tmp_path
        ).returncode
        == 0
    )
    from ctbench.approval.gate import apply_gate

    ts = TaskSet.open(back)
    gate = apply_gate(ts, [(r, ts.load_task(r)) for r in ts.refs()])
    assert gate.admitted == [] and len(gate.skipped) == 34


def test_bytes_that_are_not_utf8_travel_in_output_bytes(task_set: Path, tmp_path: Path) -> None:
    ts = TaskSet.open(task_set)
    ref = ts.ref("RCA-001")
    rec = ts.load_task(ref).recordings[0]
    raw = b"\xff\xfe Huawei \xe9t\xe9\r\n  trailing  \r\n\x1b[0m<CORE>"
    (ref.path / rec.file).write_bytes(raw)
    out, gold = tmp_path / "rel", tmp_path / "gold"
    proc = author_cli(
        "release", "0.0.1", "--tasks", str(task_set), "--out", str(out), "--gold-out", str(gold),
        "--license", "cc-by-4.0", "--allow-unreviewed", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    cache = str(tmp_path / "hf")
    by_folder = datasets.load_dataset(str(out), "tasks", split="test", cache_dir=cache)
    by_json = datasets.load_dataset(
        "json", data_files={"test": str(out / "json" / "tasks.jsonl")}, split="test", cache_dir=cache
    )
    for ds, b64 in ((by_folder, False), (by_json, True)):
        row = next(r for r in ds if r["id"] == "RCA-001")
        got = next(r for r in row["recordings"] if r["command"] == rec.command)
        assert got["output"] is None and got["sha256"] == hashlib.sha256(raw).hexdigest()
        assert check_rows(list(ds), ts, b64=b64) == sum(len(r["recordings"]) for r in ds)
    back = tmp_path / "back"
    assert (
        author_cli(
            "import-release", str(out), "--gold", str(gold), "--out", str(back), cwd=tmp_path
        ).returncode
        == 0
    )
    assert (back / "rca" / "RCA-001" / rec.file).read_bytes() == raw


def test_the_gold_sealed_in_the_public_folder_opens_only_with_the_key(
    released: Released, tmp_path: Path
) -> None:
    import pyrage

    key, stranger = pyrage.x25519.Identity.generate(), pyrage.x25519.Identity.generate()
    (tmp_path / "key.txt").write_text(str(key) + "\n")
    (tmp_path / "stranger.txt").write_text(str(stranger) + "\n")
    out = tmp_path / "rel"
    proc = author_cli(
        "release", "1.1.0", "--tasks", str(released.world.tasks), "--out", str(out),
        "--seal-to", str(key.to_public()), "--license", "cc-by-4.0", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    header = load_fast(Path("README.md"), (out / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    assert [c["config_name"] for c in header["configs"]] == ["tasks", "networks", "sealed"]
    assert "sealed" in load_manifest(out).gold
    ts = TaskSet.open(released.world.tasks)
    public = readable_text(out)
    assert [s for s in gold_strings(ts, ["RCA-101", "PATH-101"]) if s in public] == []
    sealed = datasets.load_dataset(str(out), "sealed", split="test", cache_dir=str(tmp_path / "hf"))
    assert sorted(sealed["id"]) == ["PATH-101", "RCA-101"]

    back = tmp_path / "back"
    proc = author_cli("import-release", str(out), "--identity", str(tmp_path / "key.txt"), "--out", str(back),
                      cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    back_ts = TaskSet.open(back)
    for t in load_manifest(out).tasks:
        assert content_hash(back_ts.ref(t.id).path, back_ts) == t.content_hash
    proc = author_cli("import-release", str(out), "--identity", str(tmp_path / "stranger.txt"), "--out",
                      str(tmp_path / "no"), cwd=tmp_path)  # fmt: skip
    assert (
        proc.returncode != 0 and "not one of its recipients" in proc.stderr and "Traceback" not in proc.stderr
    )
    assert not (tmp_path / "no").exists()


def test_release_export_refuses_runs_it_cannot_vouch_for(released: Released, tmp_path: Path) -> None:
    """``--format release`` publishes only runs of one release, scored with it, on its exact tasks."""
    cache = {"CTBENCH_RELEASE_DIR": str(tmp_path / "cache")}

    def run(name: str, tasks: Path, *extra: str) -> Path:
        proc = run_cli("evaluate", "run", "--agent", "oracle", "--tasks", str(tasks), *extra, "--out",
                       str(tmp_path / name), cwd=tmp_path, timeout=300, env=cache)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return tmp_path / name

    def export(*runs: Path, tasks: Path, gold: Path | None = None) -> tuple[int, str, Path]:
        out = tmp_path / f"export-{len(list(tmp_path.glob('export-*')))}"
        args = ["--tasks", str(tasks), *(("--gold", str(gold)) if gold else ())]
        proc = run_cli("evaluate", "export", *map(str, runs), "--format", "release", "--out", str(out), *args,
                       "--resamples", "200", cwd=tmp_path, timeout=300, env=cache)  # fmt: skip
        assert "Traceback" not in proc.stderr
        return proc.returncode, proc.stderr, out

    on_release = run("on-release", released.out, "--gold", str(released.gold))
    plain = run("plain", released.world.tasks)
    code, err, out = export(plain, tasks=released.world.tasks)
    assert code == 2 and "plain: this run was not made on a release" in err and not out.exists()
    code, err, out = export(on_release, tasks=released.world.tasks)  # scored with the source, not the release
    assert code == 2 and "is not a release (no RELEASE.yaml)" in err and "--tasks RELEASE --gold GOLD" in err
    assert not out.exists()

    # a result line that claims other content than the released task's (a forged or stale hash)
    forged = tmp_path / "forged"
    shutil.copytree(on_release, forged)
    lines = (forged / "results.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["content_hash"] = "sha256:" + "0" * 64
    (forged / "results.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    code, err, out = export(forged, tasks=released.out, gold=released.gold)
    assert code == 2 and f"{first['task_id']} (trial 1) ran on content sha256:000000000000" in err, err

    # a run of another release (the same tasks, another version) does not mix with this one
    other_out, other_gold = tmp_path / "rel-1.0.1", tmp_path / "gold-1.0.1"
    assert author_cli("release", "1.0.1", "--tasks", str(released.world.tasks), "--out", str(other_out),
                      "--gold-out", str(other_gold), "--license", "cc-by-4.0", cwd=tmp_path).returncode == 0  # fmt: skip
    other = run("other", other_out, "--gold", str(other_gold))
    code, err, out = export(on_release, other, tasks=released.out, gold=released.gold)
    assert code == 2 and "the runs were made on different releases" in err and "(1.0.1)" in err

    # and the run as it was made exports: the same checks pass on honest input
    code, err, out = export(on_release, tasks=released.out, gold=released.gold)
    assert code == 0, err
    rows = [json.loads(line) for line in (out / "json" / "results.jsonl").read_text().splitlines()]
    published = {t.id: t.content_hash for t in load_manifest(released.out).tasks}
    assert {r["id"]: r["content_hash"] for r in rows} == published


def test_a_sealed_set_is_released_blind_by_seal_with_the_identity(tmp_path: Path) -> None:
    """A set sealed before its first commit (tests/test_review_sealed.py's world): RCA-101 reviewed blind
    by seal, released with the maintainer's identity; its blindness says so, and no plain gold is public."""
    pytest.importorskip("pyrage")
    from tests.test_review_sealed import GOLD_MARKERS, Sealed

    (tmp_path / "s").mkdir()
    s = Sealed(tmp_path / "s")
    alice, bob = s.clone("alice"), s.clone("bob")
    at, bt, mt = alice / "tasks", bob / "tasks", s.work / "tasks"
    s.run("alice", "submit", "RCA-101", tasks=at)
    s.run("bob", "checkout", "RCA-101", tasks=bt, key=False)
    s.run("bob", "blind", "RCA-101", "--answer", str(s.root / "a.txt"), tasks=bt, key=False)
    s.run("alice", "unseal", "RCA-101", "--for", "bob", tasks=at)
    s.run("bob", "reveal", "RCA-101", "--all-agree", tasks=bt)
    s.run("maint", "merge", "RCA-101", tasks=mt)

    out, gold = tmp_path / "rel", tmp_path / "gold"
    args = ("release", "1.0.0", "--tasks", str(mt), "--out", str(out), "--gold-out", str(gold),
            "--license", "cc-by-4.0", "--json")  # fmt: skip
    # without an identity the sealed gold cannot be read: nothing is retained, and it says why
    proc = author_cli(*args, cwd=tmp_path)
    assert proc.returncode != 0 and "RCA-101" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists() and not gold.exists()
    proc = author_cli(*args[:2], "--identity", str(s.keys["maint"]), *args[2:], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["tasks"] == ["RCA-101"]
    (task,) = load_manifest(out).tasks
    assert (
        "Blind by seal: the gold was sealed (age)" in task.blindness
        and "before the gold was revealed" in task.blindness
    )
    public = readable_text(out).encode("utf-8")
    assert [m for m in GOLD_MARKERS if m in public] == []
    assert all(m in (gold / "rca" / "RCA-101" / "hidden.yaml").read_bytes() for m in GOLD_MARKERS)
    ts = TaskSet.open(mt, identity=s.keys["maint"])
    assert task.content_hash == content_hash(ts.ref("RCA-101").path, ts)
