"""``--agent codex``: OpenAI's Codex CLI (``codex exec --json``) on the replay's MCP tools (paper D.3).

Each attempt gets a fresh ``CODEX_HOME`` with a ``config.toml`` that:

- defines one model provider (``--base-url``, with ``/v1`` added when missing, Responses wire API, the
  key from ``$OPENAI_API_KEY``) with no request retries, so a dead endpoint fails fast and is
  retried by the runner instead of by Codex forever;
- registers the replay as the required MCP server ``ctb`` with its tools pre-approved;
- turns off everything that would reach an outside host at start-up (plugins run ``git ls-remote``,
  apps, the update check, analytics, web search, model discovery) and every built-in tool that is not
  the replay's (shell, unified exec, sub-agents, goals, image tools, patches), so the model sees
  only ``mcp__ctb``. Under ``ctb-eval run --ssh`` the shell feature (``exec_command``) stays on and
  Codex's own sandbox is ``danger-full-access`` (its ``read-only`` one cuts commands off the
  network), so the model can run ``ssh``; ctbench's sandbox is then the only bound, and the runner
  gives it only there (:attr:`CodexAgent.shell_is_bounded`).

Codex reports usage per turn on its standard output (``turn.completed.usage``) but not the number of
model requests; its rollout (``$CODEX_HOME/sessions/.../rollout-*.jsonl``) records one
``token_usage_record`` per model response, so rounds are model requests, as for the other harnesses
(tool-using turns, ``mcp_tool_call`` items, only when the rollout recorded none). The answer is a
``submit_answer`` call, else the last agent message.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from ctbench.evaluate.agents.harness_base import HarnessAgent, HarnessLaunch, HarnessRun, toml_str, with_v1
from ctbench.evaluate.agents.harness_transcripts import codex_transcript, codex_usage
from ctbench.plugin_api import (
    ANSWER_CAP,
    MIB,
    AgentConfigError,
    AgentContext,
    AgentResult,
    AttemptFolder,
    InfrastructureError,
    ModelTurn,
    TranscriptEntry,
    token_count,
)

PROVIDER = "ctbench"
DISABLED_FEATURES = (
    "plugins",
    "apps",
    "shell_snapshot",
    "shell_tool",
    "unified_exec",
    "unified_exec_tty",
    "multi_agent_v2",
    "goals",
    "image_generation",
    "tool_suggest",
    "skill_search",
    "skill_mcp_dependency_install",
    "sleep_tool",
    "computer_use",
    "browser_use",
    "browser_use_external",
    "in_app_browser",
    "remote_plugin",
    "api_key_model_discovery",
    "unbounded_connection_retries",
    "memories",
    "hooks",
    "daemon_auto_start",
    "in_app_updates",
    "recommended_plugins",
    "plugin_sharing",
    "code_mode_host",
    "fast_mode",
    "ultrafast_mode",
    "view_image",
    "request_permissions_tool",
    "standalone_web_search",
    "code_mode",
    "token_budget",
)
"""Codex 0.169 features that reach outside hosts or add tools other than the replay's."""
ROLLOUT_CAP = 64 * MIB
"""Most bytes of a rollout read (it holds every tool output the model was given)."""


def parse_events(lines: list[str]) -> list[dict[str, Any]]:
    from ctbench.plugin_api import json_objects

    return list(json_objects(lines))


def _is_call(e: dict[str, Any]) -> bool:
    item = e.get("item")
    return (
        e.get("type") == "item.completed" and isinstance(item, dict) and item.get("type") == "mcp_tool_call"
    )


def rollout_records(root: Path, codex_home: Path) -> list[dict[str, Any]]:
    """The lines of the rollout(s) Codex wrote under ``codex_home/sessions`` (``codex exec`` writes
    one per run), read through :class:`AttemptFolder`: no link followed, at most :data:`ROLLOUT_CAP`
    bytes each. A line cut by a kill mid-write is skipped."""
    from ctbench.plugin_api import json_objects

    base = PurePosixPath((codex_home / "sessions").relative_to(root).as_posix())
    found: list[PurePosixPath] = []
    with AttemptFolder(root) as folder:
        for year in sorted(folder.listdir(base)):
            for month in sorted(folder.listdir(base / year)):
                for day in sorted(folder.listdir(base / year / month)):
                    found += [
                        base / year / month / day / name
                        for name in sorted(folder.listdir(base / year / month / day))
                        if name.startswith("rollout-") and name.endswith(".jsonl")
                    ]
        out: list[dict[str, Any]] = []
        for rel in found:
            got = folder.read(rel, ROLLOUT_CAP)
            if got is not None:
                out += json_objects(got.data.decode("utf-8", errors="replace").splitlines())
    return out


class CodexAgent(HarnessAgent):
    name = "codex"
    description = (
        "OpenAI Codex CLI (codex exec) on the replay's MCP tools; --model, --base-url, $OPENAI_API_KEY"
    )
    harness_key = "codex"
    key_env = "OPENAI_API_KEY"
    shell_tool = "exec_command"
    shell_is_bounded = False
    rounds_kind = "model requests"

    @classmethod
    def log_turn(cls, event: Mapping[str, Any]) -> ModelTurn | None:
        """``codex exec --json`` events: an ``item.completed`` agent message, reasoning or
        ``mcp_tool_call`` is a turn, a ``turn.completed`` carries the usage of the turn before it."""
        kind = event.get("type")
        item = event.get("item")
        if kind == "item.completed" and isinstance(item, Mapping):
            if item.get("type") in ("agent_message", "reasoning") and isinstance(item.get("text"), str):
                role = "agent" if item["type"] == "agent_message" else "reasoning"
                return ModelTurn(role=role, text=item["text"])
            if item.get("type") == "mcp_tool_call":
                return ModelTurn(role="agent", text="", tool_calls=(str(item.get("tool") or "tool"),))
            return None
        usage = event.get("usage")
        if kind == "turn.completed" and isinstance(usage, Mapping):
            return ModelTurn(
                role="usage",
                text="",
                input_tokens=token_count(usage.get("input_tokens")),
                output_tokens=token_count(usage.get("output_tokens")),
                cached_tokens=token_count(usage.get("cached_input_tokens")),
            )
        return super().log_turn(event)

    def check(self) -> None:
        super().check()
        effort = self.agent_args().reasoning_effort
        if effort in ("none", "max"):
            raise AgentConfigError(
                f"--agent-arg reasoning_effort={effort}: Codex takes minimal, low, medium, high or xhigh"
            )

    def config_toml(self, ctx: AgentContext, mcp: list[str]) -> str:
        o = self.agent_args(ctx)
        lines = [
            f"model = {toml_str(ctx.options.model or '')}",
            f"model_provider = {toml_str(PROVIDER)}",
            'approval_policy = "never"',
            # --ssh: Codex's own sandbox would cut the shell off the network; ctbench's is the bound
            f'sandbox_mode = "{"danger-full-access" if ctx.ssh is not None else "read-only"}"',
            "check_for_update_on_startup = false",
            'web_search = "disabled"',
            "hide_agent_reasoning = false",
        ]
        if o.reasoning_effort:
            lines.append(f"model_reasoning_effort = {toml_str(o.reasoning_effort)}")
        lines += [
            "",
            f"[model_providers.{PROVIDER}]",
            'name = "ctbench endpoint"',
            f"base_url = {toml_str(with_v1(ctx.base_url or ''))}",
            'wire_api = "responses"',
            f"env_key = {toml_str(o.api_key_env or self.key_env)}",
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "stream_idle_timeout_ms = 300000",
            "",
            "[mcp_servers.ctb]",
            f"command = {toml_str(mcp[0])}",
            "args = [" + ", ".join(toml_str(a) for a in mcp[1:]) + "]",
            "required = true",
            "startup_timeout_sec = 60",
            "tool_timeout_sec = 300",
            'default_tools_approval_mode = "approve"',
            "",
            "[tools.experimental_request_user_input]",
            "enabled = false",
            "",
            "[features]",
            *[
                f"{feature} = false"
                for feature in DISABLED_FEATURES
                if not (ctx.ssh is not None and feature == "shell_tool")
            ],
            "",
            "[agents]",  # sub-agent tools (the deprecated [features].multi_agent switch)
            "enabled = false",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[history]",
            'persistence = "none"',
            "",
        ]
        return "\n".join(lines)

    def launch(self, ctx: AgentContext, home: Path, workspace: Path, mcp: list[str]) -> HarnessLaunch:
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(self.config_toml(ctx, mcp), encoding="utf-8")
        last = ctx.workdir / "codex-last-message.txt"
        env = self.base_env(home)
        env["CODEX_HOME"] = str(codex_home)
        env[self.agent_args(ctx).api_key_env or self.key_env] = self.api_key()
        env["NO_COLOR"] = "1"
        argv = [
            str(self.installed.executable),
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--color",
            "never",
            "-C",
            str(workspace),
            "-o",
            str(last),
            ctx.prompt,
        ]
        return HarnessLaunch(argv, env, workspace, home, {"last": last, "codex_home": codex_home})

    def usage_so_far(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> None:
        """Codex reports usage on its standard output when a turn completes (``codex exec`` runs one
        turn); an attempt cut short inside it is counted from the rollout, which records each model
        response's usage as it comes (:func:`codex_usage`). Neither: the line says tokens are unknown."""
        usage = [e.get("usage") or {} for e in parse_events(lines) if e.get("type") == "turn.completed"]
        result = ctx.result
        self.record(result, rounds_kind=self.rounds_kind, harness_version=self.harness_version)
        if usage:
            result.input_tokens = sum(int(u.get("input_tokens") or 0) for u in usage)
            result.output_tokens = sum(int(u.get("output_tokens") or 0) for u in usage)
            self.record(result, cached_tokens=sum(int(u.get("cached_input_tokens") or 0) for u in usage))
            return
        spent = codex_usage(rollout_records(ctx.workdir, launch.files["codex_home"]))
        if spent is None:
            result.notes.append(
                "tokens unknown: Codex reports usage only when its turn completes, and its rollout "
                "recorded no model response"
            )
            return
        counted, responses = spent
        result.input_tokens, result.output_tokens = counted.input, counted.output
        self.record(result, cached_tokens=counted.cached)
        if responses:
            result.rounds = responses
        else:
            result.rounds, result.rounds_kind = (
                sum(1 for e in parse_events(lines) if _is_call(e)),
                "tool turns",
            )
        result.notes.append(
            f"usage of {responses} model response(s) read from Codex's rollout (the turn did not complete)"
        )

    def transcript(self, ctx: AgentContext, launch: HarnessLaunch, lines: list[str]) -> list[TranscriptEntry]:
        return codex_transcript(rollout_records(ctx.workdir, launch.files["codex_home"]), ctx.prompt)

    def collect(self, ctx: AgentContext, launch: HarnessLaunch, run: HarnessRun) -> AgentResult:
        events = parse_events(run.lines)
        result = ctx.result
        usage = [e.get("usage") or {} for e in events if e.get("type") == "turn.completed"]
        calls = [
            e["item"]
            for e in events
            if e.get("type") == "item.completed"
            and isinstance(e.get("item"), dict)
            and e["item"].get("type") == "mcp_tool_call"
        ]
        messages = [
            e["item"].get("text") or ""
            for e in events
            if e.get("type") == "item.completed"
            and isinstance(e.get("item"), dict)
            and e["item"].get("type") == "agent_message"
        ]
        errors = [
            str(e.get("message") or (e.get("error") or {}).get("message") or e)
            for e in events
            if e.get("type") in ("error", "turn.failed")
        ]
        if usage:
            result.input_tokens = sum(int(u.get("input_tokens") or 0) for u in usage)
            result.output_tokens = sum(int(u.get("output_tokens") or 0) for u in usage)
            self.record(result, cached_tokens=sum(int(u.get("cached_input_tokens") or 0) for u in usage))
        self.record(result, rounds_kind=self.rounds_kind, harness_version=self.harness_version)
        spent = codex_usage(rollout_records(ctx.workdir, launch.files["codex_home"]))
        if spent is not None and spent[1]:
            result.rounds = spent[1]  # model requests, one usage record per response in the rollout
        else:
            result.rounds, result.rounds_kind = len(calls), "tool turns"
            result.notes.append(
                f"{self.harness}; rounds = tool turns (its rollout recorded no model response)"
            )
        ctb_calls = [c for c in calls if c.get("server") == "ctb"]
        failed_mcp = [c for c in calls if c.get("server") == "ctb" and c.get("error")]
        worked = bool(usage) or bool(messages) or bool(calls)
        mcp_failed = next((ln.strip() for ln in run.stderr if "MCP server" in ln and "failed" in ln), None)
        if mcp_failed and not ctb_calls:
            raise InfrastructureError(f"{self.harness} started without the ctb tools: {mcp_failed[-300:]}")
        if not worked:
            detail = errors[-1] if errors else "no model response"
            if run.returncode != 0 or errors:
                # nothing came back from the model: the endpoint or the MCP start-up failed
                raise InfrastructureError(f"{self.harness} got no model response: {detail[:300]}")
        if run.returncode != 0:
            raise self.crashed(self.harness, run, worked=worked, detail=(errors[-1] if errors else "")[:300])
        if errors and not usage:
            raise InfrastructureError(f"{self.harness}: model request failed: {errors[-1][:300]}")
        if failed_mcp and len(failed_mcp) == len(ctb_calls):
            result.notes.append(f"all {len(ctb_calls)} ctb tool call(s) failed")
        with AttemptFolder(ctx.workdir) as folder:  # no link, no FIFO, at most ANSWER_CAP bytes
            last = folder.read_limited(launch.files["last"].relative_to(ctx.workdir).as_posix(), ANSWER_CAP)
        text = last.decode("utf-8", errors="replace") if last is not None else None
        if not (text and text.strip()) and messages:
            text = messages[-1]
        if text and text.strip():
            result.answer_text, result.answer_source = text, "final_message"
        return result
