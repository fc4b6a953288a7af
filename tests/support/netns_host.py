"""A second network host on this machine: a network namespace joined to the host by a veth pair
(a /30 per test process), for tests that need a peer at another address than the machine's own -
the "real second machine" of docs/ray.md. Root only. Named by the test process (``rayw<pid>``), so
two test runs on one machine each get their own; a run killed mid-test leaves its namespace and the
processes in it, which the next one sweeps (:func:`sweep_dead_hosts`)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

PREFIX = "rayw"


@dataclass(frozen=True)
class NetnsHost:
    name: str
    """The namespace: run a command on the second host with ``ip netns exec NAME``."""
    host_ip: str
    """This machine's address on the link (the host side of the veth)."""
    peer_ip: str
    """The second host's address."""

    def exec(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def allow_only(self, inbound: list[str], outbound: list[str]) -> None:
        """A packet filter on the second host, as between two machines with only some ports open:
        new TCP connections from this machine to the ports ``inbound`` (nft port expressions: ``6379``,
        ``20000-20019``), and from the second host to this machine's ports ``outbound``; replies and
        the second host's own loopback pass, everything else on the link is dropped."""
        rules = f"""
table inet ctb_filter {{
  chain input {{
    type filter hook input priority 0; policy drop;
    iif lo accept
    ct state established,related accept
    ip saddr {self.host_ip} tcp dport {{ {", ".join(inbound)} }} accept
  }}
  chain output {{
    type filter hook output priority 0; policy drop;
    oif lo accept
    ct state established,related accept
    ip daddr {self.host_ip} tcp dport {{ {", ".join(outbound)} }} accept
  }}
}}
"""
        done = subprocess.run(
            ["ip", "netns", "exec", self.name, "nft", "-f", "-"],
            input=rules,
            capture_output=True,
            text=True,
            timeout=30,
        )
        if done.returncode != 0:
            raise RuntimeError(f"nft in {self.name}: {done.stderr.strip()}")


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done


def _remove(name: str) -> None:
    """End every process in the namespace, then delete it (its veth end goes with it, and the peer)."""
    pids = [int(p) for p in _ip("netns", "pids", name, check=False).stdout.split() if p.isdigit()]
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _ip("netns", "del", name, check=False)


def sweep_dead_hosts() -> list[str]:
    """Remove the namespaces of test processes that are gone; a live process's are left alone."""
    listed = _ip("netns", "list", check=False).stdout
    swept = []
    for m in re.finditer(rf"^({PREFIX}(\d+))\b", listed, re.MULTILINE):
        if not Path(f"/proc/{m.group(2)}").exists():
            _remove(m.group(1))
            swept.append(m.group(1))
    return swept


@contextmanager
def netns_host() -> Iterator[NetnsHost]:
    """The second host, up (its loopback too: an attempt's replay listens there), removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("a second host in a network namespace needs root")
    sweep_dead_hosts()
    pid = os.getpid()
    base = f"10.213.{(pid >> 6) & 255}.{(pid & 63) * 4}"
    net = base.rsplit(".", 1)[0]
    last = int(base.rsplit(".", 1)[1])
    host = NetnsHost(f"{PREFIX}{pid}", f"{net}.{last + 1}", f"{net}.{last + 2}")
    outer, inner = f"rwh{pid}", f"rwn{pid}"
    try:
        _ip("netns", "add", host.name)
        _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        _ip("link", "set", inner, "netns", host.name)
        _ip("addr", "add", f"{host.host_ip}/30", "dev", outer)
        _ip("link", "set", outer, "up")
        _ip("-n", host.name, "addr", "add", f"{host.peer_ip}/30", "dev", inner)
        _ip("-n", host.name, "link", "set", inner, "up")
        _ip("-n", host.name, "link", "set", "lo", "up")
        yield host
    finally:
        _remove(host.name)
        _ip("link", "del", outer, check=False)
    assert host.name not in _ip("netns", "list", check=False).stdout
