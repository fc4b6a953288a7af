"""Benchmark of `ctb-eval report`: the whole report, vectorised statistics against a per-resample loop.

Run from the repository root (figures, not a timed test; pytest does not collect tests/bench):

    python tests/bench/bench_report.py             # both workloads, 10,000 resamples
    python tests/bench/bench_report.py --quick     # 20,000 tasks instead of 100,000

Workload 1 - the paper's shape, end to end from disk: a generated task set of 234 tasks (126 RCA + 108
path, on the bundled campus-lab network, with varied labels, entries, paths, observability,
heterogeneity and golden actions) and 4 run folders written in the run-folder format. Timed: the
full report as ``ctb-eval report`` makes it - load and score every run from its folder (parse,
canonicalise with the dialects, metrics), standard errors of the 4 runs, paired comparisons of A with
B, C, D (McNemar, paired bootstraps, Holm), breakdowns by every metadata field, and rendering in all
five formats (text, md, latex, json, html) - from a cold task-set cache; made 3 times, the median
printed (one-second timings on a shared machine vary by 20-30% from one repeat to the next). The
HTML drill-down runs in a process per core (``ctbench.evaluate.forked``); its time in one process is
printed beside it.

Workload 2 - scaling: 4 runs x 100,000 tasks (54,000 RCA + 46,000 path). Reading 100,000 task folders
of YAML is a different benchmark (workload 1 gives the per-task cost of the adapter; multiply), so
this one starts from the per-task records the adapter hands the core, in memory. Timed: per-task
scoring, summaries, standard errors, paired comparisons, breakdowns and the five renderings, with the
collector's full passes put off for the whole build as ``build_report`` puts them off
(``ctbench.collector``). Printed before it: the per-task scoring alone with the full passes as Python
schedules them (how many ran and what they cost), as every report did before.

The loop baseline is the straightforward implementation of the same bootstraps: for each resample,
draw one index vector with the same generator and seed (``rng.integers(0, n, size=n)``) and compute
every metric of the family from it, one resample per Python iteration. Its results are checked
against the vectorised ones (they agree to ~1e-9: the vectorised engine rounds IoU columns to
multiples of 2**-30 to make its sums exact). When the loop would take longer than --loop-budget
seconds it runs on fewer resamples and its time is extrapolated linearly; the output says so.

scipy (``scipy.stats`` for McNemar, ``scipy.optimize`` for matchings) is imported once before timing
and not counted: its import alone takes ~0.5-1.5 s and is the same for any implementation.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path as FsPath
from typing import Any

import numpy as np

sys.path.insert(0, str(FsPath(__file__).resolve().parents[2]))

from ctbench.answer import Hop, RcaEntry, path_line  # noqa: E402
from ctbench.collector import full_collections_deferred  # noqa: E402
from ctbench.evaluate.compare import compare  # noqa: E402
from ctbench.evaluate.report import Report, ReportedRun, build_report  # noqa: E402
from ctbench.evaluate.report_formats import render_report  # noqa: E402
from ctbench.evaluate.score import RunInfo, ScoredRun, Scorer, build_scores  # noqa: E402
from ctbench.scoring import stats  # noqa: E402
from ctbench.scoring.metrics import ScoringConfig, TaskRecord, TaskScores, TaskUsage, Topology, score_task  # noqa: E402
from ctbench.scoring.parse import ParsedAnswer  # noqa: E402
from ctbench.store import TaskSet  # noqa: E402
from ctbench.taxonomy import level_for  # noqa: E402
from tests.test_collector import FullPasses  # noqa: E402

REPO = FsPath(__file__).resolve().parents[2]
REPEATS = 3
"""Times workload 1's full report is made; the median is printed."""
BUNDLED = REPO / "tasks"
RUNS = [
    ("codex", "gpt", 0.55),
    ("claude", "sonnet", 0.45),
    ("hermes", "deepseek", 0.3),
    ("hermes", "qwen", 0.4),
]
COMMANDS = {  # campus-lab devices with a CLI, and commands their dialects accept
    "ACC_SW_01": [
        "display ip routing-table",
        "display interface brief",
        "display arp",
        "display lldp neighbor-information list",
        "display current-configuration",
    ],
    "CORE_SW_01": [
        "display ip routing-table",
        "display interface brief",
        "display current-configuration",
        "display arp all",
        "display vrrp",
        "display ospf peer",
    ],
    "FW_01": [
        "display security-policy rule all",
        "display ip routing-table",
        "display interface brief",
        "display current-configuration",
    ],
    "GW_01": [
        "show ip route",
        "show running-config",
        "show ip interface brief",
        "show ip cef",
        "show ip bgp summary",
    ],
    "PE_01": ["show route", "show interfaces terse", "show bgp summary", "show configuration"],
}
ABBREVIATE = {"display": "dis", "show": "sh", "routing-table": "rou", "interface": "int", "brief": "br"}
PATH_1 = (
    Hop("PC_01", "eth0"),
    Hop("ACC_SW_01", "GigabitEthernet1/0/48"),
    Hop("CORE_SW_01", "GigabitEthernet0/0/24"),
    Hop("FW_01", "GigabitEthernet1/0/2"),
    Hop("GW_01", "GigabitEthernet2"),
    Hop("PE_01", "ge-0/0/2"),
    Hop("SRV_01", None),
)
PATH_2 = (
    Hop("PC_01", "eth0"),
    Hop("ACC_SW_01", "GigabitEthernet1/0/48"),
    Hop("CORE_SW_01", "GigabitEthernet0/0/24"),
    Hop("FW_01", "GigabitEthernet1/0/2"),
    Hop("GW_01", None),
)
MECHANISMS = ["static routing", "OSPF", "BGP", "VRRP", "security policy", "NAT", "ARP", "LLDP", "CEF", "ACL"]


# --------------------------------------------------------------------------- synthetic content


class Gen:
    """Random but reproducible tasks and agent behaviour on the campus-lab network."""

    def __init__(self, seed: int, labels: Sequence[str], interfaces: dict[str, list[str]]) -> None:
        self.rng = random.Random(seed)
        self.labels = list(labels)
        self.interfaces = interfaces

    def rca_gold(self) -> list[RcaEntry]:
        n = self.rng.choice([1, 1, 1, 1, 1, 1, 2, 2, 2, 3])
        out: set[RcaEntry] = set()
        while len(out) < n:
            dev = self.rng.choice(list(COMMANDS))
            obj = self.rng.choice(
                [*self.interfaces[dev], f"10.{self.rng.randint(0, 9)}.{self.rng.randint(1, 9)}.1"]
            )
            out.add(RcaEntry(dev, obj, self.rng.choice(self.labels)))
        return sorted(out)

    def path_gold(self) -> list[tuple[Hop, ...]]:
        return [PATH_1] if self.rng.random() < 0.6 else [PATH_1, PATH_2]

    def golden(self, devices: Sequence[str], lo: int, hi: int) -> list[tuple[str, str]]:
        pool = [(d, c) for d in COMMANDS for c in COMMANDS[d]]
        focus = [(d, c) for d in devices if d in COMMANDS for c in COMMANDS[d]]
        k = self.rng.randint(lo, hi)
        chosen = self.rng.sample(focus, min(len(focus), max(1, k // 2))) if focus else []
        rest = [a for a in pool if a not in chosen]
        chosen += self.rng.sample(rest, max(0, min(len(rest), k - len(chosen))))
        return chosen

    def typed(self, command: str) -> str:
        if self.rng.random() < 0.5:
            return command
        return " ".join(ABBREVIATE.get(w, w) for w in command.split())

    def rca_answer(self, gold: list[RcaEntry], p: float) -> str:
        r = self.rng.random()
        entries = list(gold)
        if r < p:
            pass
        elif r < p + 0.12:
            return self.rng.choice(
                ["", "I could not determine the root cause.", "<answer>\nthe firewall\n</answer>"]
            )
        else:
            kind = self.rng.choice(["label", "drop", "extra", "node"])
            i = self.rng.randrange(len(entries))
            if kind == "label" or (kind == "drop" and len(entries) == 1):
                entries[i] = entries[i]._replace(
                    label=self.rng.choice([x for x in self.labels if x != entries[i].label])
                )
            elif kind == "drop":
                entries.pop(i)
            elif kind == "extra":
                entries.append(RcaEntry("GW_01", "GigabitEthernet2", self.rng.choice(self.labels)))
            else:
                entries[i] = entries[i]._replace(
                    node=self.rng.choice([d for d in COMMANDS if d != entries[i].node])
                )
        return "Diagnosis follows.\n<answer>\n" + "\n".join(e.line() for e in entries) + "\n</answer>\n"

    def path_answer(self, gold: list[tuple[Hop, ...]], p: float) -> str:
        r = self.rng.random()
        paths = [list(x) for x in gold]
        if r < p:
            pass
        elif r < p + 0.08:
            return "The traffic goes through the firewall."
        else:
            kind = self.rng.choice(["egress", "reverse", "drop"])
            if kind == "egress":
                paths[0][2] = Hop("CORE_SW_01", "GigabitEthernet0/0/1")
            elif kind == "reverse":
                paths[0] = [Hop(h.node, "eth0") for h in reversed(paths[0][1:])] + [
                    Hop(paths[0][0].node, None)
                ]
            elif len(paths) > 1:
                paths.pop()
            else:
                paths[0][3] = Hop("FW_01", "GigabitEthernet1/0/1")
        return "<answer>\n" + "\n".join(path_line(tuple(x)) for x in paths) + "\n</answer>\n"

    def calls(self, golden: list[tuple[str, str]], coverage: float) -> list[tuple[str, str, str | None, str]]:
        out = []
        for dev, cmd in golden:
            if self.rng.random() < coverage:
                out.append((dev, self.typed(cmd), cmd, "recorded"))
        for _ in range(self.rng.randint(0, 4)):
            dev = self.rng.choice(list(COMMANDS))
            cmd = self.rng.choice(COMMANDS[dev])
            out.append((dev, self.typed(cmd), cmd, "denied" if (dev, cmd) not in golden else "recorded"))
        if self.rng.random() < 0.2:
            out.append(("CORE_SW_01", "dis foo", None, "invalid"))
        self.rng.shuffle(out)
        return out

    def usage(self, k: int, n_calls: int) -> dict[str, Any]:
        return {
            "rounds": n_calls + self.rng.randint(1, 6),
            "latency_s": round(self.rng.uniform(20, 300) * (1 + k), 3),
            "input_tokens": self.rng.randint(20_000, 200_000) * (k + 1),
            "output_tokens": self.rng.randint(500, 8000),
        }


# --------------------------------------------------------------------------- workload 1: on disk


TASK_YAML = """\
id: {id}
family: {family}
status: approved
title: Generated task {id}
statement: |
  Generated benchmark task. Answer in the required format.
network: campus-lab
recordings:
{recs}canary: "{canary}"
"""


def write_task_set(root: FsPath, n_rca: int, n_path: int, seed: int) -> tuple[TaskSet, dict[str, Any]]:
    """A task set of generated tasks; returns it and, per task, what the run generator needs."""
    import json

    for name in ("ctbench.yaml", "taxonomy.yaml"):
        shutil.copy(BUNDLED / name, root / name)
    shutil.copytree(BUNDLED / "networks", root / "networks")
    ts = TaskSet.open(root)
    canary = ts.config.canary
    net = ts.network("campus-lab")
    gen = Gen(seed, [lab.label for lab in ts.taxonomy.labels], {d.name: d.interfaces for d in net.devices})
    info: dict[str, Any] = {}
    for family, count in (("rca", n_rca), ("path", n_path)):
        for i in range(count):
            tid = f"{family.upper()}-{i + 1:04d}"
            folder = root / family / tid
            if family == "rca":
                gold: Any = gen.rca_gold()
                golden = gen.golden([e.node for e in gold], 1, 8)
                answer = {"rca": [{"node": e.node, "object": e.object, "label": e.label} for e in gold]}
                meta = {
                    "observability": "O1" if gen.rng.random() < 0.85 else "O2",
                    "chain_length": gen.rng.randint(1, 4),
                }
            else:
                gold = gen.path_gold()
                golden = gen.golden(["ACC_SW_01", "CORE_SW_01", "FW_01", "GW_01", "PE_01"], 3, 14)
                answer = {
                    "paths": [
                        {"hops": [{"node": h.node, **({"egress": h.egress} if h.egress else {})} for h in p]}
                        for p in gold
                    ]
                }
                meta = {}
            meta["protocol_mechanisms"] = gen.rng.sample(MECHANISMS, gen.rng.randint(1, 4))
            recs = []
            for dev, cmd in golden:
                rel = f"recordings/{dev}/{cmd.replace(' ', '_')}.txt"
                (folder / rel).parent.mkdir(parents=True, exist_ok=True)
                (folder / rel).write_text(f"<{dev}>{cmd}\n(output)\n")
                recs.append(f"  - device: {dev}\n    command: {cmd}\n    file: {rel}\n")
            (folder / "task.yaml").write_text(
                TASK_YAML.format(id=tid, family=family, recs="".join(recs), canary=canary)
            )
            hidden = {
                "id": tid,
                "answer": answer,
                "golden_actions": [{"device": d, "command": c} for d, c in golden],
                "metadata": meta,
                "canary": canary,
            }
            (folder / "hidden.yaml").write_text(json.dumps(hidden))  # JSON is YAML
            info[tid] = (family, gold, golden)
    return TaskSet.open(root), info


def write_runs(root: FsPath, ts: TaskSet, info: dict[str, Any], seed: int) -> list[FsPath]:
    import json

    from tests.test_score_support import RUN_YAML, write_trajectory

    dirs = []
    for k, (agent, model, p) in enumerate(RUNS):
        gen = Gen(seed + 100 + k, [lab.label for lab in ts.taxonomy.labels], {})
        run = root / "runs" / f"{agent}-{model}"
        (run / "trajectories").mkdir(parents=True)
        (run / "run.yaml").write_text(
            RUN_YAML.format(
                name=run.name,
                agent=agent,
                model=model,
                tasks=ts.root,
                commit="none",
                task_lines="\n".join(f"  - {t}" for t in info),
            )
        )
        with (run / "results.jsonl").open("w") as fh:
            for tid, (family, gold, golden) in info.items():
                text = gen.rca_answer(gold, p) if family == "rca" else gen.path_answer(gold, p + 0.3)
                calls = gen.calls(golden, 0.45 + 0.1 * k)
                write_trajectory(run / "trajectories" / f"{tid}.jsonl", calls)
                fh.write(
                    json.dumps(
                        {
                            "task_id": tid,
                            "family": family,
                            "status": "answered" if text.strip() else "unparsable",
                            "answer_text": text,
                            "commands": len(calls),
                            **gen.usage(k, len(calls)),
                        }
                    )
                    + "\n"
                )
        dirs.append(run)
    return dirs


def with_stored_parses(dirs: Sequence[FsPath], ts: TaskSet) -> list[FsPath]:
    """Copies of the run folders whose result lines carry the parse as the runner now stores it (the
    answer parsed once, with its fingerprint), so the scorer takes it instead of parsing again."""
    import json

    from ctbench.scoring.judge import Judges

    judges = Judges(ts)
    out = []
    for d in dirs:
        dst = d.with_name(d.name + "-stored")
        shutil.copytree(d, dst)
        lines = []
        for raw in (dst / "results.jsonl").read_text().splitlines():
            line = json.loads(raw)
            reader = judges.judge(line["task_id"]).reader
            line["answer"] = reader.record(reader.parse(line["answer_text"]), line["answer_text"])
            lines.append(json.dumps(line) + "\n")
        (dst / "results.jsonl").write_text("".join(lines))
        out.append(dst)
    return out


def parse_cpu(dirs: Sequence[FsPath], ts: TaskSet, repeat: int = 5) -> tuple[float, float]:
    """CPU microseconds per result line: parsing its answer text with the judge vs taking the stored
    parse (fingerprint computed and compared, then ``ParsedAnswer.from_json``). CPU time, so the
    figures hold on a loaded machine too."""
    import json

    from ctbench.scoring.judge import Judges

    judges = Judges(ts)
    items = []
    for d in dirs:
        for raw in (d / "results.jsonl").read_text().splitlines():
            line = json.loads(raw)
            items.append((judges.judge(line["task_id"]).reader, line["answer_text"], line["answer"]))
    out = []
    for fn in (lambda r, t, a: r.parse(t), lambda r, t, a: r.stored(a, t)):
        c0 = time.process_time()
        for _ in range(repeat):
            for reader, text, answer in items:
                fn(reader, text, answer)
        out.append(1e6 * (time.process_time() - c0) / (repeat * len(items)))
    return out[0], out[1]


# --------------------------------------------------------------------------- workload 2: in memory


def memory_runs(
    ts: TaskSet, n_rca: int, n_path: int, seed: int
) -> tuple[list[list[TaskRecord]], ScoringConfig]:
    """4 runs of per-task records, built as the adapter builds them, for ``n_rca + n_path`` tasks."""
    net = ts.network("campus-lab")
    devices = net.device_map()
    tax, cfg = ts.taxonomy, ts.config
    topo = Topology.from_links(
        {d.name: (d.site or None, d.role or None, d.cluster or None) for d in net.devices},
        sorted((a, b) for a, bs in net.neighbours().items() for b in bs),
    )
    gen = Gen(seed, [lab.label for lab in tax.labels], {d.name: d.interfaces for d in net.devices})
    tasks = []
    for family, count in (("rca", n_rca), ("path", n_path)):
        for i in range(count):
            if family == "rca":
                gold: Any = gen.rca_gold()
                golden = gen.golden([e.node for e in gold], 1, 8)
            else:
                gold = gen.path_gold()
                golden = gen.golden(list(COMMANDS), 3, 14)
            used = [devices[d] for d, _ in golden]
            h_l = max(len({d.vendor for d in used}), len({d.type for d in used}))
            meta = {
                "categories": sorted({tax.category_of(e.label) or "" for e in gold})
                if family == "rca"
                else None,
                "observability": ("O1" if gen.rng.random() < 0.85 else "O2") if family == "rca" else None,
                "heterogeneity": level_for(cfg.heterogeneity.for_family(family), h_l),  # type: ignore[arg-type]
                "root_cause_count": len(gold) if family == "rca" else None,
                "chain_length": gen.rng.randint(1, 4) if family == "rca" else None,
                "protocol_complexity": gen.rng.randint(1, 4),
                "golden_tier": level_for(cfg.golden_tiers.for_family(family), len(golden)),  # type: ignore[arg-type]
                "path_count": len(gold) if family == "path" else None,
            }
            tasks.append((f"{family[0].upper()}{i:06d}", family, gold, golden, meta))
    scorer_like = Scorer(ts)
    runs = []
    for k, (_, _, p) in enumerate(RUNS):
        rgen = Gen(seed + 100 + k, gen.labels, gen.interfaces)
        records = []
        for tid, family, gold, golden, meta in tasks:
            if family == "rca":
                text = rgen.rca_answer(gold, p)
                pred = parse_like(text, family)
                g: Any = frozenset(gold)
            else:
                text = rgen.path_answer(gold, p + 0.3)
                pred = parse_like(text, family)
                g = tuple(gold)
            calls = rgen.calls(golden, 0.45 + 0.1 * k)
            executed = tuple(sorted({(d, c) for d, _, c, o in calls if o in ("recorded", "denied") and c}))
            u = rgen.usage(k, len(calls))
            records.append(
                TaskRecord(
                    tid,
                    family,
                    g,
                    pred,
                    frozenset(golden),
                    executed,  # type: ignore[arg-type]
                    TaskUsage(u["rounds"], u["latency_s"], u["input_tokens"], u["output_tokens"]),
                    meta,
                    topo if family == "rca" else None,
                )
            )
        runs.append(records)
    return runs, scorer_like.config


def parse_like(text: str, family: str) -> ParsedAnswer:
    """The parsed answer of a generated text (the generator writes canonical names, so no normalising)."""
    from ctbench.scoring.parse import parse_paths, parse_rca

    nodes = ["PC_01", "SRV_01", *COMMANDS]
    if family == "rca":
        return parse_rca(text, node_names=nodes, resolve_label=lambda s: s if s else None)
    return parse_paths(text, node_names=nodes, normalize_interface=lambda n, i: i)


# --------------------------------------------------------------------------- the loop baseline


def _arr(values: Any) -> np.ndarray:
    return np.asarray(list(values), dtype=np.float64)


def loop_se(rows: Sequence[TaskScores], family: str, n_resamples: int) -> dict[str, float]:
    """Pooled-ratio SEs of one family of one run, one resample per iteration, one stream per metric."""
    c, g, a = (
        _arr(s.evidence.covered for s in rows),
        _arr(s.evidence.golden for s in rows),
        _arr(s.evidence.executed for s in rows),
    )
    inter, union = _arr(s.edges_intersection for s in rows), _arr(s.edges_union for s in rows)
    n = len(rows)
    metrics = ["evidence_coverage", "evidence_f1"] + (["micro_edge_iou"] if family == "path" else [])
    res = {}
    for metric in metrics:
        rng = np.random.default_rng(stats.metric_seed(family, metric))
        values = []
        for _ in range(n_resamples):
            idx = rng.integers(0, n, size=n)
            cs, gs, as_ = c[idx].sum(), g[idx].sum(), a[idx].sum()
            if metric == "evidence_coverage":
                values.append(cs / gs if gs > 0 else np.nan)
            elif metric == "evidence_f1":
                values.append(2 * cs / (gs + as_) if gs + as_ > 0 else np.nan)
            else:
                us = union[idx].sum()
                values.append(inter[idx].sum() / us if us > 0 else np.nan)
        v = np.asarray(values)
        v = v[~np.isnan(v)]
        if v.size >= 2:
            res[metric] = float(v.std(ddof=1))
    return res


def loop_paired(
    ra: Sequence[TaskScores], rb: Sequence[TaskScores], family: str, n_resamples: int
) -> dict[str, tuple[float, float, float]]:
    """(CI low, CI high, sign p) of the four paired metrics of one family, one resample per iteration."""
    third = ("id_iou", "ident") if family == "rca" else ("rest_iou", "rest")
    diffs = {
        m: _arr(
            float(getattr(x, attr) or 0.0) - float(getattr(y, attr) or 0.0)
            for x, y in zip(ra, rb, strict=True)
        )
        for m, attr in (("accuracy", "exact"), ("loc_iou", "loc"), third)
    }
    ca, ga = _arr(s.evidence.covered for s in ra), _arr(s.evidence.golden for s in ra)
    cb, gb = _arr(s.evidence.covered for s in rb), _arr(s.evidence.golden for s in rb)
    n = len(ra)
    out = {}
    for m in [*diffs, "evidence_coverage"]:
        rng = np.random.default_rng(stats.metric_seed(family, m))
        values = []
        for _ in range(n_resamples):
            idx = rng.integers(0, n, size=n)
            if m in diffs:
                values.append(diffs[m][idx].mean())
            else:
                gas, gbs = ga[idx].sum(), gb[idx].sum()
                values.append(ca[idx].sum() / gas - cb[idx].sum() / gbs if gas > 0 and gbs > 0 else np.nan)
        v = np.asarray(values)
        v = v[~np.isnan(v)]
        lo, hi = np.percentile(v, [2.5, 97.5])
        tol = stats.ZERO_TOLERANCE  # the same tie rule as the vectorised code (rounding must not pick a sign)
        out[m] = (
            float(lo),
            float(hi),
            min(1.0, 2 * min(float(np.mean(v <= tol)), float(np.mean(v >= -tol)))),
        )
    return out


def _by_family(rows: Sequence[TaskScores], family: str) -> list[TaskScores]:
    return sorted((s for s in rows if s.family == family), key=lambda s: s.task_id)


def loop_all(runs: dict[str, list[TaskScores]], n_resamples: int) -> tuple[dict[str, Any], dict[str, Any]]:
    names = list(runs)
    se = {
        (name, f): loop_se(_by_family(rows, f), f, n_resamples)
        for name, rows in runs.items()
        for f in ("rca", "path")
        if _by_family(rows, f)
    }
    paired = {
        (names[0], b, f): loop_paired(_by_family(runs[names[0]], f), _by_family(runs[b], f), f, n_resamples)
        for b in names[1:]
        for f in ("rca", "path")
        if _by_family(runs[b], f)
    }
    return se, paired


def vector_all(runs: dict[str, list[TaskScores]], n_resamples: int) -> tuple[dict[str, Any], list[Any]]:
    """Every bootstrap of the report, as the report computes them (one draw per family and metric)."""
    names = list(runs)
    return stats.run_statistics(runs, [(names[0], b) for b in names[1:]], n_resamples=n_resamples)


def max_difference(
    vec: tuple[dict[str, Any], list[Any]], loop: tuple[dict[str, Any], dict[str, Any]]
) -> float:
    se_v, paired_v = vec
    se_l, paired_l = loop
    worst = 0.0
    for (name, fam), metrics in se_l.items():
        for metric, value in metrics.items():
            worst = max(worst, abs(se_v[name][fam][metric] - value))
    for r in paired_v:
        lo, hi, p = paired_l[(r.run_a, r.run_b, r.family)][r.metric]
        worst = max(
            worst,
            abs(r.ci_low - lo),
            abs(r.ci_high - hi),
            abs(r.p_value - p) if r.test != "mcnemar-exact" else 0.0,
        )
    return worst


# --------------------------------------------------------------------------- reporting


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def loop_line(
    runs: dict[str, list[TaskScores]], n_resamples: int, vec_seconds: float, budget: float
) -> float:
    """Time the loop (extrapolating when needed), check agreement, print; returns the full-count loop time."""
    probe = min(n_resamples, 50)
    t_probe, _ = timed(lambda: loop_all(runs, probe))
    estimate = t_probe * n_resamples / probe
    count = n_resamples if estimate <= budget else max(probe, int(n_resamples * budget / estimate))
    t_loop, loop_out = timed(lambda: loop_all(runs, count))
    full = t_loop * n_resamples / count
    diff = max_difference(vector_all(runs, count), loop_out)
    how = (
        "loop run in full"
        if count == n_resamples
        else f"loop run on {count:,} resamples, time extrapolated x{n_resamples / count:.1f}"
    )
    print(
        f"    bootstraps: vectorised {vec_seconds:7.2f} s   loop {full:8.2f} s   speed-up x{full / vec_seconds:5.1f}"
        f"   ({how}; max |vectorised - loop| = {diff:.1e})"
    )
    return full


def per_metric_engine(runs: dict[str, list[TaskScores]], n_resamples: int) -> None:
    """The previous engine, for reference: one bootstrap per metric, run and pair, each with its own seed
    (``seed_for("se:<family>.<metric>", run)``, ``seed_for("paired:<family>.<metric>", A, B)``) and its own
    gathers - what ``standard_errors``/``compare_runs`` did before the draws were shared per family."""
    names = list(runs)
    for name, rows in runs.items():
        for f in ("rca", "path"):
            fr = _by_family(rows, f)
            if not fr:
                continue
            c, g, a = (
                _arr(s.evidence.covered for s in fr),
                _arr(s.evidence.golden for s in fr),
                _arr(s.evidence.executed for s in fr),
            )
            parts = [("evidence_coverage", c, g), ("evidence_f1", 2 * c, g + a)]
            if f == "path":
                parts.append(
                    (
                        "micro_edge_iou",
                        _arr(s.edges_intersection for s in fr),
                        _arr(s.edges_union for s in fr),
                    )
                )
            for metric, num, den in parts:
                stats.bootstrap_pooled_se(
                    num, den, seed=stats.seed_for(f"se:{f}.{metric}", name), n_resamples=n_resamples
                )
    for b in names[1:]:
        for f in ("rca", "path"):
            ra, rb = _by_family(runs[names[0]], f), _by_family(runs[b], f)
            if not ra:
                continue
            third = "ident" if f == "rca" else "rest"
            for metric, attr in (("accuracy", "exact"), ("loc_iou", "loc"), ("third", third)):
                stats.paired_mean_difference(
                    _arr(float(getattr(x, attr) or 0) for x in ra),
                    _arr(float(getattr(x, attr) or 0) for x in rb),
                    seed=stats.seed_for(f"paired:{f}.{metric}", names[0], b),
                    n_resamples=n_resamples,
                )
            stats.paired_pooled_difference(
                _arr(x.evidence.covered for x in ra),
                _arr(x.evidence.golden for x in ra),
                _arr(x.evidence.covered for x in rb),
                _arr(x.evidence.golden for x in rb),
                seed=stats.seed_for(f"paired:{f}.evidence_coverage", names[0], b),
                n_resamples=n_resamples,
            )


def reference_line(
    runs: dict[str, list[TaskScores]], n_resamples: int, vec_seconds: float, budget: float
) -> None:
    probe = min(n_resamples, 100)
    t_probe, _ = timed(lambda: per_metric_engine(runs, probe))
    estimate = t_probe * n_resamples / probe
    count = n_resamples if estimate <= budget else max(probe, int(n_resamples * budget / estimate))
    t_run, _ = timed(lambda: per_metric_engine(runs, count))
    full = t_run * n_resamples / count
    how = (
        "run in full"
        if count == n_resamples
        else f"run on {count:,} resamples, time extrapolated x{n_resamples / count:.1f}"
    )
    print(
        f"    previous engine (one draw per metric, run and pair, gathered): {full:8.2f} s   "
        f"x{full / vec_seconds:5.1f} the shared draws   ({how})"
    )


def render_all(report: Report) -> dict[str, int]:
    return {fmt: len(render_report(report, fmt)) for fmt in ("text", "md", "latex", "json", "html")}


def workload_1(tmp: FsPath, n_resamples: int, budget: float) -> None:
    print("Workload 1: full report, 4 runs x 234 tasks (126 RCA + 108 path), from run folders on disk")
    root = tmp / "tasks"
    root.mkdir()
    t_gen, (ts, info) = timed(lambda: write_task_set(root, 126, 108, seed=1))
    parsed_dirs = write_runs(tmp, ts, info, seed=1)
    dirs = with_stored_parses(parsed_dirs, TaskSet.open(root))
    print(f"    (generated the task set and 4 run folders in {t_gen:.1f} s; not counted)")
    # The full report is timed REPEATS times, each from cold caches (a fresh task set, nothing of the
    # previous report alive) as one `ctb-eval report` process makes it; the median is the figure (this
    # machine's timings of one second vary by 20-30% from one repeat to the next).
    builds: list[float] = []
    renders: list[float] = []
    before: list[tuple[float, float]] = []
    cpus: list[float] = []
    for _ in range(REPEATS):
        # before: result lines without a stored parse (every answer parsed again by the scorer)
        fresh = TaskSet.open(root)  # cold caches: every task, network and taxonomy read again
        c0 = time.process_time()
        t_before, _ = timed(partial(build_report, parsed_dirs, fresh, n_resamples=n_resamples))
        before.append((t_before, time.process_time() - c0))
        del _
        fresh = TaskSet.open(root)
        c0 = time.process_time()
        t_build, report = timed(partial(build_report, dirs, fresh, n_resamples=n_resamples))
        cpus.append(time.process_time() - c0)
        t_render, sizes = timed(partial(render_all, report))
        builds.append(t_build)
        renders.append(t_render)
        if len(builds) < REPEATS:
            del report
    totals = [b + r for b, r in zip(builds, renders, strict=True)]
    mid = sorted(range(REPEATS), key=lambda i: totals[i])[REPEATS // 2]
    t_build, t_render, total, cpu_build = builds[mid], renders[mid], totals[mid], cpus[mid]
    t_before, cpu_before = sorted(before)[REPEATS // 2]
    print(
        f"    full report (score 4 folders, SEs, 3 paired comparisons, breakdowns) {t_build:6.2f} s + render "
        f"5 formats {t_render:5.2f} s = {total:6.2f} s   (target < 2 s; median of {REPEATS}: "
        f"{', '.join(f'{t:.2f}' for t in sorted(totals))} s)"
    )
    print(
        f"    single parse: the same report's build from result lines without a stored parse (the scorer "
        f"parses every answer again, as before) {t_before:6.2f} s wall, {cpu_before:.2f} s CPU; with the runner's "
        f"stored parse {t_build:6.2f} s wall, {cpu_build:.2f} s CPU (medians)"
    )
    print("    output sizes: " + ", ".join(f"{k} {v / 1024:.0f} KiB" for k, v in sizes.items()))
    from ctbench.cores import available_cores
    from ctbench.evaluate.report_tasks import tasks_section

    n_details = sum(len(r.run.scores) for r in report.runs)
    cores = available_cores()
    for workers in sorted({1, cores}):
        c0 = time.process_time()
        t_tasks, _ = timed(partial(tasks_section, report, workers=workers))
        print(
            f"    of the html: the per-task drill-down ({n_details} task details: answer checks, trajectories, "
            f"device output replayed) {t_tasks:.2f} s wall, {time.process_time() - c0:.2f} s CPU of this process, "
            f"in {workers} process(es){' (before)' if workers == 1 and cores > 1 else ''} "
            f"(load average {os.getloadavg()[0]:.1f})"
        )
    scorer = Scorer(TaskSet.open(root))
    t_adapter, scored = timed(lambda: [scorer.score_folder(d) for d in dirs])
    scorer = Scorer(TaskSet.open(root))
    t_reparse, again = timed(lambda: [scorer.score_folder(d) for d in parsed_dirs])
    same = [r.scores for r in scored] == [r.scores for r in again]
    print(
        f"    of which reading and scoring the folders: {t_adapter:.2f} s "
        f"({1e3 * t_adapter / (4 * 234):.2f} ms per task and run, task loading included); parsing every "
        f"answer again instead (before): {t_reparse:.2f} s; same scores both ways: {same}"
    )
    cpu_parse, cpu_stored = parse_cpu(dirs, TaskSet.open(root))
    print(
        f"    the answer itself, CPU per result line: parsed again (before) {cpu_parse:.1f} us, the stored "
        f"parse taken (after) {cpu_stored:.1f} us, fingerprint check included"
    )
    runs = {r.info.name: r.scores for r in scored}
    t_vec, _ = timed(lambda: vector_all(runs, n_resamples))
    t_loop = loop_line(runs, n_resamples, t_vec, budget)
    reference_line(runs, n_resamples, t_vec, budget)
    print(f"    full report with the loop instead: {total - t_vec + t_loop:6.2f} s\n")


def workload_2(ts: TaskSet, n_tasks: int, n_resamples: int, budget: float) -> None:
    n_rca = round(n_tasks * 0.54)
    n_path = n_tasks - n_rca
    print(
        f"Workload 2: full report, 4 runs x {n_tasks:,} tasks ({n_rca:,} RCA + {n_path:,} path), from per-task "
        "records in memory"
    )
    t_gen, (records, config) = timed(lambda: memory_runs(ts, n_rca, n_path, seed=2))
    print(f"    (generated {4 * n_tasks:,} records in {t_gen:.1f} s; not counted)")
    # before: the same report with the collector's full passes as Python schedules them (every report
    # before ctbench.collector); then as build_report makes it now, the full passes put off throughout
    figures: dict[str, tuple[float, ...]] = {}
    for when in ("before", "now"):
        passes = FullPasses()
        with passes, full_collections_deferred() if when == "now" else contextlib.nullcontext():
            *times, report = _workload_2_report(ts, records, config, n_resamples)
        figures[when] = (*times, passes.count, passes.seconds)
        if when == "before":
            del report
            gc.collect()
    for when, (t_score, t_cmp, t_docs, t_render, count, seconds) in figures.items():
        total = t_score + t_docs + t_cmp + t_render
        target = "   (target < 60 s)" if when == "now" else ""
        print(
            f"    {when:<7}per-task scoring {t_score:6.2f} s + SEs and paired comparisons {t_cmp:6.2f} s + "
            f"summaries and breakdowns {t_docs:6.2f} s + render {t_render:5.2f} s = {total:6.2f} s{target}\n"
            f"           the collector's full passes in it: {count}, {seconds:.2f} s"
        )
    by_name = {r.run.info.name: r.run.scores for r in report.runs}
    t_vec, _ = timed(lambda: vector_all(by_name, n_resamples))
    t_loop = loop_line(by_name, n_resamples, t_vec, budget)
    reference_line(by_name, n_resamples, t_vec, budget)
    print(f"    full report with the loop instead: {total - t_vec + t_loop:6.2f} s")
    print(
        f"    peak resident memory of the process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )


def _workload_2_report(
    ts: TaskSet, records: list[list[TaskRecord]], config: ScoringConfig, n_resamples: int
) -> tuple[float, float, float, float, Report]:
    """Workload 2's report, step by step as build_report makes it: (scoring, SEs and comparisons,
    summaries and breakdowns, render) seconds and the report."""
    names = [f"{a}-{m}" for a, m, _ in RUNS]
    t_score, scored = timed(lambda: [[score_task(r, config) for r in recs] for recs in records])
    runs = [
        ScoredRun(
            info=RunInfo(name=n, agent=n.split("-")[0], model=n.split("-")[1]),
            trial_scores=sorted(s, key=lambda x: (x.family, x.task_id)),
            warnings=[],
            missing=[],
            path=FsPath(n),
        )
        for n, s in zip(names, scored, strict=True)
    ]
    # as build_report does: one pass of draws gives every run's SEs and the paired comparisons
    t_cmp, cmp = timed(lambda: compare(runs, n_resamples=n_resamples, with_se=True))
    t_docs, docs = timed(
        lambda: [
            build_scores(r, min_stratum=10, n_resamples=n_resamples, se=cmp.se[r.info.name]) for r in runs
        ]
    )
    report = Report(
        runs=[
            ReportedRun(label=r.info.label, name=r.info.name, scores=d, run=r)
            for r, d in zip(runs, docs, strict=True)
        ],
        comparison=cmp,
        min_stratum=10,
        category_names={c.id: c.name for c in ts.taxonomy.categories},
    )
    t_render, _ = timed(partial(render_all, report))
    return t_score, t_cmp, t_docs, t_render, report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resamples", type=int, default=stats.N_RESAMPLES)
    ap.add_argument("--big", type=int, default=100_000, help="task count of workload 2")
    ap.add_argument("--loop-budget", type=float, default=60.0, help="seconds the loop may take per workload")
    ap.add_argument("--quick", action="store_true", help="20,000 tasks in workload 2, 20 s loop budget")
    args = ap.parse_args(argv)
    if args.quick:
        args.big, args.loop_budget = 20_000, 20.0
    load = os.getloadavg()[0]
    print(
        f"numpy {np.__version__}, {os.cpu_count()} CPU(s), load average {load:.2f}; {args.resamples:,} resamples "
        "per bootstrap"
    )
    t_warm, _ = timed(
        lambda: stats.compare_runs(
            [TaskScores("t", "rca", "answered", True, 1.0, _ev(), TaskUsage(), {}, ident=1.0)] * 1,
            [TaskScores("t", "rca", "answered", False, 0.0, _ev(), TaskUsage(), {}, ident=0.0)] * 1,
            run_a="a",
            run_b="b",
            n_resamples=100,
        )
    )
    import scipy.optimize  # noqa: F401

    print(f"warm-up (scipy.stats and scipy.optimize imports, one-off, not counted): {t_warm:.2f} s\n")
    tmp = FsPath(tempfile.mkdtemp(prefix="ctb-bench-report-"))
    try:
        workload_1(tmp, args.resamples, args.loop_budget)
        workload_2(TaskSet.open(tmp / "tasks"), args.big, args.resamples, args.loop_budget)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _ev() -> Any:
    from ctbench.scoring.metrics import EvidenceCounts

    return EvidenceCounts(1, 2, 3)


if __name__ == "__main__":
    raise SystemExit(main())
