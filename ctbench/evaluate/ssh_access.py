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

Agent CLIs (Codex, Claude Code, Hermes) get the same variables and, because a model types shell
commands rather than writing a client, two files beside them in the attempt's folder:
``CTBENCH_SSH_CONFIG``, an OpenSSH client configuration with one ``Host`` entry per device (address,
port, user, the known_hosts file, password authentication only), and an askpass helper that reads the
password from the environment (``SSH_ASKPASS``, ``SSH_ASKPASS_REQUIRE=force``), so
``ssh -F PATH CORE_SW_01 'display version'`` works from the CLI's shell tool inside
the sandbox. The token itself is never written to a file. The task prompt gets :data:`PROMPT_NOTE`.

Every command an agent sends over SSH is a call of its attempt's session, in the same trajectory
as its MCP or HTTP calls; paging and width commands are logged with outcome ``session``, which
scoring ignores.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
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
CONFIG_ENV = "CTBENCH_SSH_CONFIG"
KNOWN_HOSTS_FILE = "ssh_known_hosts"
"""Its name in the attempt's I/O folder (beside the prompt, outside the workspace)."""
CONFIG_FILE = "ssh_config"
ASKPASS_FILE = "ssh_askpass"
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
"""Device names an ``ssh_config`` ``Host`` line can hold as they are (no pattern characters)."""

PROMPT_NOTE = """

You can also log into each device over SSH from your shell; the user name is the device name:
    ssh -F {config} DEVICE 'COMMAND'
(host {host}, port {port}; the password is in $CTBENCH_SSH_PASSWORD and the configuration file gives
it to ssh). A command sent over SSH is evidence like one sent with run_command; submit your answer
as the task says."""
"""Appended to an agent CLI's task prompt under ``--ssh`` (:meth:`SshAccess.prompt_note`). The
configuration's path is written out: a CLI that checks shell commands before it runs them (Claude
Code) refuses one whose arguments hold a variable."""

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

    def ssh_config(self, devices: Sequence[str], known_hosts: Path) -> str:
        """An OpenSSH client configuration: ``ssh -F FILE DEVICE`` logs into ``DEVICE`` checking
        the host key, by password only (an agent's own keys or agent socket are never offered)."""
        lines = [f"# ctb-eval run --ssh: this attempt's devices ({self.host} port {self.port})"]
        for name in devices:
            if _HOST_NAME.fullmatch(name):
                lines += [f"Host {name}", f"  User {name}"]
        lines += [
            "Host *",
            f"  HostName {self.host}",
            f"  Port {self.port}",
            f'  UserKnownHostsFile "{known_hosts}"',
            "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes",
            "  PubkeyAuthentication no",
            "  IdentityAgent none",
            "  PreferredAuthentications password,keyboard-interactive",
            "  NumberOfPasswordPrompts 1",
            "  BatchMode no",
            "  ControlMaster no",
            "  LogLevel ERROR",
            "",
        ]
        return "\n".join(lines)

    def prompt_note(self, config: Path) -> str:
        """:data:`PROMPT_NOTE` for this access, ``config`` being where :meth:`write_client` wrote."""
        return PROMPT_NOTE.format(config=shlex.quote(str(config)), host=self.host, port=self.port)

    def write_client(self, folder: Path, devices: Sequence[str]) -> dict[str, str]:
        """The files an OpenSSH user needs (known_hosts, ``ssh_config``, askpass helper) in
        ``folder``; returns the environment that names them, :meth:`env`'s included."""
        known_hosts = self.write_known_hosts(folder)
        config = folder / CONFIG_FILE
        config.write_text(self.ssh_config(devices, known_hosts), encoding="utf-8")
        askpass = folder / ASKPASS_FILE
        # reads the password from the environment: the token is never in a file
        askpass.write_text(f"#!/bin/sh\nprintf '%s\\n' \"${PASSWORD_ENV}\"\n", encoding="utf-8")
        askpass.chmod(0o700)
        return self.env(known_hosts) | {
            CONFIG_ENV: str(config),
            "SSH_ASKPASS": str(askpass),
            "SSH_ASKPASS_REQUIRE": "force",
        }


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
    "CONFIG_ENV",
    "HOST_ENV",
    "KNOWN_HOSTS_ENV",
    "PASSWORD_ENV",
    "PORT_ENV",
    "PROMPT_NOTE",
    "SshAccess",
    "SshFrontEnd",
]
