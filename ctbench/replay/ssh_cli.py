"""The ``ctb-replay ssh`` command: its help, its arguments and the glue to the SSH server.

Kept apart from :mod:`ctbench.replay.cli` so that building the parser never imports asyncssh (an
optional extra): only running the command does.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.errors import CtbError

if TYPE_CHECKING:
    from ctbench.replay.engine import ReplayEngine

SSH_HELP = """\
An SSH server in front of one task's devices, for SecureCRT, PuTTY, OpenSSH, netmiko, scrapli and
the agents built on them. The user name is the device: 'ssh -p PORT CORE_SW_01@127.0.0.1' logs into
CORE_SW_01 and shows its login banner and prompt; type its commands as on the real device
(abbreviations, '|' filters, '?' at once without Enter, Tab completion, 'quit'/'exit' to leave).
'system-view' (VRP, Comware), 'configure terminal' (IOS, with 'do CMD') and 'configure' (Junos,
with 'run CMD') enter the configuration view and its prompt; below it, 'interface NAME', 'vlan N',
'ospf N', 'bgp AS' (VRP, Comware) and 'interface', 'router', 'vlan', 'line' (IOS) enter their views
('quit'/'exit' up one, 'return'/'end'/Ctrl+Z back); nothing there changes the device. IOS 'enable'
and 'disable' move between GW_01> and GW_01# (see --user-exec).
Session-setup lines (terminal length 0, screen-length 0 temporary, set cli screen-width 511, ...)
are answered as the device answers them and logged with outcome 'session', never as
troubleshooting actions.

The first line on stdout is ssh://HOST:PORT, printed once the server accepts connections (--port 0
picks a free port). Every login shares one replay session: --trajectory gets one JSON line per
command of every login, in order.

Logins need the password of --password or $CTBENCH_SSH_PASSWORD, or a key of --authorized-keys;
a wrong one, or a user name that is no device of the task, is refused as a device refuses it. With
neither, logins need no credential (only on a loopback address). The host key is kept per task set
in $XDG_STATE_HOME/ctbench/ssh (or --host-key FILE), so known_hosts stays valid across restarts.

requires the ssh extra: pip install 'ctbench[ssh]'

examples:
  ctb-replay ssh RCA-001 --port 2222 --trajectory /tmp/RCA-001.jsonl
  CTBENCH_SSH_PASSWORD=lab ctb-replay ssh RCA-001 --port 0
  ssh -p 2222 CORE_SW_01@127.0.0.1
  ctb-replay ssh PATH-011 --user-exec     # IOS logins at GW_01>: 'enable' (login password) to GW_01#
"""


def add_ssh_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task_id", metavar="TASK_ID", help="task to serve, e.g. RCA-001")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port to listen on (default 0: any free port)")
    p.add_argument(
        "--trajectory",
        metavar="FILE",
        type=Path,
        default=None,
        help="JSONL trajectory file, one line per command of every login",
    )
    p.add_argument(
        "--password",
        default=None,
        help="password every device login needs (default: $CTBENCH_SSH_PASSWORD); visible to other "
        "users in the process list, so prefer the variable",
    )
    p.add_argument(
        "--authorized-keys",
        metavar="FILE",
        type=Path,
        default=None,
        help="OpenSSH authorized_keys file: its keys may log into every device",
    )
    p.add_argument(
        "--host-key",
        metavar="FILE",
        type=Path,
        default=None,
        help="the server's private host key (created if missing; default: one per task set in "
        "$XDG_STATE_HOME/ctbench/ssh)",
    )
    p.add_argument(
        "--user-exec",
        action="store_true",
        help="Cisco IOS logins start in user EXEC (GW_01>), where privileged commands are invalid "
        "input; 'enable' asks for the login password and goes to GW_01#, 'disable' back "
        "(default: privileged EXEC, as the recordings' prompts)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="close a login idle for this long (default 1800; 0 = never)",
    )


def run_ssh(args: argparse.Namespace, engine: ReplayEngine) -> int:
    try:
        from ctbench.replay import ssh_server
    except ImportError as exc:  # asyncssh is an optional extra
        raise CtbError(
            f"ctb-replay ssh needs asyncssh ({exc}); install it with: pip install 'ctbench[ssh]'",
            exit_code=2,
        ) from None
    if not 0 <= args.port <= 65535:
        raise CtbError(f"--port {args.port}: expected 0 to 65535", exit_code=2)
    password = args.password if args.password is not None else os.environ.get(ssh_server.PASSWORD_ENV)
    credentials = ssh_server.Credentials.load(password, args.authorized_keys)
    if credentials.open and not ssh_server.is_loopback(args.host):
        raise CtbError(
            f"--host {args.host} is reachable from other machines: give --password (or "
            f"${ssh_server.PASSWORD_ENV}) or --authorized-keys, or listen on 127.0.0.1",
            exit_code=2,
        )
    key_path = args.host_key or ssh_server.host_key_path(engine.task_set.root)
    host_key = ssh_server.load_host_key(key_path)
    with engine.open_session(args.task_id, trajectory_path=args.trajectory) as session:
        server = ssh_server.SshReplayServer(
            session, credentials, host_key, idle_timeout=args.idle_timeout, user_exec=args.user_exec
        )
        names = ", ".join(d.name for d in session.devices()) or "(none)"

        def announce(url: str) -> None:
            print(url, flush=True)
            print(
                f"ctb-replay ssh: task {args.task_id} on {url}; user name = device ({names}); "
                f"{'no credential needed' if credentials.open else 'password/key required'} (Ctrl-C stops)",
                file=sys.stderr,
                flush=True,
            )

        ssh_server.serve(server, args.host, args.port, announce)
    return 0


__all__ = ["SSH_HELP", "add_ssh_arguments", "run_ssh"]
