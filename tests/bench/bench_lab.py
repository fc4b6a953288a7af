"""Benchmark: a live lab's time to come up, converge, record and go down; FRR vs IOS dialect parse rate.

Baselines (issue 32, measured on the 2-core CI machine as root): a 3-router lab converges in 6-14 s
with fast hello/dead timers (14-22 s with default timers) and tears down in 1.3-1.5 s; the five-router
edge lab (four FRR routers, a Linux firewall) converges in about 15 s at load 8. The parse rate
is resolutions per second of fresh lines (the parser, not its cache): the FRR dialect matches whole
lines, following every prefix reading, and has 945 templates against IOS's ~150, so it is expected
to be slower; the replay caches resolutions, so only new lines pay this.

    python tests/bench/bench_lab.py            # needs root and FRR for the lab part; the rest always runs
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ctbench.dialects import get_dialect  # noqa: E402

FRR_LINES = [
    "show ip route", "sh ip ro", "show ip rou", "sh int br", "show interface brief | include eth",
    "sh ip ospf nei", "show ip bgp summ", "show running-config", "show foo", "sh i b", "show ip",
    "ping 192.168.3.10", "show ip route 192.168.3.0/24", "show ip ospf interface eth1", "SHOW VERSION",
]  # fmt: skip
IOS_LINES = [
    "show ip route", "sh ip ro", "show ip rou", "sh ip int br", "show ip interface brief | include Gi",
    "sh ip ospf nei", "show ip bgp summ", "show running-config", "show foo", "sh i", "show ip",
    "ping 192.168.3.10", "show ip route 192.168.3.0 255.255.255.0", "show ip ospf interface Gi0/1", "SHOW VERSION",
]  # fmt: skip


def parse_rate(os_name: str, lines: list[str], seconds: float = 2.0) -> tuple[float, float]:
    """(fresh-line resolutions/s, dialect load seconds)."""
    started = time.perf_counter()
    dialect = get_dialect(os_name)
    load = time.perf_counter() - started
    n = 0
    pad = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pad += 1
        for line in lines:
            dialect.resolve(line + " " * (pad % 50) + ("" if pad < 50 else "\t" * (pad // 50)))
            n += 1
    return n / (time.perf_counter() - t0), load


def lab_times(lab_file: str = "tasks/labs/triangle.yaml", name: str = "bench-tri") -> dict[str, float] | str:
    from ctbench.authoring.lab.capture import DEFAULT_PLAN, record
    from ctbench.authoring.lab.runtime import Lab, missing_requirements
    from ctbench.authoring.lab.spec import load_lab

    missing = missing_requirements()
    if missing:
        return "skipped: needs " + "; ".join(missing)
    spec = load_lab(REPO / lab_file).model_copy(update={"name": name})
    lab = Lab(spec)
    out: dict[str, float] = {}
    try:
        t0 = time.perf_counter()
        lab.up(wait=False)
        out["up (namespaces, daemons, config)"] = time.perf_counter() - t0
        out["converge"] = lab.wait_converged()
        rec = record(lab, DEFAULT_PLAN)
        out[f"record ({len(rec.recordings)} commands)"] = rec.seconds
    finally:
        t0 = time.perf_counter()
        lab.down()
        out["down"] = time.perf_counter() - t0
    return out


def main() -> None:
    print("dialect parse rate (fresh lines, resolutions/s)")
    for os_name, lines in (("frr", FRR_LINES), ("cisco_ios", IOS_LINES)):
        rate, load = parse_rate(os_name, lines)
        print(f"  {os_name:<10} {rate:>10,.0f}/s   load {load:.2f} s")
    for lab_file, name, baseline in (
        ("tasks/labs/triangle.yaml", "bench-tri", "converge 6-14, down 1.3-1.5"),
        ("tasks/labs/edge.yaml", "bench-edge", "converge about 15 (4 FRR routers, a Linux firewall)"),
    ):
        print(f"live lab ({lab_file}), seconds; baseline: {baseline}")
        times = lab_times(lab_file, name)
        if isinstance(times, str):
            print(f"  {times}")
        else:
            for what, value in times.items():
                print(f"  {what:<36} {value:6.1f}")


if __name__ == "__main__":
    main()
