"""``--agent hermes``: Nous Research's Hermes Agent (``hermes chat -q``) on the replay's MCP tools (D.5).

Each attempt gets a fresh ``HERMES_HOME`` with a ``config.yaml`` that points the ``custom`` provider
at ``--base-url`` (``/v1`` added when missing; chat completions) with the key from
``$OPENAI_API_KEY``, gives the context length (without it Hermes fetches a public model list), names
the replay as MCP server ``ctb``, and turns off lazy installs and the Tirith scanner download; a
seeded ``.update_check`` keeps it from asking the package registry for a newer version. It runs with
``-t ctb`` (only the ctb toolset: no terminal, file or web tools) and ``chat -q`` rather than
``-z``, which sends its first model request before MCP discovery has finished. Under
``ctb-eval run --ssh`` it gets ``-t ctb,terminal`` so it can run ``ssh``; the terminal runs any
command, so the runner gives it only inside the sandbox (:attr:`HermesAgent.shell_is_bounded`).

Hermes keeps usage in ``$HERMES_HOME/state.db`` (table ``sessions``): model requests
(``api_call_count``), input, cache-read and output tokens, cost where it knows the price. It runs in
its own virtual environment (it pins mcp 1.x), so ctbench reads that database with ``sqlite3``.
Per-request usage and the model id the endpoint named are not in it: the transcript's turns and the
result's ``model_reported`` get them from the runner's model tap (:mod:`ctbench.evaluate.model_tap`).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from ctbench.evaluate.agents.harness_base import HarnessAgent, HarnessLaunch, HarnessRun, file_tail, with_v1
from ctbench.evaluate.agents.harness_transcripts import hermes_transcript
from ctbench.plugin_api import (
    ANSWER_CAP,
    DB_CAP,
    LOG_CAP,
    AgentConfigError,
    AgentContext,
    AgentResult,
    AttemptFolder,
    InfrastructureError,
    TranscriptEntry,
)

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
DEFAULT_MAX_TURNS = 200
CONTEXT_LENGTH = 131072


def _yaml_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML flow scalar


class HermesAgent(HarnessAgent):
    name = "hermes"
    description = (
        "Hermes Agent (hermes chat -q) on the replay's MCP tools; --model, --base-url, $OPENAI_API_KEY"
    )
    harness_key = "hermes"
    key_env = "OPENAI_API_KEY"
    rounds_kind = "model requests"
    shell_tool = "terminal"
    shell_is_bounded = False

    def check(self) -> None:
        super().check()
        effort = self.agent_args().reasoning_effort
        if effort is not None and effort not in EFFORTS:
            raise AgentConfigError(
                f"--agent-arg reasoning_effort={effort}: Hermes takes one of {', '.join(EFFORTS)}"
            )

    def config_yaml(self, ctx: AgentContext, mcp: list[str]) -> str:
        o = self.agent_args(ctx)
        max_turns = ctx.options.max_rounds or DEFAULT_MAX_TURNS
        lines = [
            "model:",
            "  provider: custom",
            f"  base_url: {_yaml_quote(with_v1(ctx.base_url or ''))}",
            f"  default: {_yaml_quote(ctx.options.model or '')}",
            f"  api_key: {_yaml_quote(self.api_key())}",
            f"  context_length: {CONTEXT_LENGTH}",
            "agent:",
            f"  max_turns: {max_turns}",
            "  api_max_retries: 0",
            f"  reasoning_effort: {_yaml_quote(o.reasoning_effort or '')}",
            "mcp_servers:",
            "  ctb:",
            f"    command: {_yaml_quote(mcp[0])}",
            "    args: [" + ", ".join(_yaml_quote(a) for a in mcp[1:]) + "]",
            "    timeout: 300",
            "    connect_timeout: 60",
            "mcp_discovery_timeout: 60",
            "security:",
            "  allow_lazy_installs: false",
            "  tirith_enabled: false",
            "memory:",
            "  memory_enabled: false",
            "  user_profile_enabled: false",
            "",
        ]
        return "\n".join(lines)

    def launch(self, ctx: AgentContext, home: Path, workspace: Path, mcp: list[str]) -> HarnessLaunch:
        hermes_home = home / ".hermes"
        hermes_home.mkdir(parents=True, exist_ok=True)
        (hermes_home / "config.yaml").write_text(self.config_yaml(ctx, mcp), encoding="utf-8")
        # The update check's cache, fresh: no request to the package registry on start-up.
        (hermes_home / ".update_check").write_text(
            json.dumps(
                {
                    "ts": time.time(),
                    "rev": None,
                    "ver": self.installed.version or self.pinned_version(),
                    "behind": 0,
                }
            ),
            encoding="utf-8",
        )
        env = self.base_env(home)
        env.update(
            {
                "HERMES_HOME": str(hermes_home),
                "HERMES_DISABLE_LAZY_INSTALLS": "1",
                "NO_COLOR": "1",
                "PYTHONUNBUFFERED": "1",
            }
        )
        max_turns = ctx.options.max_rounds or DEFAULT_MAX_TURNS
        argv = [
            str(self.installed.executable),
            "chat",
            "-Q",
            "-t",
            # --ssh: its terminal tool too (it runs any command: the sandbox is its only bound)
            "ctb,terminal" if ctx.ssh is not None else "ctb",
            "--yolo",
            "--max-turns",
            str(max_turns),
            "-m",
            ctx.options.model or "",
            "-q",
            ctx.prompt,
        ]
        return HarnessLaunch(
            argv,
            env,
            workspace,
            home,
            {
                "db": hermes_home / "state.db",
                "log": hermes_home / "logs" / "agent.log",
                "mcp_stderr": hermes_home / "logs" / "mcp-stderr.log",  # what the proxy wrote to stderr
            },
        )

    def collect(self, ctx: AgentContext, launch: HarnessLaunch, run: HarnessRun) -> AgentResult:
        with _SessionDb(ctx.workdir, launch.files["db"]) as db:
            return self._collect(ctx, launch, run, db)

    def _collect(
        self, ctx: AgentContext, launch: HarnessLaunch, run: HarnessRun, db: _SessionDb
    ) -> AgentResult:
        result = ctx.result
        root = ctx.workdir
        self.record(result, rounds_kind=self.rounds_kind, harness_version=self.harness_version)
        row = db.session_row()
        text = "".join(run.lines).strip()
        if row is None:
            raise self.crashed(self.harness, run, worked=False, detail=_last_line(text))
        calls = self._usage(result, row)
        failed = _mcp_failure(root, launch.files["log"])
        if failed is not None:
            # Hermes keeps its MCP servers' stderr in its own log, which goes with the attempt's home:
            # its MCP lines go into the task log, so the cause of the failure can be read afterwards
            for line in _mcp_lines(root, launch.files["log"]):
                ctx.log.line(f"[hermes agent.log] {line}")
            for line in file_tail(root, launch.files["mcp_stderr"]):
                ctx.log.line(f"[hermes mcp-stderr.log] {line}")
            raise InfrastructureError(f"{self.harness} started without the ctb tools: {failed}")
        if calls == 0 or (result.output_tokens == 0 and result.input_tokens == 0):
            raise InfrastructureError(
                f"{self.harness}: no model response ({_last_line(text) or 'nothing printed'})"
            )
        if run.returncode != 0:
            raise self.crashed(self.harness, run, worked=True, detail=_last_line(text))
        answer = db.final_message() or text
        if answer and answer.strip():
            result.answer_text, result.answer_source = answer, "final_message"
        return result

    def _usage(self, result: AgentResult, row: dict[str, Any]) -> int:
        """Tokens, requests and cost from the session row into ``result``; the number of requests."""
        calls = int(row.get("api_call_count") or 0)
        cached = int(row.get("cache_read_tokens") or 0)
        result.input_tokens = (
            int(row.get("input_tokens") or 0) + cached + int(row.get("cache_write_tokens") or 0)
        )
        result.output_tokens = int(row.get("output_tokens") or 0)
        result.rounds = calls
        self.record(result, cached_tokens=cached)
        cost = (
            row.get("actual_cost_usd")
            if row.get("actual_cost_usd") is not None
            else row.get("estimated_cost_usd")
        )
        if cost is not None and row.get("cost_status") not in (None, "unknown", "unavailable"):
            self.record(result, cost_usd=float(cost))
        return calls

    def transcript(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> list[TranscriptEntry]:
        """The session's ``messages`` rows, as Hermes left them (it writes each as it happens)."""
        with _SessionDb(ctx.workdir, launch.files["db"]) as db:
            row = db.session_row()
            if row is None:
                return []
            return hermes_transcript(db.messages(str(row["id"])), row.get("model") or ctx.options.model)

    def usage_so_far(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> None:
        """Hermes updates its session row after every model request: read it as it was left."""
        with _SessionDb(ctx.workdir, launch.files["db"]) as db:
            row = db.session_row()
        if row is None or not int(row.get("api_call_count") or 0):
            return
        self.record(ctx.result, rounds_kind=self.rounds_kind, harness_version=self.harness_version)
        self._usage(ctx.result, row)
        ctx.result.notes.append("usage as Hermes' state.db held it when the attempt ended")


class _SessionDb:
    """Hermes' ``state.db``, copied out of the attempt folder before sqlite opens it.

    The database (and its write-ahead log) is the agent's file: sqlite given its path would follow a
    link or block on a FIFO, so both are copied through :class:`AttemptFolder` (regular files only,
    at most :data:`DB_CAP`) into a private folder of the runner's, and opened there.
    """

    def __init__(self, root: Path, db: Path) -> None:
        self._root, self._db = root, db
        self._tmp: Path | None = None
        self._conn: sqlite3.Connection | None = None

    def __enter__(self) -> _SessionDb:
        rel = self._db.relative_to(self._root).as_posix()
        self._tmp = Path(tempfile.mkdtemp(prefix="ctbench-db-"))
        copy = self._tmp / "state.db"
        with AttemptFolder(self._root) as folder:
            if not folder.copy_whole(rel, copy, DB_CAP):
                return self
            folder.copy_whole(rel + "-wal", self._tmp / "state.db-wal", DB_CAP)
        try:
            self._conn = sqlite3.connect(copy, timeout=5)
        except sqlite3.Error:
            return self
        self._conn.row_factory = sqlite3.Row
        return self

    def __exit__(self, *exc: object) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def session_row(self) -> dict[str, Any] | None:
        if self._conn is None:
            return None
        try:
            row = self._conn.execute("SELECT * FROM sessions ORDER BY started_at DESC LIMIT 1").fetchone()
        except sqlite3.Error:
            return None
        return dict(row) if row is not None else None

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """The session's message rows in the order Hermes wrote them."""
        if self._conn is None:
            return []
        try:
            rows = self._conn.execute(
                "SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,)
            ).fetchall()
        except sqlite3.Error:
            return []
        return [dict(r) for r in rows]

    def final_message(self) -> str | None:
        if self._conn is None:
            return None
        try:
            row = self._conn.execute(
                "SELECT content FROM messages WHERE role = 'assistant' AND content IS NOT NULL "
                "AND content != '' ORDER BY id DESC LIMIT 1"
            ).fetchone()
        except sqlite3.Error:
            return None
        return str(row[0])[:ANSWER_CAP] if row is not None else None


def _mcp_failure(root: Path, log: Path) -> str | None:
    """Hermes' own account of MCP discovery (agent.log): why ``ctb`` is missing, or None if it connected.

    Hermes goes on without a server that failed to connect, and the model then gets no replay tools;
    its log is the only place that says so (its first :data:`LOG_CAP` bytes are read).
    """
    with AttemptFolder(root) as folder:
        got = folder.read(log.relative_to(root).as_posix(), LOG_CAP)
    if got is None:
        return "no agent.log written (MCP discovery never ran)"
    text = got.data.decode("utf-8", errors="replace")
    for line in text.splitlines():
        if "Failed to connect to MCP server 'ctb'" in line or "MCP server 'ctb' failed" in line:
            return line.split(": ", 1)[-1][:300]
    if "MCP: registered" not in text:
        return "MCP discovery did not finish"
    return None


def _mcp_lines(root: Path, log: Path, limit: int = 60) -> list[str]:
    """The last lines of Hermes' agent.log that speak of MCP (its servers' stderr included)."""
    return file_tail(root, log, lambda ln: "mcp" in ln.lower() or "ctb" in ln, limit)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""
