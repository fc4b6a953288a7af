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

from collections.abc import Callable
from typing import TYPE_CHECKING

from ctbench.errors import CtbError
from ctbench.plugin_api.ssh import (  # the contract half, re-exported here
    ASKPASS_FILE as ASKPASS_FILE,
)
from ctbench.plugin_api.ssh import (
    CONFIG_ENV as CONFIG_ENV,
)
from ctbench.plugin_api.ssh import (
    CONFIG_FILE as CONFIG_FILE,
)
from ctbench.plugin_api.ssh import (
    HOST_ENV as HOST_ENV,
)
from ctbench.plugin_api.ssh import (
    KNOWN_HOSTS_ENV as KNOWN_HOSTS_ENV,
)
from ctbench.plugin_api.ssh import (
    KNOWN_HOSTS_FILE as KNOWN_HOSTS_FILE,
)
from ctbench.plugin_api.ssh import (
    PASSWORD_ENV as PASSWORD_ENV,
)
from ctbench.plugin_api.ssh import (
    PORT_ENV as PORT_ENV,
)
from ctbench.plugin_api.ssh import (
    PROMPT_NOTE as PROMPT_NOTE,
)
from ctbench.plugin_api.ssh import (
    SshAccess as SshAccess,
)

if TYPE_CHECKING:
    from ctbench.replay.session import Session
    from ctbench.replay.ssh_server import TokenSshServer


EXTRA_HINT = "pip install 'ctbench[ssh]'"


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
