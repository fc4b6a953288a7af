"""Benchmark: ``?`` context help and Tab completion latency, beside a plain command resolution.

Target: under 5 ms per help answer and per completion on the largest grammar, in the shell. Help is
not cached by the dialect (every ``?`` walks the tree), so the dialect figures are the cost of one
walk plus the layout; the shell figures add the session (its lock, the engine's per-device answer
cache on a repeated line, the trajectory record), measured on a fresh line each time (``cold``) and
on the same line again (``warm``).

Positions: the start of the line, after a keyword, a partial word, after a complete command and
after ``|``, on the vendor with the most templates (the largest grammar) and on every vendor.

    python tests/bench/bench_help.py [repeats]
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ctbench.dialects import OS_FAMILIES, get_dialect  # noqa: E402
from ctbench.replay.engine import ReplayEngine  # noqa: E402
from ctbench.replay.shell import DeviceShell  # noqa: E402
from ctbench.store import TaskSet  # noqa: E402

TARGET_MS = 5.0
LINES = {
    "huawei_vrp": [
        "?",
        "display ?",
        "display interface ?",
        "dis ip routing-table 10.0.0.0 ?",
        "dis int b?",
        "display bgp routing-table ?",
        "display clock | ?",
        "ping -a 10.0.0.1 ?",
    ],
    "hp_comware": ["?", "display ?", "display interface ?", "dis ip r?", "display clock | include ?"],
    "cisco_ios": ["?", "show ?", "show ip ?", "sh ip int b?", "show ip route ?", "show clock | ?", "s?"],
    "cisco_nxos": ["?", "show ?", "show ip route ?", "sh ip int b?", "show clock | ?"],
    "juniper_junos": ["?", "show ?", "show route ?", "show int?", "show version | ?", "ping 10.0.0.1 ?"],
}
COMPLETE = {
    "huawei_vrp": [
        "d",
        "dis c",
        "display interface G",
        "dis ip routing-table 10.0.0.0 24 l",
        "display clock | i",
    ],
    "hp_comware": ["di", "dis ip rou", "display interface b"],
    "cisco_ios": ["sh", "show ip s", "show ip route vrf X s", "show clock | e"],
    "cisco_nxos": ["sh", "show int", "show clock | e"],
    "juniper_junos": ["sh", "show route p", "show i"],
}
RESOLVE = {
    "huawei_vrp": "display ip routing-table 10.0.0.0 24 verbose",
    "hp_comware": "display interface brief",
    "cisco_ios": "show ip route 10.0.0.0 255.0.0.0",
    "cisco_nxos": "show ip route vrf all",
    "juniper_junos": "show route 10.0.0.0/8 detail",
}


def timings(fn: Callable[[str], object], lines: list[str], repeats: int) -> list[float]:
    """Milliseconds per call of ``fn`` over ``lines``, ``repeats`` times each."""
    out = []
    for _ in range(repeats):
        for line in lines:
            t0 = time.perf_counter()
            fn(line)
            out.append((time.perf_counter() - t0) * 1000)
    return out


def row(name: str, ms: list[float]) -> str:
    p95 = statistics.quantiles(ms, n=20)[-1] if len(ms) >= 20 else max(ms)
    flag = "ok" if p95 < TARGET_MS else "SLOW"
    return f"  {name:<34}{statistics.median(ms):>9.3f}{p95:>9.3f}{max(ms):>9.3f}   {flag}"


def main(repeats: int = 200) -> None:
    largest = max(OS_FAMILIES, key=lambda o: len(get_dialect(o).templates))
    print(
        f"largest grammar: {largest} ({len(get_dialect(largest).templates)} templates); "
        f"target p95 < {TARGET_MS} ms"
    )
    print(f"  {'ms per call':<34}{'p50':>9}{'p95':>9}{'max':>9}")
    for os_name in (largest, *[o for o in OS_FAMILIES if o != largest]):
        d = get_dialect(os_name)
        prompt = d.prompt("R1")
        print(f"{os_name}")
        print(
            row(
                "baseline: resolve (uncached)",
                timings(
                    lambda line, d=d: d._resolve_uncached(line, frozenset()), [RESOLVE[os_name]], repeats
                ),
            )
        )
        print(row("help", timings(lambda line, d=d, p=prompt: d.help(line, p), LINES[os_name], repeats)))
        print(row("complete", timings(d.complete, COMPLETE[os_name], repeats)))

    # In the shell, on the bundled task's devices (the one of the largest grammar first).
    session = ReplayEngine(TaskSet.open(REPO / "tasks")).open_session("RCA-001")
    shell = DeviceShell(session)
    print("shell (ctb-replay shell on RCA-001)")
    for info in session.devices():
        if info.os not in LINES:
            continue
        shell.feed(f"connect {info.name}")
        fresh = [line + " " * k for k in range(1, repeats + 1) for line in LINES[info.os]]  # new cache keys
        print(row(f"{info.name} help cold", timings(shell.feed, fresh, 1)))
        print(row(f"{info.name} help warm", timings(shell.feed, LINES[info.os], repeats)))
        print(
            row(
                f"{info.name} Tab",
                timings(lambda line: shell.complete(line.split(" ")[-1], line), COMPLETE[info.os], repeats),
            )
        )
        shell.feed("quit")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:2]))
