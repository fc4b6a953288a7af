"""What an attempt is given to log into its devices over SSH (``ctb-eval run --ssh``): an address, a
password (the attempt's session token) and the server's host key, with the OpenSSH client files an
agent CLI needs. Part of the plug-in contract (:attr:`~ctbench.plugin_api.agent.AgentContext.ssh`);
the server side is :mod:`ctbench.evaluate.ssh_access`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
