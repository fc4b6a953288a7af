"""What an external agent's process tree may see: the sandbox (``ctb-eval run --sandbox``).

A coding agent has a shell and reads files. Unsandboxed it can read the gold out of ``hidden.yaml``,
out of the task set's git history, out of the runner's ``/proc/<pid>/cwd`` or the run folder - a
benchmark that allows that measures nothing. So every external agent runs through a
:class:`Launcher`:

``--sandbox bwrap``
    Bubblewrap (the distribution's ``bwrap``; Debian package ``bubblewrap``). The agent's root is
    an empty tmpfs holding only: its fresh workspace (read-write; its working directory and
    ``HOME``), the adapter's per-attempt folders, read-only system folders (``/usr``, the ``/bin``
    and ``/lib*`` links, a subset of ``/etc``), the Python runtime and virtual environment that run
    the replay proxy, the ``ctbench`` package folder itself (never the checkout around it, so an
    editable install from a checkout with ``tasks/`` shows no task), the files named on its
    command line, a private ``/tmp``, its own ``/proc`` in a new PID namespace and a minimal
    ``/dev``. The environment is an allowlist (``PATH`` limited to folders it can see, locale,
    ``TERM``, ``TZ``) plus what the adapter sets; nothing that names the task set or the run
    folder survives. The tree dies with the runner (``--die-with-parent``) and runs in a new
    session (no terminal to inject keystrokes into).
``--sandbox none``
    The agent runs as the runner's user with the runner's environment and file system: it can
    read the answers. Runs record this and every report calls them "unsandboxed".
``--sandbox auto`` (default)
    ``bwrap`` when it works on this machine; otherwise external agents refuse to start, with a
    message that says how to install bubblewrap or to pass ``--sandbox none``.

Network (``--sandbox-network``, bwrap only):

``loopback`` (default; issue 25: attempts are alone)
    A new network namespace with only a loopback interface, one per attempt, listening on the same
    ``127.0.0.1:PORT`` as the runner's replay server and on each configured model endpoint's port;
    those connections are carried to Unix sockets (the replay server's own, the runner's relays):
    the replay and the model answer at their usual URLs, and nothing else is reachable at all. A
    root runner makes the namespace and its listening sockets itself and forwards from the runner
    (:mod:`ctbench.evaluate.netns`: no process of its own per attempt); otherwise bubblewrap makes
    it and a small forwarder inside (:mod:`ctbench.evaluate.netbridge`) listens there. A model endpoint given by host name
    is mapped to 127.0.0.1 in the sandbox's ``/etc/hosts`` (TLS passes through untouched); for a
    port below 1024 (``https://``: 443) the sandbox keeps ``CAP_NET_BIND_SERVICE``, which counts
    only in its own network (a runner that is not root runs the agent as uid 0 of the sandbox's
    user namespace then, see :meth:`BwrapSandbox._identity_args`). Other attempts, the machine's services and a Ray node's GCS, raylet
    and dashboard are not there to reach.
``host``
    The agent shares the runner's network: it reaches the replay on 127.0.0.1 and any model
    endpoint - and anything else the machine can reach, other attempts included.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from ctbench.errors import CtbError
from ctbench.evaluate.agents.process import (
    Launch,
    Launcher,
    Prepared,
    release,
    socket_state_dir,
    unsandboxed,
)
from ctbench.evaluate.limits import HostLimits, host_limits
from ctbench.evaluate.netns import Forwarder, pump_both, root_forwarder
from ctbench.evaluate.work import SandboxSettings
from ctbench.isolation import ETC_FILES, SYSTEM_DIRS, BwrapCommand, runtime_paths
from ctbench.isolation import resolved as _resolved

SandboxMode = Literal["auto", "bwrap", "none"]
NetworkMode = Literal["host", "loopback"]

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install -y bubblewrap; Fedora: dnf install "
    "bubblewrap) and allow unprivileged user namespaces, or pass --sandbox none to run the agent "
    "unsandboxed (it can then read the answers; runs say 'unsandboxed')"
)

ENV_ALLOWLIST = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TZ",
    "COLORTERM",
    "NO_COLOR",
)
"""Runner variables an agent inside the sandbox keeps (everything else it gets from its adapter)."""

TMPFS_BYTES = 512 * 1024 * 1024
"""Size of the sandbox's private ``/tmp`` and ``/var/tmp`` (tmpfs: memory)."""


class SandboxError(CtbError):
    """The sandbox cannot run this agent as asked (bubblewrap missing, a secret path to mount)."""


# --------------------------------------------------------------------------- helpers


def _inside(path: Path, root: Path) -> bool:
    """``path == root or path.is_relative_to(root)``, by their parts (``is_relative_to`` builds a
    path and raises inside: a few hundred of these a start added up to milliseconds)."""
    parts, under = path.parts, root.parts
    return parts[: len(under)] == under


def _overlaps(path: Path, secrets: Iterable[Path]) -> Path | None:
    """The secret path that ``path`` is inside of, or that is inside ``path``."""
    for secret in secrets:
        if _inside(path, secret) or _inside(secret, path):
            return secret
    return None


def _task_set_of(path: Path) -> Path | None:
    """The task set (a folder holding ``ctbench.yaml``) that ``path`` lies in, if any: any task set,
    not only the run's, since another checkout of the same set holds the same gold."""
    for parent in path.parents:
        if (parent / "ctbench.yaml").is_file():
            return parent
    return None


def _endpoint(text: str) -> tuple[str, int]:
    """``https://api.example.com/v1`` or ``HOST:PORT`` as (host, port)."""
    if "://" in text:
        parts = urlsplit(text)
        if not parts.hostname:
            raise SandboxError(f"model endpoint {text!r}: no host name")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return parts.hostname, port
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit():
        raise SandboxError(f"model endpoint {text!r}: expected a URL or HOST:PORT")
    return host.strip("[]"), int(port_text)


# --------------------------------------------------------------------------- none


@dataclass
class NoSandbox:
    """Unsandboxed: the runner's environment and file system, but the tree still dies with the runner."""

    name: str = "none"
    sandboxed: bool = False
    limits: HostLimits | None = None
    """Per-attempt caps and how this host enforces them (:mod:`ctbench.evaluate.limits`)."""

    def prepare(self, launch: Launch) -> Prepared:
        return unsandboxed(launch)

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- relays (loopback network)


class _UnixRelay:
    """Runner side of a model endpoint under ``loopback``: a Unix socket whose connections are
    carried to ``host:port`` (the sandbox's forwarder connects to the socket)."""

    def __init__(self, path: Path, host: str, port: int) -> None:
        self.path, self.host, self.port = path, host, port
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        path.chmod(0o600)
        self._sock.listen(128)
        self._closed = False
        threading.Thread(target=self._accept, name=f"ctb-relay-{host}:{port}", daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            upstream = socket.create_connection((self.host, self.port), timeout=30)
            upstream.settimeout(None)
        except OSError:
            conn.close()
            return
        pump_both(conn, upstream)

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


# --------------------------------------------------------------------------- bwrap


@dataclass
class _Forward:
    """Inside the sandbox, TCP ``127.0.0.1:port`` is carried to the Unix socket ``path``."""

    port: int
    path: Path


@dataclass
class BwrapSandbox:
    """Bubblewrap: see the module text for what an agent sees and what its network reaches."""

    bwrap: str
    network: NetworkMode = "host"
    forwards: list[_Forward] = field(default_factory=list)
    hosts_file: Path | None = None
    state_dir: Path | None = None
    relays: list[_UnixRelay] = field(default_factory=list)
    secret_paths: list[Path] = field(default_factory=list)
    """Run-wide paths no agent may see (the task set, its git folder, the run folder)."""
    etc_dir: Path | None = None
    """The run's copy of what an agent sees of ``/etc`` (:func:`build_etc`), else each name bound."""
    name: str = "bwrap"
    sandboxed: bool = True
    limits: HostLimits | None = None
    """Per-attempt caps and how this host enforces them (:mod:`ctbench.evaluate.limits`)."""
    forwarder: Forwarder | None = None
    """Under ``loopback``, for a root runner: the runner makes each attempt's network namespace and
    serves its endpoints itself (:mod:`ctbench.evaluate.netns`); else bubblewrap makes it and the
    forwarder inside (:mod:`ctbench.evaluate.netbridge`) serves them."""

    def _system_args(self) -> list[str]:
        return BwrapCommand(self.bwrap, etc_dir=self.etc_dir, hosts_file=self.hosts_file).system_args()

    def _bind_service_args(self) -> list[str]:
        """A model endpoint on a port below 1024 (``https://...``: 443) needs the capability to
        listen there; it is given back only then, and only counts in the sandbox's own network."""
        if any(f.port < 1024 for f in self.forwards):
            return [*self._identity_args(), "--cap-add", "CAP_NET_BIND_SERVICE"]
        return []

    def _identity_args(self) -> list[str]:
        """For a runner that is not root: the agent runs as uid and gid 0 of the sandbox's own user
        namespace (still the runner's user outside, and without capabilities but the one above).

        Run by another user, bubblewrap maps that user to 0 to mount ``/dev``, then enters a second,
        nested user namespace to give the agent its own uid back; a capability held there does not
        count in the network namespace, which belongs to the first. Asking for uid and gid 0 keeps
        one user namespace - the one that owns the network - so the forwarder may listen on port 443.
        A root runner's agent is uid 0 in the sandbox already.
        """
        if os.geteuid() == 0:
            return []
        return ["--uid", "0", "--gid", "0"]

    @functools.cached_property
    def _runtime(self) -> list[Path]:
        """:func:`runtime_paths`, resolved once per run rather than once per attempt."""
        return runtime_paths()

    def _path_env(self, visible: Sequence[Path]) -> str:
        """The runner's PATH, kept only where the sandbox can see the folder."""
        keep: list[str] = []
        for entry in os.environ.get("PATH", "").split(os.pathsep) + [str(Path(sys.executable).parent)]:
            if not entry or entry in keep:
                continue
            p = Path(entry)
            if p.is_absolute() and any(_inside(p, v) for v in visible):
                keep.append(entry)
        return os.pathsep.join(keep) or "/usr/bin:/bin"

    def prepare(self, launch: Launch) -> Prepared:
        secrets = _resolved([*self.secret_paths, *launch.secret_paths])
        workspace = Path(launch.workspace).resolve()
        home = Path(launch.home).resolve() if launch.home is not None else workspace
        ro = self._runtime + _resolved(launch.read_only)
        # files named on the command line (an agent script given by path), each file alone
        for arg in launch.argv:
            if os.path.isabs(arg) and os.path.isfile(arg):
                for file in _resolved([arg]):
                    if (task_set := _task_set_of(file)) is not None:
                        raise SandboxError(
                            f"refusing to show {file} to the agent: it is inside the task set "
                            f"{task_set}; keep agent scripts outside any task set"
                        )
                    ro.append(file)
        rw = [workspace, home, *_resolved(launch.read_write)]
        for path in [*ro, *rw]:
            if (secret := _overlaps(path, secrets)) is not None:
                raise SandboxError(
                    f"refusing to show {path} to the agent: it overlaps {secret}, which the "
                    "agent must not see"
                )
        runner_net = self.network == "loopback" and self.forwarder is not None
        size = TMPFS_BYTES  # memory-backed: sized, so one agent cannot take the machine's RAM
        args = BwrapCommand(
            self.bwrap,
            # runner_net: the namespace nsenter puts bubblewrap in, made by the runner
            share_net=self.network == "host" or runner_net,
            hostname="sandbox",
            extra=[] if runner_net else self._bind_service_args(),
            etc_dir=self.etc_dir,
            hosts_file=self.hosts_file,
            tmpfs=[("/tmp", size), ("/var/tmp", size), ("/run", 16 * 1024 * 1024)],
            dirs=["/var"],
            read_only=ro,
            read_write=rw,
            binds=[*launch.unix_sockets, *([] if runner_net else [f.path for f in self.forwards])],
            chdir=workspace,  # writable: the binds and /tmp only (the root is remounted read-only)
        ).argv()
        visible = [Path(d) for d in SYSTEM_DIRS] + ro + rw
        env = {k: os.environ[k] for k in ENV_ALLOWLIST if k in os.environ}
        env.update(
            {
                "PATH": self._path_env(visible),
                "HOME": str(home),
                "TMPDIR": "/tmp",
                "SHELL": "/bin/sh",
                "USER": "agent",
                "LOGNAME": "agent",
                "PYTHONDONTWRITEBYTECODE": "1",
            }
        )
        env.update(launch.env)
        notes: list[str] = []
        for key in list(env):
            value = env[key]
            if any(str(s) in value for s in secrets):
                del env[key]
                notes.append(
                    f"sandbox: {key} not passed to the agent (it names a path the agent must not see)"
                )
        argv = list(launch.argv)
        if runner_net:
            assert self.forwarder is not None
            net = self.forwarder.open([(f.port, f.path) for f in self.forwards])
            forwarder = self.forwarder
            return Prepared(
                argv=[forwarder.nsenter, f"--net={net.ns_path}", *args, "--", *argv],
                env=env,
                cwd=workspace,
                pdeathsig=True,
                notes=tuple(notes),
                release=lambda: forwarder.release(net),
                bwrap_at=2,
                enter=lambda: forwarder.inside(net),
            )
        if self.forwards:
            bridge = Path(__file__).with_name("netbridge.py").resolve()
            argv = [
                sys.executable,
                "-I",
                "-S",
                str(bridge),
                *[f"{f.port}={f.path}" for f in self.forwards],
                "--",
                *argv,
            ]
        return Prepared(
            argv=args + ["--", *argv], env=env, cwd=workspace, pdeathsig=True, notes=tuple(notes), bwrap_at=0
        )

    def close(self) -> None:
        if self.forwarder is not None:
            self.forwarder.close()
            self.forwarder = None
        for relay in self.relays:
            relay.close()
        self.relays.clear()
        if self.state_dir is not None:
            release(self.state_dir)


def _not_for_everyone(folder: str, names: list[str]) -> set[str]:
    """What ``copytree`` leaves out of the copy of ``/etc``: entries other users may not read
    (``/etc/ssl/private``), which a sandboxed agent, uid 0 of its namespace, could otherwise read
    as the runner's own files."""
    out = set()
    for name in names:
        with contextlib.suppress(OSError):
            st = os.lstat(os.path.join(folder, name))
            if not os.path.islink(os.path.join(folder, name)) and not st.st_mode & 0o004:
                out.add(name)
    return out


def build_etc(state: Path, hosts: str | None = None) -> Path:
    """The run's copy of what an agent sees of ``/etc`` (:data:`ETC_FILES`), made once per run.

    Bound as one folder, it costs each attempt's bubblewrap one mount instead of one per name (about
    20). Files are copied with their links followed (``/etc/resolv.conf`` may be a link into
    ``/run``, which the sandbox does not show); folders keep their inner links (certificates into
    ``/usr/share``); entries other users may not read are left out. ``hosts``: the sandbox's own
    ``/etc/hosts`` (under ``loopback``).
    """
    etc = state / "etc"
    etc.mkdir(mode=0o755)
    etc.chmod(0o755)
    for name in ETC_FILES:
        src, dst = Path("/etc") / name, etc / name
        with contextlib.suppress(OSError, shutil.Error):
            if name == "hosts" and hosts is not None:
                dst.write_text(hosts, encoding="utf-8")
            elif src.is_dir():
                shutil.copytree(src, dst, symlinks=True, ignore=_not_for_everyone)
            elif src.is_file() and os.stat(src).st_mode & 0o004:
                shutil.copy2(src, dst)
    return etc


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def probe_bwrap(bwrap: str, *, network: NetworkMode = "host") -> str | None:
    """Why bubblewrap cannot run a sandbox here (its own words), or None when it can."""
    cmd = [
        *BwrapCommand(bwrap, share_net=network == "host", tmpfs=(), remount_ro=False).argv(),
        "--",
        "/bin/true",
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode != 0:
        return (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    return None


def secret_paths_for(*paths: Path | None) -> list[Path]:
    """The paths given (task set, run folder) and the ``.git`` folder of any repository holding them.

    Only a repository's ``.git`` is secret, not its whole work tree: an editable install of ctbench
    from a checkout that also holds ``tasks/`` must still be able to show the agent its package folder.
    """
    out: list[Path] = []
    for path in paths:
        if path is None:
            continue
        p = Path(path).resolve()
        out.append(p)
        for parent in [p, *p.parents]:
            if (parent / ".git").exists():
                out.append(parent / ".git")
    return list(dict.fromkeys(out))


def require_bwrap(mode: SandboxMode, network: NetworkMode = "host") -> str:
    """The ``bwrap`` binary, once it has shown it can build this sandbox here; else the one-line
    refusal ``--sandbox auto|bwrap`` gives before any external agent starts."""
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxError(f"--sandbox {mode}: bubblewrap (bwrap) is not installed; {INSTALL_HINT}")
    problem = probe_bwrap(bwrap, network=network)
    if problem is not None:
        raise SandboxError(
            f"--sandbox {mode}: bubblewrap cannot create a sandbox here ({problem}); {INSTALL_HINT}"
        )
    return bwrap


def make_launcher(
    settings: SandboxSettings,
    *,
    replay_url: str | None = None,
    replay_socket: Path | None = None,
    secret_paths: Sequence[Path] = (),
    model_endpoints: Sequence[str] = (),
    ssh_url: str | None = None,
    runner_netns: bool = True,
) -> Launcher:
    """The run's launcher for external agents (call once per run, ``close()`` it at the end).

        ``replay_url`` / ``replay_socket``: the runner's replay server over TCP and its Unix socket;
        under ``loopback`` the sandbox carries the URL's port to the socket, so the same URL works
        inside. ``model_endpoints`` (URLs or HOST:PORT, e.g. the run's ``--base-url``): what else a
        ``loopback`` sandbox reaches. ``secret_paths``: what no agent may see (pass :func:`secret_paths_for` of the task set
        and the run folder); nothing inside or around them is mounted. ``ssh_url`` (``ssh://127.0.0.1:PORT``,
        the run's SSH front end under ``--ssh``): reached inside a ``loopback`` sandbox at the same
        address, through a relay like a model endpoint's. ``runner_netns``: under ``loopback``, a root
    runner makes each attempt's network itself (:mod:`ctbench.evaluate.netns`); False keeps bubblewrap's
    and the forwarder inside it, as a runner that is not root does (the bench compares the two). Raises :class:`SandboxError`
        when the sandbox asked for (or ``auto``'s) cannot run.
    """
    caps = host_limits(settings.limits)
    if settings.mode == "none":
        return NoSandbox(limits=caps)
    if settings.mode == "in-process":  # what run.yaml records for built-in agents; never asked for
        raise SandboxError("--sandbox in-process is not a sandbox: choose auto, bwrap or none")
    bwrap = require_bwrap(settings.mode, settings.network)
    secrets = list(secret_paths)
    state = socket_state_dir("ctbench-net-")
    if settings.network == "host":
        sandbox = BwrapSandbox(bwrap, network="host", state_dir=state, secret_paths=secrets, limits=caps)
        try:
            sandbox.etc_dir = build_etc(state)
        except BaseException:
            sandbox.close()
            raise
        return sandbox
    sandbox = BwrapSandbox(bwrap, network="loopback", state_dir=state, secret_paths=secrets, limits=caps)
    try:
        hosts = ["127.0.0.1 localhost sandbox", "::1 localhost"]
        if replay_url is not None:
            if replay_socket is None:
                raise SandboxError("--sandbox-network loopback needs the replay server's Unix socket")
            _, port = _endpoint(replay_url)
            sandbox.forwards.append(_Forward(port, Path(replay_socket)))
        if ssh_url is not None:
            host, port = _endpoint(ssh_url.replace("ssh://", "tcp://", 1))
            relay = _UnixRelay(state / "ssh.sock", host, port)
            sandbox.relays.append(relay)
            sandbox.forwards.append(_Forward(port, relay.path))
        for i, text in enumerate(dict.fromkeys(model_endpoints)):
            host, port = _endpoint(text)
            if any(f.port == port for f in sandbox.forwards):
                raise SandboxError(f"model endpoint {text!r}: port {port} is taken inside the sandbox")
            relay = _UnixRelay(state / f"model{i}.sock", host, port)
            sandbox.relays.append(relay)
            sandbox.forwards.append(_Forward(port, relay.path))
            if host not in ("127.0.0.1", "localhost", "::1"):
                hosts.append(f"127.0.0.1 {host}")
        sandbox.hosts_file = state / "hosts"
        sandbox.hosts_file.write_text("\n".join(hosts) + "\n", encoding="utf-8")
        sandbox.etc_dir = build_etc(state, "\n".join(hosts) + "\n")
        if runner_netns:
            sandbox.forwarder = root_forwarder()
        if sandbox.forwarder is None and (low := sorted({f.port for f in sandbox.forwards if f.port < 1024})):
            _probe_low_ports(sandbox, state, low)
    except BaseException:
        sandbox.close()
        raise
    return sandbox


def _probe_low_ports(sandbox: BwrapSandbox, state: Path, ports: Sequence[int]) -> None:
    """Once per run: can the sandbox's forwarder listen on these ports below 1024 here? Where
    bubblewrap cannot hand it the capability, say so before any attempt, not in every task's log."""
    prepared = sandbox.prepare(Launch(argv=["/bin/true"], workspace=state))
    try:
        proc = subprocess.run(
            prepared.argv,
            env=prepared.env,
            cwd=prepared.cwd,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        problem = str(exc)
    else:
        if proc.returncode == 0:
            return
        problem = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    listed = ", ".join(str(p) for p in ports)
    raise SandboxError(
        f"--sandbox-network loopback: the sandbox cannot listen on port {listed} for the model "
        f"endpoint here ({problem}); give --base-url with a port of 1024 or above, or pass "
        "--sandbox-network host (the agent then shares the machine's network)"
    )


def describe(launcher: Launcher | None) -> str:
    """The one word reports print: ``bwrap``, ``bwrap (loopback network)`` or ``unsandboxed``."""
    if launcher is None or not launcher.sandboxed:
        return "unsandboxed"
    network = getattr(launcher, "network", "host")
    return "bwrap" if network == "host" else f"bwrap ({network} network)"


__all__ = [
    "BwrapSandbox",
    "INSTALL_HINT",
    "Launcher",
    "NetworkMode",
    "NoSandbox",
    "SandboxError",
    "SandboxMode",
    "SandboxSettings",
    "build_etc",
    "describe",
    "find_bwrap",
    "make_launcher",
    "probe_bwrap",
    "require_bwrap",
    "runtime_paths",
    "secret_paths_for",
]
