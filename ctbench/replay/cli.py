"""``ctb-replay``: serve recorded device output to agents and people."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ctbench.cli_support import add_command, build_parser, emit_json, run
from ctbench.errors import CtbError
from ctbench.tables import TABLE_FORMATS, formats_help

if TYPE_CHECKING:
    from ctbench.replay.engine import ReplayEngine

DESCRIPTION = """\
Serve a task's recorded device output as if the devices were live.

Commands resolve as on the real device (abbreviations such as 'dis ip rou', interface short names,
'| include' filters); recorded commands return the recorded bytes, valid but unrecorded commands are
refused with the vendor's permission message, invalid ones get the vendor's own error and caret.

examples:
  ctb-replay shell RCA-001                       a device prompt to poke at a task by hand
  ctb-replay mcp RCA-001                         MCP server on stdio for an agent
  ctb-replay mcp RCA-001 --http 127.0.0.1:8765   the same over streamable HTTP
  ctb-replay mcp --connect URL --session ID      MCP stdio proxy to a runner's session (no task set)
  ctb-replay serve --port 8700                   HTTP JSON API for many sessions
  ctb-replay ssh RCA-001 --port 2222             SSH server: ssh -p 2222 CORE_SW_01@127.0.0.1
  ctb-replay exec CORE_SW_01 display interface brief   (session from $CTBENCH_REPLAY_URL/_SESSION)
  ctb-replay gaps runs/my-run                    commands agents wanted that were not recorded
"""

SHELL_HELP = """\
An interactive prompt on a task's devices, as on a jump host: 'connect DEVICE' logs in and shows the
device's own prompt (<CORE_SW_01>, GW_01#, admin@PE_01> ); type its commands as on the real device
(abbreviations, '| include' filters; '?' lists what may follow at once, without Enter; Tab completes
a keyword, a second Tab lists the candidates; at the jump host Tab completes device names); 'quit'
returns to the jump host, 'exit' there leaves. Lines piped on stdin are answered as a transcript.

example:
  ctb-replay shell RCA-001
  printf 'connect CORE_SW_01\\ndis int br\\n' | ctb-replay shell RCA-001
"""

MCP_HELP = """\
Serve one task to an agent over the Model Context Protocol: tools list_devices, run_command(device,
command) and submit_answer(answer). Without --http it speaks MCP on stdin/stdout (what agent CLIs
start as a 'stdio' server); with --http HOST:PORT it serves streamable HTTP at http://HOST:PORT/mcp
(port 0 picks a free port; the URL is printed on stdout).

With --connect URL --session ID instead of a task id, it is a thin stdio proxy: every tool call is
forwarded to that session of a running replay HTTP server (the runner's, or 'ctb-replay serve'), so
it needs no task set and no run folder - what an agent CLI in a sandbox starts. The session's token
comes from $CTBENCH_REPLAY_TOKEN or --token-file; URL may be unix:/PATH for a Unix socket. The
tools, their descriptions and every answer are the same as those of 'ctb-replay mcp TASK_ID'.

examples:
  ctb-replay mcp RCA-001 --trajectory runs/r1/trajectories/RCA-001.jsonl --answer /tmp/RCA-001.answer
  ctb-replay mcp RCA-001 --http 127.0.0.1:8765
  ctb-replay mcp --connect http://127.0.0.1:8700 --session Xy3... --token-file /ctb/token
"""

SERVE_HELP = """\
HTTP JSON API serving many concurrent replay sessions (the backend for harnesses that run agents
outside this process). The first line on stdout is the URL it listens on (--port 0 picks a free port).

  POST /sessions {"task_id": "RCA-001", "trajectory": "RCA-001.jsonl"}  -> {"session_id", ...}
  POST /sessions/ID/run {"device": "CORE_SW_01", "command": "dis int br"}         -> observation
  POST /sessions/ID/submit {"answer": "..."};  GET /sessions/ID/devices;  GET /sessions/ID/trajectory
  GET /sessions/ID;  DELETE /sessions/ID;  GET /health

A trajectory (optional; only when the server runs with --trajectories DIR) is a path ending in .jsonl,
relative to DIR and staying inside it, so a client cannot touch files elsewhere; it gets one JSON line
per call, flushed as it is answered, and a non-empty file already there is kept as <name>.prev1 rather
than overwritten. Errors come back as {"error": {"code", "message"}} with a 4xx.

With --trackb it serves TTAC Track B's API instead (POST /api/agent/execute {device_name, command,
question_number}, GET /health) over a set made by ctb-author import-trackb, with Track B's status codes
and bodies (docs/trackb.md); --trackb-strict also applies Track B's whitelist before the dialect.

examples:
  ctb-replay serve --port 8700 --trajectories runs/my-harness/trajectories
  ctb-replay serve --trackb-strict --tasks trackb-p1 --port 7860 --trajectories trackb-traj
"""

EXEC_HELP = """\
Run one command on one device through a replay session, for agents that only have a shell. The
session comes from the environment: CTBENCH_REPLAY_URL (the server), CTBENCH_REPLAY_SESSION and,
under ctb-eval run, CTBENCH_REPLAY_TOKEN (the secret that grants that one session).
Prints what the device prints; exit status 0 when the device answered with output (or with its
context help, for a command ending in '?'), 1 when it refused the command (not recorded, invalid,
unknown device), 2 when the server could not be used.
Quote commands that contain '|' or '?' so your shell does not take them.

examples:
  ctb-replay exec CORE_SW_01 display interface brief
  ctb-replay exec GW_01 'sh run | i ospf'
  ctb-replay exec GW_01 'show ip ?'
"""

GAPS_HELP = """\
List the commands agents tried that were denied (valid, but not recorded), per task and device,
most frequent first: what authors should record next. Give run folders (runs/NAME, holding
trajectories/<ID>.jsonl) or a folder of runs.

examples:
  ctb-replay gaps runs/gpt-run runs/claude-run
  ctb-replay gaps runs/ --task RCA-001 --json
"""


def _tasks_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--tasks",
        metavar="DIR",
        default=None,
        help="task set folder (default: $CTBENCH_TASKS, else ./tasks, else the current folder)",
    )


def _engine(args: argparse.Namespace) -> ReplayEngine:
    from ctbench.replay.engine import ReplayEngine
    from ctbench.store import TaskSet

    return ReplayEngine(TaskSet.open(args.tasks))


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise CtbError(f"--http {text!r}: expected HOST:PORT, for example 127.0.0.1:8765")
    return host, int(port)


def _positive_rate(text: str) -> float:
    """An argparse type: a finite number of requests per second above zero."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of requests per second above 0, got {text!r}")
    return value


def _positive_count(text: str) -> int:
    """An argparse type: a whole number of calls, 1 or more."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of calls, 1 or more, got {text!r}")
    return value


# --------------------------------------------------------------------------- commands


def cmd_shell(args: argparse.Namespace) -> int:
    from ctbench.replay.shell import DeviceShell, run_shell

    engine = _engine(args)
    with engine.open_session(args.task_id, trajectory_path=args.trajectory) as session:
        return run_shell(DeviceShell(session))


def _token(args: argparse.Namespace) -> str | None:
    import os

    from ctbench.replay.client import TOKEN_ENV

    if args.token_file is not None:
        try:
            token = args.token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise CtbError(
                f"--token-file {args.token_file}: cannot read the token: "
                f"{getattr(exc, 'strerror', None) or exc}",
                exit_code=2,
            ) from None
        if not token:
            raise CtbError(f"--token-file {args.token_file}: the file is empty", exit_code=2)
        return token
    return os.environ.get(TOKEN_ENV, "").strip() or None


def cmd_mcp_connect(args: argparse.Namespace) -> int:
    import time

    from ctbench.replay.client import RemoteSession, ReplayClient
    from ctbench.replay.mcp_server import build_server, run_http, run_stdio
    from ctbench.replay.proxy_log import logged_life

    if args.task_id is not None:
        raise CtbError(
            "give either TASK_ID (serve a task set) or --connect URL (forward to a server), not both",
            exit_code=2,
        )
    if not args.session:
        raise CtbError(
            "--connect needs --session ID (the session the runner opened for this agent)", exit_code=2
        )
    if args.trajectory is not None:
        raise CtbError(
            "--trajectory does not apply to --connect: the server that owns the session writes it",
            exit_code=2,
        )
    with logged_life(args.log, f"session {args.session} at {args.connect}") as log:
        client = ReplayClient(args.connect, args.session, token=_token(args))
        try:
            began = time.monotonic()
            client.summary()  # fail now, in one line, rather than on every tool call the agent makes
            log.info("session checked in %.0f ms", (time.monotonic() - began) * 1000)
            server = build_server(RemoteSession(client), answer_file=args.answer)
            if args.http:
                target = _host_port(args.http)
                run_http(server, *target, announce=lambda url: print(url, flush=True))
            else:
                log.info("serving MCP on standard input and output")
                run_stdio(server)
        finally:
            client.close()
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    from ctbench.replay.mcp_server import build_server, run_http, run_stdio

    if args.connect is not None:
        return cmd_mcp_connect(args)
    if args.task_id is None:
        raise CtbError("give the TASK_ID to serve, or --connect URL --session ID", exit_code=2)
    if args.log is not None:
        raise CtbError(
            "--log applies to --connect (the proxy); a task's server logs its trajectory", exit_code=2
        )
    engine = _engine(args)
    target = _host_port(args.http) if args.http else None
    with engine.open_session(args.task_id, trajectory_path=args.trajectory) as session:
        server = build_server(session, answer_file=args.answer)
        if target is None:
            run_stdio(server)
        else:

            def announce(url: str) -> None:
                print(url, flush=True)
                print(
                    f"ctb-replay mcp: task {args.task_id} on {url} (Ctrl-C stops)",
                    file=sys.stderr,
                    flush=True,
                )

            run_http(server, *target, announce=announce)
    return 0


def _serve_trackb(args: argparse.Namespace) -> int:
    from ctbench.replay.http_server import bind_socket, socket_url, uvicorn_server
    from ctbench.replay.trackb.facade import PHASE_LIMITS, Limits, Phase, TrackbFacade, build_app
    from ctbench.replay.trackb.quota import DailyQuota
    from ctbench.replay.trackb.ratelimit import RateLimiter

    if args.burst < 0:
        raise CtbError(f"--burst {args.burst}: expected 0 or more requests")
    engine = _engine(args)
    phase = Phase.of(engine.task_set)
    documented = PHASE_LIMITS.get(phase.number, Limits()) if args.trackb_limits else Limits()
    rate = args.max_requests_per_second or documented.requests_per_second
    daily = args.max_calls_per_day or documented.calls_per_day
    facade = TrackbFacade(
        engine,
        phase,
        strict=args.trackb_strict,
        max_concurrent_per_token=args.max_concurrent_per_token or documented.concurrent_per_token,
        max_calls_per_question=args.max_calls_per_question or documented.calls_per_question,
        trajectories=args.trajectories,
        rate_limit=RateLimiter(rate, burst=args.burst) if rate else None,
        daily=DailyQuota(daily) if daily else None,
    )
    sock = bind_socket(args.host, args.port)
    print(socket_url(sock), flush=True)
    mode = "strict (Track B's whitelist)" if args.trackb_strict else "ctbench's CLI"
    limits = [
        f"{rate:g} requests/s per address" if rate else "",
        f"{facade.max_concurrent_per_token} in flight per client" if facade.max_concurrent_per_token else "",
        f"{facade.max_calls_per_question} calls per question" if facade.max_calls_per_question else "",
        f"{daily} calls per client and day (UTC)" if daily else "",
    ]
    print(
        f"ctb-replay serve: Track B phase {facade.phase.number} API, {mode}, task set "
        f"{engine.task_set.root} on {socket_url(sock)}/api/agent/execute, limits: "
        f"{', '.join(x for x in limits if x) or 'none'} (Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn_server(build_app(facade)).run(sockets=[sock])
    finally:
        facade.close()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from ctbench.replay.http_server import SessionRegistry, bind_socket, build_app, socket_url, uvicorn_server

    if args.trackb or args.trackb_strict:
        return _serve_trackb(args)
    engine = _engine(args)
    registry = SessionRegistry(
        engine,
        max_sessions=args.max_sessions,
        idle_timeout=args.idle_timeout,
        trajectory_root=args.trajectories,
    )
    sock = bind_socket(args.host, args.port)
    print(socket_url(sock), flush=True)
    print(
        f"ctb-replay serve: task set {engine.task_set.root} on {socket_url(sock)} (Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )
    try:
        uvicorn_server(build_app(engine, registry)).run(sockets=[sock])
    finally:
        registry.close_all()
    return 0


def cmd_ssh(args: argparse.Namespace) -> int:
    from ctbench.replay.ssh_cli import run_ssh

    return run_ssh(args, _engine(args))


def cmd_exec(args: argparse.Namespace) -> int:
    from ctbench.replay.client import ReplayClient

    command = " ".join(args.words).strip()
    if not command:
        raise CtbError(
            "give the command to run after the device name, e.g. ctb-replay exec R1 show ip route",
            exit_code=2,
        )
    with ReplayClient.from_env() as client:
        obs = client.run(args.device, command)
    text = obs.with_echo()
    # bytes, so a terminal or pipe with a narrow encoding cannot turn device output into a traceback
    sys.stdout.buffer.write(
        (text if not text or text.endswith("\n") else text + "\n").encode("utf-8", "replace")
    )
    sys.stdout.flush()
    return 0 if obs.ok or obs.outcome == "help" else 1


def cmd_submit(args: argparse.Namespace) -> int:
    from ctbench.replay.client import ReplayClient

    if args.answer_file == "-":
        answer = sys.stdin.read()
    else:
        path = Path(args.answer_file)
        try:
            answer = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CtbError(f"{path}: cannot read the answer: {exc.strerror}", exit_code=2) from None
        except UnicodeDecodeError:
            raise CtbError(f"{path}: the answer is not UTF-8 text", exit_code=2) from None
    if not answer.strip():
        raise CtbError("the answer is empty", exit_code=2)
    with ReplayClient.from_env() as client:
        sub = client.submit(answer)
    again = " (replacing the previous one)" if sub.count > 1 else ""
    print(f"answer submitted{again}: {sub.lines} line(s)")
    return 0


def cmd_devices(args: argparse.Namespace) -> int:
    from ctbench.replay.client import ReplayClient
    from ctbench.replay.observation import devices_text

    with ReplayClient.from_env() as client:
        devices = client.devices()
    if args.json:
        emit_json([d.model_dump() for d in devices])
    else:
        print(devices_text(devices))
    return 0


def cmd_gaps(args: argparse.Namespace) -> int:
    from ctbench.replay.gaps import gap_report
    from ctbench.tables import render

    report = gap_report(args.runs, tasks=args.task or ())
    for bad in report.bad_lines[:20]:
        print(f"warning: skipped {bad}", file=sys.stderr)
    if len(report.bad_lines) > 20:
        print(f"warning: {len(report.bad_lines) - 20} more bad lines skipped", file=sys.stderr)
    if args.json:
        emit_json(report.to_json(args.limit))
    else:
        sys.stdout.write(render([report.table(args.limit)], args.format))
    return 0


# --------------------------------------------------------------------------- parser


def build() -> tuple[argparse.ArgumentParser, object]:
    parser, sub = build_parser("ctb-replay", DESCRIPTION)

    p = add_command(sub, "shell", "interactive device prompt on a task's recordings", cmd_shell, SHELL_HELP)
    p.add_argument("task_id", metavar="TASK_ID", help="task to replay, e.g. RCA-001")
    _tasks_arg(p)
    p.add_argument(
        "--trajectory",
        metavar="FILE",
        type=Path,
        default=None,
        help="also log every command to this JSONL trajectory file",
    )

    p = add_command(sub, "mcp", "MCP server (stdio or streamable HTTP) for one task", cmd_mcp, MCP_HELP)
    p.add_argument(
        "task_id",
        metavar="TASK_ID",
        nargs="?",
        default=None,
        help="task to serve, e.g. RCA-001 (omit with --connect)",
    )
    p.add_argument(
        "--connect",
        metavar="URL",
        default=None,
        help="forward every call to this replay HTTP server (http://HOST:PORT or unix:/PATH)",
    )
    p.add_argument("--session", metavar="ID", default=None, help="with --connect: the session to use")
    p.add_argument(
        "--token-file",
        metavar="FILE",
        type=Path,
        default=None,
        help="with --connect: file holding the session's token (default: $CTBENCH_REPLAY_TOKEN)",
    )
    p.add_argument(
        "--log",
        metavar="FILE",
        type=Path,
        default=None,
        help="with --connect: append a line to FILE at each step of the proxy's life (start, session "
        "check, each request's method, how it ended), for the task log of the CLI that started it",
    )
    _tasks_arg(p)
    p.add_argument(
        "--http",
        metavar="HOST:PORT",
        default=None,
        help="serve streamable HTTP on HOST:PORT instead of stdio (use 127.0.0.1)",
    )
    p.add_argument(
        "--trajectory",
        metavar="FILE",
        type=Path,
        default=None,
        help="JSONL trajectory file, one line per call (run folder: trajectories/<ID>.jsonl)",
    )
    p.add_argument(
        "--answer",
        metavar="FILE",
        type=Path,
        default=None,
        help="write the submitted answer to this file (replaced on each submission)",
    )

    p = add_command(
        sub, "serve", "HTTP JSON API serving many concurrent replay sessions", cmd_serve, SERVE_HELP
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port", type=int, default=8700, help="port to listen on (default 8700; 0 = any free port)"
    )
    _tasks_arg(p)
    p.add_argument(
        "--max-sessions",
        type=int,
        default=10_000,
        metavar="N",
        help="refuse new sessions past N open ones (default 10000)",
    )
    p.add_argument(
        "--idle-timeout",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="close sessions unused for this long (default 3600)",
    )
    p.add_argument(
        "--trajectories",
        metavar="DIR",
        type=Path,
        default=None,
        help="folder for the trajectory files clients ask for (paths relative to it); "
        "without it, clients cannot have trajectories written",
    )
    p.add_argument(
        "--trackb",
        action="store_true",
        help="serve TTAC Track B's API (POST /api/agent/execute, GET /health) over a set made by "
        "ctb-author import-trackb; trajectories go to DIR/<client>/<task>.jsonl",
    )
    p.add_argument(
        "--trackb-strict",
        action="store_true",
        help="--trackb, and apply Track B's whitelist first: no abbreviations, filters or '?', "
        "exactly the CLI its reference server offers",
    )
    p.add_argument(
        "--max-concurrent-per-token",
        type=int,
        metavar="N",
        help="Track B: answer 429 past N requests in flight per client (Phase 2: 1)",
    )
    p.add_argument(
        "--max-calls-per-question",
        type=int,
        metavar="N",
        help="Track B: answer 429 past N calls per client and question (Phase 2: 500)",
    )
    p.add_argument(
        "--max-calls-per-day",
        type=_positive_count,
        metavar="N",
        help="Track B: answer 429 past N calls per client and UTC day, until 00:00 UTC (Phase 1: 1000)",
    )
    p.add_argument(
        "--max-requests-per-second",
        type=_positive_rate,
        metavar="RATE",
        help="Track B: answer 429 to a request that comes sooner than 1/RATE s after the last one "
        "accepted from its address, as Track B's nginx does (Phase 1: 50)",
    )
    p.add_argument(
        "--burst",
        type=int,
        default=0,
        metavar="N",
        help="Track B: with --max-requests-per-second, let N requests come early (nginx's burst; "
        "default 0, nginx's default)",
    )
    p.add_argument(
        "--trackb-limits",
        action="store_true",
        help="Track B: the limits of the set's phase as documented (Phase 1: 50 requests/s per "
        "address, 2 in flight per token, 1000 calls per token and day; Phase 2: 1 in flight per "
        "token, 500 calls per question); "
        "the options above override them",
    )

    from ctbench.replay.ssh_cli import SSH_HELP, add_ssh_arguments

    p = add_command(
        sub, "ssh", "SSH server: log into a task's devices with any SSH client", cmd_ssh, SSH_HELP
    )
    add_ssh_arguments(p)
    _tasks_arg(p)

    p = add_command(
        sub, "exec", "run one command through a replay session (for shell-only agents)", cmd_exec, EXEC_HELP
    )
    p.add_argument("device", metavar="DEVICE", help="device name, as listed by 'ctb-replay devices'")
    p.add_argument(
        "words", metavar="COMMAND", nargs=argparse.REMAINDER, help="the command, as typed on the device"
    )

    p = add_command(
        sub,
        "submit",
        "submit the final answer of a replay session",
        cmd_submit,
        "Submit the final answer (a file, or - for stdin) to the session in "
        "$CTBENCH_REPLAY_URL / $CTBENCH_REPLAY_SESSION. A later submission replaces it.",
    )
    p.add_argument("answer_file", metavar="ANSWER_FILE|-", help="file holding the answer, or - to read stdin")

    p = add_command(
        sub,
        "devices",
        "list the devices of the current replay session",
        cmd_devices,
        "List the devices the session in $CTBENCH_REPLAY_URL / $CTBENCH_REPLAY_SESSION may query.",
    )
    p.add_argument("--json", action="store_true", help="JSON output")

    p = add_command(sub, "gaps", "list denied commands from runs: what to record next", cmd_gaps, GAPS_HELP)
    p.add_argument("runs", metavar="RUN", nargs="+", type=Path, help="run folder(s), or a folder of runs")
    p.add_argument("--task", metavar="ID", action="append", help="only this task (repeatable)")
    p.add_argument("--limit", metavar="N", type=int, default=None, help="show the N most frequent only")
    shown = [f for f in TABLE_FORMATS.values() if not f.raw_numbers]  # raw counts: --json
    p.add_argument("--format", choices=[f.name for f in shown], default="text", help=formats_help(shown))
    p.add_argument("--json", action="store_true", help="JSON output (with the raw counts)")
    return parser, sub


def main(argv: Sequence[str] | None = None) -> int:
    parser, _ = build()
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
