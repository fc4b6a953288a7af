"""A tool-calling agent loop for any OpenAI-compatible chat endpoint, on the official ``openai`` client.

The loop is deliberately plain - the benchmark measures the model, not clever scaffolding: the prompt
as the one user message, three tools (``list_devices``, ``run_command``, ``submit_answer``), and
rounds of "ask the model, run the tool calls it made" until it submits an answer, replies without a
tool call (that reply is its answer), or reaches ``--max-rounds``. A round is one model request;
input and output tokens are summed from each response's ``usage`` (left unknown when the endpoint
reports none). Every request and reply is written to the task's raw log, and the conversation (each
response with its calls, usage and model id, each tool result as the model got it, with the time)
to the attempt's transcript (:mod:`ctbench.evaluate.transcript`), however the attempt ends.

The key comes from ``OPENAI_API_KEY`` or ``CTBENCH_API_KEY``; an endpoint given with ``--base-url``
(a local server, say) may need none. Endpoint trouble that a retry can fix - connection failures,
timeouts, rate limits, 5xx - is an infrastructure error; a request the endpoint refuses (bad model
name, bad key, malformed request) is the agent's error.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ctbench.plugin_api import (
    INPUT_SCHEMAS,
    TOOL_NAMES,
    Agent,
    AgentConfigError,
    AgentContext,
    AgentError,
    AgentResult,
    InfrastructureError,
    ReplayTools,
    ToolCall,
    TranscriptEntry,
    TranscriptUsage,
    dump_transcript,
)

DEFAULT_MAX_ROUNDS = 50
MAX_TOOL_OUTPUT = 60_000
"""Characters of one command's output passed back to the model (the full output stays in the replay)."""
KEY_VARIABLES = ("OPENAI_API_KEY", "CTBENCH_API_KEY")

_DESCRIPTIONS = {
    "list_devices": "List the devices you may query, with vendor, CLI family, type, role and site.",
    "run_command": "Run one read-only CLI command on one device and return its output as the device printed it.",
    "submit_answer": "Submit the final answer, all lines at once, in the required format. Ends the task.",
}
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {"name": name, "description": _DESCRIPTIONS[name], "parameters": INPUT_SCHEMAS[name]},
    }
    for name in TOOL_NAMES
]
"""The three replay tools as chat-completions function specs (arguments as the shared tools check them)."""


def api_key() -> str | None:
    for name in KEY_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _clip(text: str, limit: int = MAX_TOOL_OUTPUT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output clipped at {limit} of {len(text)} characters; narrow the command]\n"


class OpenAIOptions(BaseModel):
    """Sampling options passed to every chat-completions request (omitted when not given)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(default=None, ge=0, le=2, description="sampling temperature")
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        default=None, description="reasoning effort, for models that take one"
    )

    def request_kwargs(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class OpenAIAgent(Agent):
    name = "openai"
    description = "tool-calling loop on an OpenAI-compatible endpoint"

    Options = OpenAIOptions

    def __init__(self, options: Any, args: Any = None) -> None:
        super().__init__(options, args)
        self._client: Any = None

    def check(self) -> None:
        if not self.options.model:
            raise AgentConfigError("--agent openai needs --model (the model name the endpoint serves)")
        if api_key() is None and not self.options.base_url:
            raise AgentConfigError(
                "--agent openai needs an API key in OPENAI_API_KEY or CTBENCH_API_KEY "
                "(or --base-url for an endpoint that needs none)"
            )
        try:
            import openai  # noqa: F401
        except ImportError:
            raise AgentConfigError("--agent openai needs the 'openai' package: pip install openai") from None

    @property
    def harness_version(self) -> str:
        import openai

        from ctbench import __version__

        return f"{__version__} (openai {openai.__version__})"

    async def open(self) -> None:
        import openai

        self._client = openai.AsyncOpenAI(
            api_key=api_key() or "not-needed",
            base_url=self.options.base_url,
            timeout=min(600.0, self.options.timeout_s),
            max_retries=2,
        )

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # ----------------------------------------------------------------- the loop

    async def solve(self, ctx: AgentContext) -> AgentResult:
        if self._client is None:
            await self.open()
        client = self._client
        max_rounds = ctx.options.max_rounds or DEFAULT_MAX_ROUNDS
        messages: list[dict[str, Any]] = [{"role": "user", "content": ctx.prompt}]
        result = ctx.result
        result.rounds = 0
        ctx.log.line(f"[user]\n{ctx.prompt}")
        tools = ReplayTools(ctx.session)
        seen_models: list[str | None] = []
        said: list[TranscriptEntry] = [
            TranscriptEntry(kind="prompt", t=_now(), source=SOURCE, text=ctx.prompt)
        ]
        try:
            final_text, _ = await self._loop(ctx, client, messages, tools, seen_models, said, max_rounds)
        finally:  # the conversation so far, however the attempt ends (a timeout cancels the loop)
            result.transcript = dump_transcript(said)
        # A submit_answer call, if any, is the answer: the runner takes it from the session.
        if final_text is not None and final_text.strip():
            result.answer_text, result.answer_source = final_text, "final_message"
        return result

    async def _loop(
        self,
        ctx: AgentContext,
        client: Any,
        messages: list[dict[str, Any]],
        tools: ReplayTools,
        seen_models: list[str | None],
        said: list[TranscriptEntry],
        max_rounds: int,
    ) -> tuple[str | None, bool]:
        """Ask the model, run its tool calls, until it answers or the rounds run out; ``said`` gets
        every response and tool result as it happens."""
        import openai

        result = ctx.result
        final_text: str | None = None
        submitted = False
        for round_no in range(1, max_rounds + 1):
            try:
                response = await client.chat.completions.create(
                    model=ctx.options.model, messages=messages, tools=TOOLS, **_request_kwargs(self.args)
                )
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                raise InfrastructureError(f"model endpoint: {type(exc).__name__}: {exc}") from None
            except openai.APIStatusError as exc:
                raise AgentError(
                    f"model endpoint refused the request: HTTP {exc.status_code}: {_error_text(exc)}"
                ) from None
            except openai.OpenAIError as exc:
                raise AgentError(f"model endpoint: {type(exc).__name__}: {exc}") from None
            result.rounds = round_no
            seen_models.append(getattr(response, "model", None))
            result.saw_models(ctx.options.model, seen_models, "openai agent (the responses it received)")
            usage = getattr(response, "usage", None)
            if usage is not None:
                result.input_tokens = (result.input_tokens or 0) + int(usage.prompt_tokens or 0)
                result.output_tokens = (result.output_tokens or 0) + int(usage.completion_tokens or 0)
            if not response.choices:
                raise AgentError("model endpoint returned no choices")
            message = response.choices[0].message
            calls = list(message.tool_calls or [])
            said.append(_said(response, message, calls))
            ctx.log.line(f"[assistant, round {round_no}]\n{message.content or ''}")
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if calls:
                entry["tool_calls"] = [_call_json(c) for c in calls]
            messages.append(entry)
            if not calls:
                final_text = message.content
                break
            for call in calls:
                content, submitted_now = self._tool(ctx, tools, call)
                submitted = submitted or submitted_now
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
                said.append(
                    TranscriptEntry(
                        kind="tool_result",
                        t=_now(),
                        source=SOURCE,
                        call_id=call.id,
                        name=getattr(getattr(call, "function", None), "name", None),
                        content=content,
                    )
                )
            if submitted:
                break
        else:
            ctx.log.line(f"[ctbench] round limit {max_rounds} reached without a final answer")
            result.notes.append(f"round limit {max_rounds} reached")
        return final_text, submitted

    def _tool(self, ctx: AgentContext, tools: ReplayTools, call: Any) -> tuple[str, bool]:
        """Run one tool call; returns the tool message content and whether it was a submission.

        The tools themselves are :class:`~ctbench.replay.tools.ReplayTools`, the same the MCP server
        serves, so both transports answer alike; only decoding the call and the size limit are ours.
        A chat tool message has no error flag, so an error result goes back as its text alone (a
        prefix would shift the echoed line an invalid command's caret points into).
        """
        function = getattr(call, "function", None)
        if getattr(call, "type", "function") != "function" or function is None:
            return f"error: only the function tools {', '.join(TOOL_NAMES)} exist", False
        name = function.name
        try:
            args = json.loads(function.arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            ctx.log.line(f"[tool {name}] bad arguments {function.arguments!r}: {exc}")
            return f"error: the arguments are not a JSON object ({exc})", False
        ctx.log.line(f"[tool call] {name} {json.dumps(args, ensure_ascii=False)}")
        res = tools.call(name, args)
        if res.meta is not None and "outcome" in res.meta:
            ctx.log.line(f"[tool result] {res.meta['outcome']}, {len(res.text)} characters")
        elif res.is_error:
            ctx.log.line(f"[tool result] error: {res.text}")
        submitted = name == "submit_answer" and not res.is_error
        if submitted:
            ctx.log.line(f"[submitted]\n{args['answer']}")
        if res.data is not None and not res.is_error:
            return json.dumps(res.data, ensure_ascii=False), submitted
        return _clip(res.text), submitted


SOURCE = "openai agent"


def _now() -> datetime:
    return datetime.now(UTC)


def _said(response: Any, message: Any, calls: list[Any]) -> TranscriptEntry:
    """One model response as a transcript entry: its text, calls, usage and model id."""
    usage = getattr(response, "usage", None)
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    return TranscriptEntry(
        kind="model",
        t=_now(),
        source=SOURCE,
        text=message.content or None,
        tool_calls=[
            ToolCall(
                id=str(c.id),
                name=str(getattr(getattr(c, "function", None), "name", "") or "tool"),
                arguments=_arguments(getattr(getattr(c, "function", None), "arguments", None)),
            )
            for c in calls
        ],
        usage=None
        if usage is None
        else TranscriptUsage(
            input=usage.prompt_tokens,
            cached=cached if isinstance(cached, int) else None,
            output=usage.completion_tokens,
        ),
        model=getattr(response, "model", None),
    )


def _arguments(raw: Any) -> dict[str, Any]:
    try:
        got = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {"_raw": str(raw)}
    return got if isinstance(got, dict) else {"_raw": str(raw)}


def _call_json(call: Any) -> dict[str, Any]:
    function = getattr(call, "function", None)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": getattr(function, "name", ""), "arguments": getattr(function, "arguments", "")},
    }


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
    return str(exc)[:300]


def _request_kwargs(args: BaseModel) -> dict[str, Any]:
    return args.request_kwargs() if isinstance(args, OpenAIOptions) else {}
