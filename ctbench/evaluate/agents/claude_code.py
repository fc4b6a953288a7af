"""``--agent claude-code``: Anthropic's Claude Code (``claude -p``) on the replay's MCP tools (paper D.4).

Each attempt gets a fresh ``CLAUDE_CONFIG_DIR`` (and ``HOME``) and an ``--mcp-config`` file naming the
replay as server ``ctb``; the CLI runs with ``--bare --strict-mcp-config --tools ""`` (no built-in
tool, no other MCP server, no hooks, plugins or memory files) and ``--allowedTools`` naming exactly
the three ``ctb`` tools, so the model sees those and nothing else. Under ``ctb-eval run --ssh`` it
also gets the Bash tool, allowed to run ``ssh`` only (:data:`SSH_RULE`), to log into the devices.
The environment turns off the start-up calls to the vendor's hosts (``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``, the auto-updater)
and tool search (which would hide MCP tools behind a ``ToolSearch`` tool), and sets the SDK's
retries to 0 so a dead endpoint fails fast and the runner retries the attempt.

The ``system/init`` line says whether ``ctb`` connected and which tools exist; the final ``result``
line has the turns (model requests), usage, cost and final text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctbench.evaluate.agents.harness_base import HarnessAgent, HarnessLaunch, HarnessRun, without_v1
from ctbench.evaluate.agents.harness_transcripts import claude_transcript
from ctbench.plugin_api import (
    AgentConfigError,
    AgentContext,
    AgentResult,
    AttemptFolder,
    InfrastructureError,
    ModelTurn,
    TranscriptEntry,
    json_objects,
    token_count,
)

CTB_TOOLS = ("mcp__ctb__list_devices", "mcp__ctb__run_command", "mcp__ctb__submit_answer")
SSH_RULE = "Bash(ssh:*)"
"""Under ``--ssh``: the permission rule that lets the Bash tool run ``ssh`` (a ``-p`` run denies the rest)."""
EFFORTS = ("low", "medium", "high", "xhigh", "max")
DEFAULT_MAX_TURNS = 200


class ClaudeCodeAgent(HarnessAgent):
    name = "claude-code"
    description = (
        "Anthropic Claude Code (claude -p) on the replay's MCP tools; --model, --base-url, $ANTHROPIC_API_KEY"
    )
    harness_key = "claude-code"
    key_env = "ANTHROPIC_API_KEY"
    rounds_kind = "model requests"
    shell_tool = "Bash"

    @classmethod
    def log_turn(cls, event: Mapping[str, Any]) -> ModelTurn | None:
        """``stream-json`` events: each ``assistant`` line is a turn, with its text, the tools it
        called and the usage its message reports."""
        message = event.get("message")
        if event.get("type") == "assistant" and isinstance(message, Mapping):
            text, tools = _content_texts(message.get("content"))
            usage = message.get("usage")
            usage = usage if isinstance(usage, Mapping) else {}
            return ModelTurn(
                role="agent",
                text=text,
                input_tokens=token_count(usage.get("input_tokens")),
                output_tokens=token_count(usage.get("output_tokens")),
                cached_tokens=token_count(usage.get("cache_read_input_tokens")),
                tool_calls=tools,
            )
        return super().log_turn(event)

    def check(self) -> None:
        super().check()
        effort = self.agent_args().reasoning_effort
        if effort is not None and effort not in EFFORTS:
            raise AgentConfigError(
                f"--agent-arg reasoning_effort={effort}: Claude Code takes one of {', '.join(EFFORTS)}"
            )

    def launch(self, ctx: AgentContext, home: Path, workspace: Path, mcp: list[str]) -> HarnessLaunch:
        config = home / ".claude"
        config.mkdir(parents=True, exist_ok=True)
        mcp_file = home / "mcp.json"
        mcp_file.write_text(
            json.dumps(
                {"mcpServers": {"ctb": {"type": "stdio", "command": mcp[0], "args": mcp[1:]}}}, indent=2
            ),
            encoding="utf-8",
        )
        o = self.agent_args(ctx)
        env = self.base_env(home)
        env.update(
            {
                "CLAUDE_CONFIG_DIR": str(config),
                "ANTHROPIC_BASE_URL": without_v1(ctx.base_url or ""),
                "ANTHROPIC_API_KEY": self.api_key(),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "ENABLE_TOOL_SEARCH": "false",
                "CLAUDE_CODE_MAX_RETRIES": "0",
                "MCP_TIMEOUT": "60000",
                "NO_COLOR": "1",
            }
        )
        max_turns = ctx.options.max_rounds or DEFAULT_MAX_TURNS
        argv = [
            str(self.installed.executable),
            "-p",
            "--bare",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            ctx.options.model or "",
            "--mcp-config",
            str(mcp_file),
            "--strict-mcp-config",
            "--tools",
            # --ssh: the Bash tool, allowed to run ssh and nothing else (other commands are denied)
            "Bash" if ctx.ssh is not None else "",
            "--allowedTools",
            ",".join(CTB_TOOLS + ((SSH_RULE,) if ctx.ssh is not None else ())),
            "--max-turns",
            str(max_turns),
            "--no-session-persistence",
            "--include-partial-messages",  # message_delta: each request's output tokens as it ends
        ]
        if o.reasoning_effort:
            argv += ["--effort", o.reasoning_effort]
        argv.append(ctx.prompt)
        return HarnessLaunch(argv, env, workspace, home)

    def keep_line(self, raw: bytes) -> bool:
        return b'"stream_event"' not in raw[:200] or any(k in raw[:400] for k in KEPT_STREAM_EVENTS)

    def transcript(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> list[TranscriptEntry]:
        events = list(json_objects(lines))
        return claude_transcript(events, ctx.prompt, _requests_usage(events))

    def usage_so_far(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> None:
        """The ``result`` line comes last, so a cut-short attempt sums its requests' own usage."""
        events = list(json_objects(lines))
        requests = _requests_usage(events)
        if not requests:
            return
        result = ctx.result
        result.saw_models(ctx.options.model, _models(events), "claude-code stream")
        cached = sum(int(u.get("cache_read_input_tokens") or 0) for u in requests.values())
        result.input_tokens = cached + sum(
            int(u.get("input_tokens") or 0) + int(u.get("cache_creation_input_tokens") or 0)
            for u in requests.values()
        )
        result.output_tokens = sum(int(u.get("output_tokens") or 0) for u in requests.values())
        result.rounds = len(requests)
        self.record(
            result, cached_tokens=cached, rounds_kind=self.rounds_kind, harness_version=self.harness_version
        )
        result.notes.append(
            f"usage summed over the {len(requests)} model request(s) before the attempt ended"
        )

    def collect(self, ctx: AgentContext, launch: HarnessLaunch, run: HarnessRun) -> AgentResult:
        events = list(json_objects(run.lines))
        result = ctx.result
        init = next((e for e in events if e.get("type") == "system" and e.get("subtype") == "init"), None)
        final = next((e for e in reversed(events) if e.get("type") == "result"), None)
        requests = {
            e["message"].get("id")
            for e in events
            if e.get("type") == "assistant"
            and isinstance(e.get("message"), dict)
            and e["message"].get("model") != "<synthetic>"
        }
        self.record(result, rounds_kind=self.rounds_kind, harness_version=self.harness_version)
        result.saw_models(ctx.options.model, _models(events), "claude-code stream")
        if init is not None:
            servers = {
                s.get("name"): s.get("status") for s in init.get("mcp_servers") or [] if isinstance(s, dict)
            }
            tools = set(init.get("tools") or [])
            if servers.get("ctb") != "connected" or not set(CTB_TOOLS) <= tools:
                # Claude Code keeps its account of the MCP start (the server's stderr included) in a
                # cache folder of the attempt's home, which goes with the attempt: into the task log
                for line in _mcp_log_lines(ctx.workdir, launch.home):
                    ctx.log.line(f"[claude mcp-logs] {line}")
                raise InfrastructureError(
                    f"{self.harness} started without the ctb tools (MCP server ctb: "
                    f"{servers.get('ctb') or 'absent'})"
                )
        if final is None:
            if init is None or not requests:
                raise self.crashed(self.harness, run, worked=False, detail=_last_words(run))
            raise self.crashed(self.harness, run, worked=True, detail=_last_words(run))
        usage: dict[str, Any] = final.get("usage") or {}
        if usage:
            cached = int(usage.get("cache_read_input_tokens") or 0)
            result.input_tokens = (
                int(usage.get("input_tokens") or 0)
                + cached
                + int(usage.get("cache_creation_input_tokens") or 0)
            )
            result.output_tokens = int(usage.get("output_tokens") or 0)
            self.record(result, cached_tokens=cached)
        result.rounds = int(final.get("num_turns") or len(requests))
        bases = {
            str(m.get("costBasis")) for m in (final.get("modelUsage") or {}).values() if isinstance(m, dict)
        }
        if final.get("total_cost_usd") is not None and bases != {"unknown"}:
            self.record(result, cost_usd=float(final["total_cost_usd"]))
        elif final.get("total_cost_usd") is not None:
            result.notes.append("cost not recorded: Claude Code has no price for this model")
        if final.get("is_error"):
            status = final.get("api_error_status")
            detail = str(final.get("result") or final.get("subtype") or "error")[:300]
            if status is not None or not requests or final.get("terminal_reason") == "api_error":
                raise InfrastructureError(
                    f"{self.harness}: model request failed ({status or 'no response'}): {detail}"
                )
            if final.get("subtype") != "error_max_turns":
                raise self.crashed(self.harness, run, worked=True, detail=detail)
            result.notes.append(f"stopped at --max-turns {ctx.options.max_rounds or DEFAULT_MAX_TURNS}")
        text = final.get("result")
        if isinstance(text, str) and text.strip():
            result.answer_text, result.answer_source = text, "final_message"
        return result


KEPT_STREAM_EVENTS = (b'"message_start"', b'"message_delta"')
"""Of the ``stream_event`` lines (``--include-partial-messages``), those that carry a request's usage;
the token deltas are dropped before they reach the log."""


def _requests_usage(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Usage per model request (message id): input from the request's start (``message_start``, or
    the ``assistant`` lines, which repeat it), output from its ``message_delta`` (the count when it
    ended; the ``assistant`` lines only know the count at its start). Requests stream one at a time,
    so a delta belongs to the last request started."""
    out: dict[str, dict[str, Any]] = {}
    current: str | None = None
    for e in events:
        if e.get("type") == "stream_event" and isinstance(e.get("event"), dict):
            event = e["event"]
            message = event.get("message")
            if event.get("type") == "message_start" and isinstance(message, dict) and message.get("id"):
                current = str(message["id"])
                out.setdefault(current, dict(message.get("usage") or {}))
            elif (
                event.get("type") == "message_delta"
                and current in out
                and isinstance(event.get("usage"), dict)
            ):
                if "output_tokens" in event["usage"]:
                    out[current]["output_tokens"] = event["usage"]["output_tokens"]
                    out[current]["_ended"] = True
            continue
        message = e.get("message") if e.get("type") == "assistant" else None
        if not isinstance(message, dict) or message.get("model") == "<synthetic>" or not message.get("id"):
            continue
        usage = message.get("usage")
        if isinstance(usage, dict) and not out.get(str(message["id"]), {}).get("_ended"):
            out[str(message["id"])] = {**out.get(str(message["id"]), {}), **usage}
    return out


def _models(events: list[dict[str, Any]]) -> list[str | None]:
    """The model id of every model response in the stream (the endpoint's own naming)."""
    out: list[str | None] = []
    for e in events:
        message = e.get("message") if e.get("type") == "assistant" else None
        if e.get("type") == "stream_event" and isinstance(e.get("event"), dict):
            message = e["event"].get("message")
        if isinstance(message, dict) and isinstance(message.get("model"), str):
            out.append(message["model"])
    return out


def _last_words(run: HarnessRun) -> str:
    for line in reversed(run.lines):
        if line.strip():
            return line.strip()[:300]
    return f"exit status {run.returncode}"


def _mcp_log_lines(root: Path, home: Path, limit: int = 40) -> list[str]:
    """The last entries of Claude Code's log of the ``ctb`` server (``mcp-logs-ctb/*.jsonl``), found
    and read through the attempt folder ``root`` (no links followed, each file's last bytes only)."""
    out: list[str] = []
    base = (home / ".cache" / "claude-cli-nodejs").relative_to(root).as_posix()
    with AttemptFolder(root) as folder:
        for project in folder.listdir(base):
            logs = f"{base}/{project}/mcp-logs-ctb"
            for name in folder.listdir(logs):
                if not name.endswith(".jsonl"):
                    continue
                got = folder.tail(f"{logs}/{name}")
                if got is None:
                    continue
                raws = got.data.decode("utf-8", errors="replace").splitlines()
                for raw in raws[1:] if got.truncated else raws:
                    try:
                        entry = json.loads(raw)
                    except ValueError:
                        out.append(raw[:500])
                        continue
                    if isinstance(entry, dict):
                        kind = "error" if "error" in entry else "debug"
                        out.append(
                            f"{entry.get('timestamp', '')} {kind}: {str(entry.get(kind, ''))[:500]}".strip()
                        )
    return out[-limit:]


def _content_texts(content: Any) -> tuple[str, tuple[str, ...]]:
    """Text and tool-call names of a message's content list."""
    if isinstance(content, str):
        return content, ()
    texts: list[str] = []
    tools: list[str] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif part.get("type") == "tool_use" and isinstance(part.get("name"), str):
            tools.append(part["name"])
    return "\n".join(texts), tuple(tools)
