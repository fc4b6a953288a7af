"""Benchmark: command resolutions per second, beside a plain dict lookup of the same lines.

The replay server resolves every agent command through a dialect (target: >= 50,000 resolutions/s
in-process on 2 cores). A resolution is cached per (line, recorded set), so an agent repeating a
command costs a dict lookup; a new line costs a parse. Both are measured:

- ``dict``: ``index.get(line)`` over the same stream of lines (the floor any cache can reach);
- ``warm``: ``Dialect.resolve`` over that stream after one pass (the replay server's steady state);
- ``cold``: ``Dialect.resolve`` on lines never seen before (same commands with trailing blanks
  varied so that each line is a new cache key), i.e. the parser itself, one pass;
- ``warm x2``: two threads sharing one dialect, as the threaded replay server does.

Lines are the real MANIFEST commands of tests/fixtures/vendor-cli (plus abbreviated, filtered and
invalid variants), or a built-in sample when that folder is absent.

    python tests/bench/bench_dialects.py [seconds-per-measure]
"""

from __future__ import annotations

import csv
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ctbench.dialects import OS_FAMILIES, get_dialect  # noqa: E402

MANIFEST = REPO / "tests" / "fixtures" / "vendor-cli" / "MANIFEST.tsv"

SAMPLES = {
    "huawei_vrp": ["display ip routing-table", "display interface brief", "display lldp neighbor"],
    "hp_comware": ["display ip routing-table", "display interface brief", "display vlan all"],
    "cisco_ios": ["show ip route", "show ip interface brief", "show running-config"],
    "cisco_nxos": ["show ip route vrf all", "show interface brief", "show vpc"],
    "juniper_junos": ["show route", "show interfaces terse", "show configuration | display set"],
}
VARIANTS = {
    "huawei_vrp": ["dis ip rou", "d cu | i ospf", "dis int GE1/0/1", "dis foo", "dis c", "display ip"],
    "hp_comware": ["di ip ro", "dis cur | inc vlan", "dis int XGE1/0/49", "dis xyz", "dis l"],
    "cisco_ios": ["sh ip int br", "s ip ro", "sh run | sec router", "sh int gi0/1", "sh ip foo", "sh i"],
    "cisco_nxos": ["sh ip int br vrf all", "sh int e1/1", "sh run | i feature", "sh foo", "sh i"],
    "juniper_junos": [
        "sh int terse | match ge-",
        "sh conf | d s",
        "sh route 10.0.0.0/24",
        "shw ver",
        "show i",
    ],
}


def workload(os_name: str) -> tuple[list[str], frozenset[str]]:
    """(stream of lines, the recorded canonical commands) for one vendor."""
    commands: list[str] = []
    if MANIFEST.is_file():
        with MANIFEST.open(encoding="utf-8", newline="") as fh:
            commands = sorted(
                {r["command"] for r in csv.DictReader(fh, delimiter="\t") if r["platform"] == os_name}
            )
    commands = commands or SAMPLES[os_name]
    recorded = frozenset(c.split(" | match")[0] for c in commands)
    return commands + VARIANTS[os_name], recorded


def rate(fn: Callable[[], int], seconds: float) -> float:
    """Calls of ``fn`` per second (``fn`` returns how many operations it did)."""
    done = 0
    t0 = time.perf_counter()
    while True:
        done += fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return done / elapsed


def measure(os_name: str, seconds: float) -> tuple[int, float, float, float, float]:
    """(lines, dict/s, warm/s, warm x2/s, cold/s) for one vendor."""
    resolve = get_dialect(os_name).resolve
    lines, recorded = workload(os_name)
    index = {line: line for line in lines}
    # Same commands, each padded with a different number of trailing blanks: all new cache keys.
    fresh = [line + " " * pad for pad in range(1, 300) for line in lines]

    def lookups() -> int:
        get = index.get
        for line in lines:
            get(line)
        return len(lines)

    def warm() -> int:
        for line in lines:
            resolve(line, recorded)
        return len(lines)

    def cold() -> float:
        t0 = time.perf_counter()
        for line in fresh:
            resolve(line, recorded)
        return len(fresh) / (time.perf_counter() - t0)

    warm()
    dict_rate = rate(lookups, seconds)
    warm_rate = rate(warm, seconds)
    with ThreadPoolExecutor(max_workers=2) as pool:
        t0 = time.perf_counter()
        futures = [pool.submit(rate, warm, seconds) for _ in range(2)]
        warm2_rate = sum(f.result() for f in futures) * seconds / (time.perf_counter() - t0)
    return len(lines), dict_rate, warm_rate, warm2_rate, cold()


def main(seconds: float = 1.0) -> None:
    print(
        f"{'vendor':<15}{'lines':>6}{'dict/s':>13}{'warm/s':>13}{'warm x2/s':>13}{'cold/s':>11}{'warm/dict':>11}"
    )
    rows = []
    for os_name in OS_FAMILIES:
        n_lines, dict_rate, warm_rate, warm2_rate, cold_rate = measure(os_name, seconds)
        rows.append((dict_rate, warm_rate, warm2_rate, cold_rate))
        print(
            f"{os_name:<15}{n_lines:>6}{dict_rate:>13,.0f}{warm_rate:>13,.0f}{warm2_rate:>13,.0f}"
            f"{cold_rate:>11,.0f}{warm_rate / dict_rate:>11.1%}"
        )
    mean = [sum(col) / len(rows) for col in zip(*rows, strict=True)]
    print(
        f"{'mean':<15}{'':>6}{mean[0]:>13,.0f}{mean[1]:>13,.0f}{mean[2]:>13,.0f}{mean[3]:>11,.0f}"
        "   [target: warm >= 50,000/s]"
    )


if __name__ == "__main__":
    main(*(float(a) for a in sys.argv[1:2]))
