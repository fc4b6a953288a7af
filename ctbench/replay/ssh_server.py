"""``ctb-replay ssh``: a task's devices behind a real SSH server, for terminals and automation.

SecureCRT, PuTTY, OpenSSH, netmiko, scrapli and the agents built on them speak SSH to an
interactive shell with a pty; this server (asyncssh) gives them one per login. The user name picks
the device (``ssh -p PORT CORE_SW_01@127.0.0.1``, case-insensitive like every device name of the
replay); each login is a shell on that device, answered by one replay :class:`Session` shared by
every connection, so the trajectory holds every command of every login, in order.

Authentication: a password (``--password`` / ``$CTBENCH_SSH_PASSWORD``) and/or the keys of an
authorized_keys file. A wrong password, a key not in the file or a user name that is no device of
the task are refused alike, as a device refuses a login (no hint which part was wrong). With no
credential configured, logins need none, which the CLI only allows on a loopback address.

The server's host key lives in the user's state folder, one per task set, so a client that saved it
in known_hosts does not see it change on the next start.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import os
import secrets
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import asyncssh

from ctbench.errors import CtbError
from ctbench.replay.ssh_terminal import DeviceTerminal, crlf

if TYPE_CHECKING:
    from ctbench.replay.session import Session

PASSWORD_ENV = "CTBENCH_SSH_PASSWORD"
HOST_KEY_NAME = "ssh_host_ed25519_key"


# --------------------------------------------------------------------------- host key


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ctbench" / "ssh"


def host_key_path(task_root: Path) -> Path:
    """Where the host key of the task set at ``task_root`` is kept (one key per task set)."""
    digest = hashlib.sha256(str(Path(task_root).resolve()).encode()).hexdigest()[:16]
    return state_dir() / digest / HOST_KEY_NAME


def load_host_key(path: Path) -> asyncssh.SSHKey:
    """The private host key at ``path``, created (ed25519, mode 0600, written atomically) if absent."""
    path = Path(path)
    if path.exists():
        try:
            return asyncssh.read_private_key(str(path))
        except (OSError, asyncssh.KeyImportError) as exc:
            raise CtbError(f"{path}: cannot read the SSH host key: {exc}") from None
    key = asyncssh.generate_private_key("ssh-ed25519", comment="ctb-replay ssh")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".hostkey-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(key.export_private_key())
            os.chmod(tmp, 0o600)
            os.link(tmp, path)  # never replaces a key another server wrote in the meantime
        finally:
            os.unlink(tmp)
    except FileExistsError:
        return asyncssh.read_private_key(str(path))
    except OSError as exc:
        raise CtbError(f"{path}: cannot write the SSH host key: {exc.strerror or exc}") from None
    return key


# --------------------------------------------------------------------------- credentials


@dataclass(frozen=True)
class Credentials:
    """What a login must present: the password, the authorized keys, or (both None) nothing."""

    password: str | None = None
    authorized_keys: asyncssh.SSHAuthorizedKeys | None = None

    @property
    def open(self) -> bool:
        return self.password is None and self.authorized_keys is None

    @classmethod
    def load(cls, password: str | None, authorized_keys: Path | None) -> Credentials:
        keys = None
        if authorized_keys is not None:
            try:
                keys = asyncssh.read_authorized_keys(str(authorized_keys))
            except OSError as exc:
                raise CtbError(f"--authorized-keys {authorized_keys}: {exc.strerror or exc}") from None
            except (ValueError, asyncssh.KeyImportError) as exc:
                raise CtbError(
                    f"--authorized-keys {authorized_keys}: not an authorized_keys file: {exc}"
                ) from None
        return cls(password=password or None, authorized_keys=keys)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# --------------------------------------------------------------------------- server


class _DeviceLogin(asyncssh.SSHServer):
    """One SSH connection: authenticates the device name and opens device shells on it."""

    def __init__(self, server: SshReplayServer) -> None:
        self.server = server
        self.device: str | None = None
        self.conn: asyncssh.SSHServerConnection | None = None
        self.password: str | None = None
        """The password the user logged in with: IOS's ``enable`` asks for it again."""

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn

    def begin_auth(self, username: str) -> bool:
        found = self.server.session.task.device(username)
        self.device = found.info.name if found is not None else None
        creds = self.server.credentials
        if self.device is not None and creds.open:
            return False  # no credential configured: the device lets the user in
        if self.device is not None and creds.authorized_keys is not None and self.conn is not None:
            self.conn.set_authorized_keys(creds.authorized_keys)
        return True

    def password_auth_supported(self) -> bool:
        return self.server.credentials.password is not None

    def validate_password(self, username: str, password: str) -> bool:
        expected = self.server.credentials.password
        ok = expected is not None and secrets.compare_digest(password.encode(), expected.encode())
        if ok and self.device is not None:
            self.password = password
        return ok and self.device is not None

    def session_requested(self) -> asyncssh.SSHServerSession[bytes] | bool:
        if self.device is None:
            return False
        return _DeviceChannel(
            self.server.session,
            self.device,
            self.server.idle_timeout,
            user_exec=self.server.user_exec,
            enable_secret=self.password,
        )


class _DeviceChannel(asyncssh.SSHServerSession[bytes]):
    """A shell (or one exec request) on a device: bytes to and from a :class:`DeviceTerminal`."""

    def __init__(
        self,
        session: Session,
        device: str,
        idle_timeout: float,
        *,
        user_exec: bool = False,
        enable_secret: str | None = None,
    ) -> None:
        self.session = session
        self.user_exec = user_exec
        self.enable_secret = enable_secret
        self.idle_timeout = idle_timeout
        self.device = device
        self.chan: asyncssh.SSHServerChannel[bytes] | None = None
        self.pty = False
        self.command: str | None = None
        self.terminal: DeviceTerminal | None = None
        self._idle: asyncio.TimerHandle | None = None

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self.chan = chan

    def pty_requested(self, term_type: str, term_size: tuple[int, int, int, int], term_modes: object) -> bool:
        self.pty = True
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        self.command = command
        return True

    def session_started(self) -> None:
        assert self.chan is not None
        if self.command is not None:
            # `ssh HOST 'show version'`: answer each line (no prompt, nothing echoed), then end with
            # status 0 as a device does; with `ssh -t` the line ends go out as a pty sends them.
            once = DeviceTerminal(self.session, self.device, pty=False)
            out = bytearray()
            for line in self.command.splitlines():
                if line.strip() and line.strip().lower() not in ("quit", "exit", "logout"):
                    out += once.run(line)
            self.chan.write(crlf(bytes(out)) if self.pty else bytes(out))
            self.chan.exit(0)
            return
        self.terminal = DeviceTerminal(
            self.session,
            self.device,
            pty=self.pty,
            user_exec=self.user_exec,
            enable_secret=self.enable_secret,
        )
        self.chan.write(self.terminal.greeting())
        self._arm()

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if self.terminal is None or self.chan is None or self.command is not None:
            return
        self._arm()
        try:
            out = self.terminal.feed(data)
        except CtbError as exc:
            # The session ended under the login (its attempt finished, its call limit reached):
            # say so and close the connection, as a device drops a session it has cleared.
            self._stop_timer()
            self.chan.write(crlf(f"\n% {exc}\n".encode()) if self.pty else f"% {exc}\n".encode())
            self.chan.exit(1)
            return
        if out:
            self.chan.write(out)
        if self.terminal.closed:
            self._stop_timer()
            self.chan.exit(0)

    def eof_received(self) -> bool:
        if self.terminal is not None and self.terminal.line.strip() and self.chan is not None:
            # piped input without a final newline still counts as the last command
            self.chan.write(self.terminal.feed(b"\n"))
        if self.chan is not None:
            self._stop_timer()
            self.chan.exit(0)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()

    def _arm(self) -> None:
        self._stop_timer()
        timeout = self.idle_timeout
        if timeout and timeout > 0:
            self._idle = asyncio.get_running_loop().call_later(timeout, self._timed_out)

    def _stop_timer(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def _timed_out(self) -> None:
        if self.chan is not None:
            self.chan.write(b"\r\n" if self.pty else b"")
            self.chan.exit(0)


@dataclass
class SshReplayServer:
    """The SSH front end of one replay session; :meth:`start` listens, :meth:`close` stops."""

    session: Session
    credentials: Credentials
    host_key: asyncssh.SSHKey
    idle_timeout: float = 1800.0
    user_exec: bool = False
    """IOS logins start in user EXEC (``>``); ``enable`` with the login password goes to ``#``."""
    _acceptor: asyncssh.SSHAcceptor | None = None

    async def start(self, host: str, port: int) -> str:
        """Listen on ``host``:``port`` (0 picks a free port); returns ``ssh://HOST:PORT`` once it accepts."""
        try:
            self._acceptor = await asyncssh.create_server(
                lambda: _DeviceLogin(self),
                host,
                port,
                server_host_keys=[self.host_key],
                encoding=None,
                line_editor=False,
                allow_scp=False,
                agent_forwarding=False,
                x11_forwarding=False,
                login_timeout=60,
                server_version="ctbench_replay",
            )
        except OSError as exc:
            raise CtbError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        return self.url

    @property
    def url(self) -> str:
        assert self._acceptor is not None
        sock = self._acceptor.sockets[0]
        host, port = sock.getsockname()[:2]
        return f"ssh://[{host}]:{port}" if ":" in host else f"ssh://{host}:{port}"

    @property
    def port(self) -> int:
        assert self._acceptor is not None
        return int(self._acceptor.sockets[0].getsockname()[1])

    def close(self) -> None:
        if self._acceptor is not None:
            self._acceptor.close()


class _TokenLogin(asyncssh.SSHServer):
    """A login on a runner's session: the password is the session's token, the user a device of it.

    What an agent under ``ctb-eval run`` would be given instead of an MCP endpoint: its own
    session's token, so its SSH commands land in its own trajectory. A token that grants no open
    session, or a user name that is no device of that session's task, is refused like a wrong
    password; a token never reaches another session.
    """

    def __init__(self, lookup: Callable[[str], Session | None], idle_timeout: float) -> None:
        self.lookup = lookup
        self.idle_timeout = idle_timeout
        self.session: Session | None = None
        self.device: str | None = None
        self.password: str | None = None

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        session = self.lookup(password)
        found = session.task.device(username) if session is not None else None
        if session is None or found is None:
            return False
        self.session, self.device, self.password = session, found.info.name, password
        return True

    def session_requested(self) -> asyncssh.SSHServerSession[bytes] | bool:
        if self.session is None or self.device is None:
            return False
        # IOS ``enable`` asks for the token again, as a device asks for the login's password
        return _DeviceChannel(self.session, self.device, self.idle_timeout, enable_secret=self.password)


@dataclass
class TokenSshServer:
    """SSH logins on the sessions a lookup grants by token (a runner-mode ``SessionRegistry.by_token``),
    served from a thread of its own so a synchronous runner can start and stop it."""

    lookup: Callable[[str], Session | None]
    host_key: asyncssh.SSHKey
    idle_timeout: float = 1800.0
    url: str = ""
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: object = None
    _acceptor: asyncssh.SSHAcceptor | None = None

    def start(self, host: str = "127.0.0.1", port: int = 0, ready_timeout: float = 10.0) -> str:
        """Listen on ``host``:``port`` in a daemon thread; returns ``ssh://HOST:PORT`` once it accepts."""
        import threading

        loop = asyncio.new_event_loop()
        started: list[str | BaseException] = []
        ready = threading.Event()

        async def listen() -> None:
            try:
                acceptor = await asyncssh.create_server(
                    lambda: _TokenLogin(self.lookup, self.idle_timeout),
                    host,
                    port,
                    server_host_keys=[self.host_key],
                    encoding=None,
                    line_editor=False,
                    allow_scp=False,
                    agent_forwarding=False,
                    x11_forwarding=False,
                    login_timeout=60,
                    server_version="ctbench_replay",
                )
                h, p = acceptor.sockets[0].getsockname()[:2]
                self._acceptor = acceptor
                started.append(f"ssh://{h}:{p}")
            except BaseException as exc:  # reported to the caller's thread
                started.append(exc)
            ready.set()

        def run() -> None:
            asyncio.set_event_loop(loop)
            loop.run_until_complete(listen())
            if started and isinstance(started[0], str):
                loop.run_forever()
            loop.close()

        thread = threading.Thread(target=run, name="ctb-replay-ssh", daemon=True)
        thread.start()
        if not ready.wait(ready_timeout) or not started:
            raise CtbError(f"the replay SSH server did not start on {host}:{port}")
        if isinstance(started[0], BaseException):
            raise CtbError(f"cannot listen on {host}:{port}: {started[0]}")
        self._loop, self._thread, self.url = loop, thread, started[0]
        return self.url

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stop(self) -> None:
        """Stop accepting and end the thread's loop (open logins end with it)."""
        loop, acceptor = self._loop, self._acceptor
        if loop is None:
            return
        self._loop = self._acceptor = None

        def shut() -> None:
            if acceptor is not None:
                acceptor.close()
            loop.stop()

        loop.call_soon_threadsafe(shut)


def serve(server: SshReplayServer, host: str, port: int, announce: Callable[[str], None]) -> None:
    """Run ``server`` until interrupted, calling ``announce(url)`` once it accepts connections."""

    async def main() -> None:
        url = await server.start(host, port)
        announce(url)
        try:
            await asyncio.Event().wait()
        finally:
            server.close()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass


__all__ = [
    "PASSWORD_ENV",
    "Credentials",
    "SshReplayServer",
    "TokenSshServer",
    "host_key_path",
    "is_loopback",
    "load_host_key",
    "serve",
]
