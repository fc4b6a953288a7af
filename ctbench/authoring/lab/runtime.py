"""Bringing a lab up in network namespaces and always taking it down again.

Each device is a network namespace ``ctb-<lab>-<device>``; each link a veth pair created directly
inside its two namespaces (nothing is left in the host's namespace). A router runs zebra, staticd,
ospfd and bgpd with ``-N`` and its own socket folder, all under one ``unshare --uts`` so that the
router's host name is its own (FRR takes the prompt from it); vtysh is run inside the same network and
UTS namespaces. What is created is written to a state file *before* it is created, so a lab left by a
killed process is found and removed by the next ``down`` (or ``up``) of that lab.

Everything here runs real programs as root: ``ip``, ``unshare``, ``nsenter``, the FRR daemons and
vtysh. Addresses in a lab file must be private; the namespaces have no route out of the lab.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ctbench.errors import CtbError
from ctbench.yamlio import atomic_write_text

from .spec import LabSpec

FRR_DIR = Path("/usr/lib/frr")
STATE_ENV = "CTBENCH_LAB_STATE"
DEFAULT_STATE = Path("/run/ctbench-labs")
HOST_PROGRAMS = ("ip", "ping", "traceroute", "nft")
"""What a command on a lab host may run (the ``linux`` dialect's commands)."""
COMMAND_TIMEOUT = 60.0

Progress = Callable[[str], None]


def _quiet(_msg: str) -> None:
    return None


def missing_requirements() -> list[str]:
    """What this machine lacks to run a lab (empty when it can): root, FRR, iproute2, util-linux."""
    missing: list[str] = []
    if os.geteuid() != 0:
        missing.append("root (labs create network namespaces)")
    for daemon in ("zebra", "staticd", "ospfd", "bgpd"):
        if not (FRR_DIR / daemon).exists():
            missing.append(f"{FRR_DIR / daemon} (apt-get install frr)")
            break
    for tool, package in (
        ("vtysh", "frr"),
        ("ip", "iproute2"),
        ("nsenter", "util-linux"),
        ("unshare", "util-linux"),
    ):
        if shutil.which(tool) is None:
            missing.append(f"{tool} ({package})")
    return missing


def state_root() -> Path:
    """Where labs keep their state (sockets, pid files, logs): ``$CTBENCH_LAB_STATE`` or /run/ctbench-labs."""
    return Path(os.environ.get(STATE_ENV) or DEFAULT_STATE)


def _run(
    argv: Sequence[str], *, check: bool = True, timeout: float = 30.0, output: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv``; ``output``: its standard output and error go to that file, not a pipe.

    A file for what starts daemons: were `lab up` killed while one starts, its first write to a pipe
    nobody reads any more would kill it (SIGPIPE) and leave the lab half up.
    """
    if output is None:
        proc = subprocess.run(list(argv), capture_output=True, timeout=timeout, check=False)
        err = proc.stderr
    else:
        with output.open("wb") as sink:
            proc = subprocess.run(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                timeout=timeout,
                check=False,
            )
        err = output.read_bytes() if proc.returncode != 0 else b""
    if check and proc.returncode != 0:
        raise CtbError(
            f"lab: {' '.join(argv)} failed ({proc.returncode}): {err.decode(errors='replace').strip()}"
        )
    return proc


def namespace(lab: str, device: str) -> str:
    """The network namespace of ``device`` in lab ``lab``."""
    return f"ctb-{lab}-{device.lower()}"


def _netns_list() -> list[str]:
    out = _run(["ip", "netns", "list"], check=False).stdout.decode()
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _pids_in(ns: str) -> list[int]:
    out = _run(["ip", "netns", "pids", ns], check=False).stdout.decode()
    return [int(p) for p in out.split() if p.isdigit()]


def _stop_pids(pids: list[int], grace: float = 3.0) -> None:
    """TERM, then KILL what is still there: the processes of a lab's own namespaces only."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if Path(f"/proc/{p}").exists() and not _zombie(p)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _zombie(pid: int) -> bool:
    try:
        return ") Z" in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True


@dataclass(frozen=True)
class Leftovers:
    """What a ``down`` removed (or found)."""

    namespaces: tuple[str, ...]
    processes: int


def teardown(lab: str, root: Path | None = None) -> Leftovers:
    """Remove everything of lab ``lab``: its daemons, namespaces (and so their veths) and state folder.

    Safe to repeat and to run after a crash: it reads the state file and also looks for namespaces
    named ``ctb-<lab>-*``, and stops only processes inside those namespaces.
    """
    folder = (root or state_root()) / lab
    names: set[str] = set()
    state = folder / "state.json"
    if state.exists():
        try:
            names.update(json.loads(state.read_text()).get("namespaces", []))
        except (OSError, ValueError):
            pass
    prefix = f"ctb-{lab}-"
    names.update(ns for ns in _netns_list() if ns.startswith(prefix))
    present = [ns for ns in sorted(names) if ns in set(_netns_list())]
    pids = [pid for ns in present for pid in _pids_in(ns)]
    _stop_pids(pids)
    for ns in present:
        _run(["ip", "netns", "del", ns], check=False)
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    return Leftovers(tuple(present), len(pids))


class Lab:
    """A lab brought up from a :class:`LabSpec`; use as a context manager so it always comes down."""

    def __init__(self, spec: LabSpec, root: Path | None = None, progress: Progress = _quiet) -> None:
        self.spec = spec
        self.root = root or state_root()
        self.folder = self.root / spec.name
        self.progress = progress

    # ------------------------------------------------------------------ naming

    def ns(self, device: str) -> str:
        return namespace(self.spec.name, device)

    def router_dir(self, device: str) -> Path:
        return self.folder / device

    # ------------------------------------------------------------------ up / down

    def __enter__(self) -> Lab:
        try:
            self.up()
        except BaseException:
            self.down()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()

    def _write_state(self, namespaces: list[str]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.folder / "state.json", json.dumps({"namespaces": namespaces}, indent=1) + "\n")

    def up(self, *, wait: bool = True) -> float:
        """Create namespaces, links, daemons and configuration; wait for convergence. Seconds taken."""
        missing = missing_requirements()
        if missing:
            raise CtbError("lab: this machine lacks " + "; ".join(missing), exit_code=2)
        started = time.monotonic()
        gone = teardown(self.spec.name, self.root)  # a lab of this name left by a killed process
        if gone.namespaces:
            self.progress(f"removed a leftover lab {self.spec.name} ({len(gone.namespaces)} namespaces)")
        spec = self.spec
        names = [self.ns(d) for d in spec.devices()]
        self._write_state(names)  # before creating anything: a crash from here on is cleaned by `down`
        for device, ns in zip(spec.devices(), names, strict=True):
            _run(["ip", "netns", "add", ns])
            _run(["ip", "-n", ns, "link", "set", "lo", "up"])
            if device in spec.routers:
                _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
        for link in spec.links:
            a, b = link.ends()
            _run(
                ["ip", "link", "add", a.interface, "netns", self.ns(a.device), "type", "veth",
                 "peer", "name", b.interface, "netns", self.ns(b.device)]
            )  # fmt: skip
            for end in (a, b):
                ns = self.ns(end.device)
                if link.mtu:
                    _run(["ip", "-n", ns, "link", "set", end.interface, "mtu", str(link.mtu)])
                if end.address:
                    _run(["ip", "-n", ns, "addr", "add", end.address, "dev", end.interface])
                _run(["ip", "-n", ns, "link", "set", end.interface, "up"])
        for name, host in spec.hosts.items():
            ns = self.ns(name)
            if host.forward:
                _run(["ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
            if host.gateway:
                _run(["ip", "-n", ns, "route", "add", "default", "via", host.gateway])
            for route in host.routes:
                _run(["ip", "-n", ns, "route", "add", route.to, "via", route.via])
            for rule in host.nft:
                if shutil.which("nft") is None:
                    raise CtbError(f"lab: host {name} has nft rules; this machine lacks nft (nftables)")
                _run(["ip", "netns", "exec", ns, "nft", rule])
        for name in spec.routers:
            self._start_router(name)
        self.progress(f"lab {spec.name}: {len(spec.routers)} routers, {len(spec.hosts)} hosts up")
        if wait:
            self.wait_converged()
        return time.monotonic() - started

    def _start_router(self, name: str) -> None:
        router = self.spec.routers[name]
        folder = self.router_dir(name)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.chown(folder, "frr", "frr")
        commands = [f"hostname {shlex.quote(name)}"]
        for daemon in router.daemons:
            argv = [
                str(FRR_DIR / daemon), "-d", "-N", self.ns(name), "--vty_socket", str(folder),
                "-z", str(folder / "zserv.api"), "-i", str(folder / f"{daemon}.pid"),
                "-f", "/dev/null", "-u", "frr", "-g", "frr", "--log", f"file:{folder / daemon}.log",
            ]  # fmt: skip
            commands.append(" ".join(shlex.quote(a) for a in argv))
        script = " && ".join(commands)
        _run(
            ["ip", "netns", "exec", self.ns(name), "unshare", "--uts", "sh", "-c", script],
            timeout=60,
            output=folder / "start.log",
        )
        conf = folder / "frr.conf"
        atomic_write_text(conf, f"hostname {name}\n{router.config}")
        out = self.vtysh(name, ["-f", str(conf)])
        if out.returncode != 0:
            text = (out.stdout + out.stderr).decode(errors="replace").strip()
            raise CtbError(f"lab: the configuration of {name} was refused:\n{text}")

    def down(self) -> Leftovers:
        """Take the lab down (idempotent)."""
        return teardown(self.spec.name, self.root)

    # ------------------------------------------------------------------ commands

    def _zebra_pid(self, name: str) -> int:
        try:
            return int((self.router_dir(name) / "zebra.pid").read_text().strip())
        except (OSError, ValueError):
            raise CtbError(f"lab: router {name} is not running (no zebra pid file)") from None

    def vtysh_argv(self, name: str) -> list[str]:
        """The argv that runs vtysh on router ``name`` (inside its network and UTS namespaces)."""
        pid = self._zebra_pid(name)
        return [
            "nsenter", f"--net=/run/netns/{self.ns(name)}", f"--uts=/proc/{pid}/ns/uts",
            "vtysh", "--vty_socket", str(self.router_dir(name)),
        ]  # fmt: skip

    def vtysh(self, name: str, args: Sequence[str]) -> subprocess.CompletedProcess[bytes]:
        env = {"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"), "HOME": "/root"}
        return subprocess.run(
            [*self.vtysh_argv(name), *args],
            capture_output=True,
            timeout=COMMAND_TIMEOUT,
            env=env,
            check=False,
        )

    def run(self, device: str, command: str) -> bytes:
        """What ``device`` prints for ``command``: vtysh on a router, the program itself on a host."""
        if device in self.spec.routers:
            proc = self.vtysh(device, ["-c", command])
            return proc.stdout + proc.stderr
        if device not in self.spec.hosts:
            raise CtbError(f"lab {self.spec.name}: no device {device!r}")
        argv = shlex.split(command)
        if not argv or argv[0] not in HOST_PROGRAMS:
            raise CtbError(f"lab: a host runs only {', '.join(HOST_PROGRAMS)}; not {command!r}")
        proc = subprocess.run(
            ["ip", "netns", "exec", self.ns(device), *argv],
            capture_output=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        return proc.stdout + proc.stderr

    def shell(self, device: str, argv: Sequence[str]) -> None:
        """Run a program (``ip link set ...``) inside ``device``'s namespace; for faults."""
        _run(["ip", "netns", "exec", self.ns(device), *argv])

    def wait_converged(self, timeout: float | None = None) -> float:
        """Poll the lab file's checks until all match; seconds taken, CtbError past the bound."""
        limit = self.spec.converge_timeout if timeout is None else timeout
        started = time.monotonic()
        pending = list(self.spec.converge)
        last_note = 0.0
        while pending:
            pending = [
                c
                for c in pending
                if not re.search(c.match, self.run(c.device, c.command).decode(errors="replace"), re.M)
            ]
            waited = time.monotonic() - started
            if not pending:
                break
            if waited > limit:
                what = "; ".join(f"{c.device}: {c.command!r} ~ {c.match!r}" for c in pending)
                raise CtbError(f"lab {self.spec.name}: not converged after {limit:.0f} s ({what})")
            if waited - last_note >= 5:
                last_note = waited
                self.progress(f"waiting for convergence: {len(pending)} checks left after {waited:.0f} s")
            time.sleep(0.5)
        took = time.monotonic() - started
        self.progress(f"converged in {took:.1f} s")
        return took
