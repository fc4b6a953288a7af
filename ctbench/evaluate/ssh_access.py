"""SSH access for agents under ``ctb-eval run --ssh``: the replay's devices behind a real SSH server.

Agents built on netmiko, scrapli, Ansible's network_cli or a plain ``ssh`` log into devices; with
``--ssh`` the runner starts one SSH front end for the run (:class:`~ctbench.replay.ssh_server.TokenSshServer`
on 127.0.0.1, a fresh host key per run) beside its HTTP server, and each attempt gets:

``CTBENCH_SSH_HOST`` / ``CTBENCH_SSH_PORT``
    where to connect (``127.0.0.1`` and the server's port; the same address inside the sandbox,
    whose network carries the port to the runner as it does the replay's);
``CTBENCH_SSH_PASSWORD``
    the attempt's session token: with a device name as the user name it logs into that device of
    this attempt's task, and into nothing else (another attempt's devices refuse it);
``CTBENCH_SSH_KNOWN_HOSTS``
    a known_hosts file holding the server's key for that address, so a client can check the host
    (``ssh -o UserKnownHostsFile=$CTBENCH_SSH_KNOWN_HOSTS``; netmiko and scrapli accept any key
    by default).

Every command an agent sends over SSH is a call of its attempt's session, in the same trajectory
as its MCP or HTTP calls; paging and width commands are logged with outcome ``session``, which
scoring ignores.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.errors import CtbError

if TYPE_CHECKING:
    from ctbench.replay.session import Session
    from ctbench.replay.ssh_server import TokenSshServer

HOST_ENV = "CTBENCH_SSH_HOST"
PORT_ENV = "CTBENCH_SSH_PORT"
PASSWORD_ENV = "CTBENCH_SSH_PASSWORD"
KNOWN_HOSTS_ENV = "CTBENCH_SSH_KNOWN_HOSTS"
KNOWN_HOSTS_FILE = "ssh_known_hosts"
"""Its name in the attempt's I/O folder (beside the prompt, outside the workspace)."""

EXTRA_HINT = "pip install 'ctbench[ssh]'"


@dataclass(frozen=True)
class SshAccess:
    """What one attempt is given to log into its devices: address, password (its token), host key."""

    host: str
    port: int
    password: str
    host_key: str
    """The server's public key as an OpenSSH line (``ssh-ed25519 AAAA...``)."""

    @property
    def known_hosts_line(self) -> str:
        """The key as ``known_hosts`` holds it for this address (``[HOST]:PORT`` off port 22)."""
        where = self.host if self.port == 22 else f"[{self.host}]:{self.port}"
        return f"{where} {self.host_key}\n"

    def env(self, known_hosts: Path) -> dict[str, str]:
        """The agent's environment variables (``known_hosts``: where :meth:`write_known_hosts` wrote)."""
        return {
            HOST_ENV: self.host,
            PORT_ENV: str(self.port),
            PASSWORD_ENV: self.password,
            KNOWN_HOSTS_ENV: str(known_hosts),
        }

    def write_known_hosts(self, folder: Path) -> Path:
        path = folder / KNOWN_HOSTS_FILE
        path.write_text(self.known_hosts_line, encoding="utf-8")
        return path


class SshFrontEnd:
    """The run's SSH server: logins by session token on the sessions ``lookup`` grants.

    ``lookup`` is the runner-mode registry's ``by_token``: a revoked (finished) attempt's token
    opens nothing, so an SSH login can never outlive its attempt's grant or reach another's session.
    """

    def __init__(self, lookup: Callable[[str], Session | None]) -> None:
        self.lookup = lookup
        self._server: TokenSshServer | None = None
        self._host_key = ""

    def start(self, host: str = "127.0.0.1") -> str:
        """Listen on a free port of ``host``; returns ``ssh://HOST:PORT``. Raises :class:`CtbError`
        when the ``ssh`` extra (asyncssh) is not installed."""
        try:
            import asyncssh

            from ctbench.replay.ssh_server import TokenSshServer
        except ImportError:
            raise CtbError(f"--ssh needs the SSH front end's extra: {EXTRA_HINT}") from None
        # A key per run, never written to disk: each attempt gets it in its known_hosts file.
        key = asyncssh.generate_private_key("ssh-ed25519", comment="ctb-eval run --ssh")
        self._host_key = key.export_public_key().decode("ascii").strip()
        self._server = TokenSshServer(self.lookup, key)
        return self._server.start(host, 0)

    @property
    def url(self) -> str:
        return self._server.url if self._server is not None else ""

    def access(self, token: str) -> SshAccess:
        """The access of the attempt whose session was granted ``token``."""
        assert self._server is not None, "start() first"
        where = self._server.url.removeprefix("ssh://")
        host, _, port = where.rpartition(":")
        return SshAccess(host=host.strip("[]"), port=int(port), password=token, host_key=self._host_key)

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None


__all__ = [
    "HOST_ENV",
    "KNOWN_HOSTS_ENV",
    "PASSWORD_ENV",
    "PORT_ENV",
    "SshAccess",
    "SshFrontEnd",
]
