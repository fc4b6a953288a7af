"""The adapter interface every agent implements, and the context the runner hands it.

An adapter answers three questions (issue 5): how the agent is started (:meth:`Agent.solve`, with
:meth:`Agent.open`/:meth:`Agent.close` around a whole run for shared clients), how it reaches the
replay backend (``ctx.session`` in-process, or ``ctx.replay_url`` + the session id over HTTP when
:attr:`Agent.needs_http` is set), and how its answer and usage are collected (:class:`AgentResult`).

Failures are classified by the exception an adapter raises: :class:`InfrastructureError` for the
harness side (replay backend, model endpoint unreachable or overloaded) - the runner retries those -
and :class:`AgentError` (or any other exception) for the agent itself, which is recorded, never
retried. Timeouts are the runner's business: it cancels :meth:`Agent.solve`, and adapters that start
processes end the whole process group on cancellation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from pydantic import BaseModel, ConfigDict, ValidationError

from ctbench.errors import CtbError
from ctbench.plugin_api.settings import AgentOptions as AgentOptions
from ctbench.plugin_api.settings import AgentSettings as AgentSettings
from ctbench.plugin_api.ssh import SshAccess
from ctbench.plugin_api.turns import ModelTurn, ctbench_turn
from ctbench.plugin_api.work import Transport

if TYPE_CHECKING:
    from ctbench.model import HiddenSpec, TaskSpec
    from ctbench.replay.session import Session

GROUP = "ctbench.agents"
"""The entry-point group agent plug-ins register in."""

AnswerSource = Literal["submit", "answer_file", "stdout", "final_message"]


class AgentError(Exception):
    """The agent failed: crashed, exited non-zero, or its model endpoint refused the request."""


class InfrastructureError(Exception):
    """The harness side failed (replay backend, network to the model endpoint); worth a retry."""


class AgentConfigError(CtbError):
    """The agent cannot run at all with these options (missing model, command not found, no key)."""


class AgentLog:
    """The agent's raw log (``logs/<ID>.log``): bytes in, appended, flushed at once.

    Opened in append mode so that every attempt at a task, and a rerun after a crash, adds to the
    same file instead of erasing what an earlier attempt wrote.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[bytes] | None = path.open("ab")
        self.write_error: OSError | None = None
        """The first write that failed (a full disk); later writes are dropped."""

    def fileno(self) -> int:
        assert self._fh is not None
        return self._fh.fileno()

    def write(self, text: str | bytes) -> None:
        if self._fh is None or self.write_error is not None:
            return
        try:
            self._fh.write(text.encode("utf-8", errors="replace") if isinstance(text, str) else text)
            self._fh.flush()
        except OSError as exc:  # a full temp disk: the attempt goes on, what it says is lost (noted)
            self.write_error = exc

    def line(self, text: str) -> None:
        self.write(text if text.endswith("\n") else text + "\n")

    def close(self) -> None:
        if self._fh is not None:
            try:
                self._fh.close()
            except OSError as exc:
                self.write_error = self.write_error or exc
            self._fh = None


@dataclass
class AgentResult:
    """What an attempt produced. ``answer_text`` None means the agent gave no answer at all.

    Adapters set the answer they found outside the replay session (a final message, stdout, an answer
    file); a submission in the session overrides it, and the runner applies that rule for every
    adapter, so an adapter need not look at ``ctx.session.answer`` itself.
    """

    answer_text: str | None = None
    answer_source: AnswerSource | None = None
    rounds: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    notes: list[str] = field(default_factory=list)
    cached_tokens: int | None = None
    cost_usd: float | None = None
    rounds_kind: Literal["model requests", "tool turns", "agent steps"] | None = None
    """What ``rounds`` counts: model requests where the harness reports them, else tool-using turns."""
    harness_version: str | None = None
    """The version the harness reported for this attempt (a CLI's ``--version``), when it differs by host."""
    model_reported: str | None = None
    """The model id the endpoint's responses named, when it is not the one asked for (an alias resolved
    to a dated snapshot, a router's choice); several ids are joined with ``, ``."""
    model_reported_source: str | None = None
    """Who said so: the harness's own record (``claude-code stream``), or the model endpoint's
    responses as ctbench's model tap read them (:mod:`ctbench.evaluate.model_tap`)."""
    transcript: bytes = b""
    """The conversation as JSON Lines (:mod:`ctbench.evaluate.transcript`), where the agent keeps one."""

    def saw_models(
        self, requested: str | None, seen: Iterable[str | None], source: str | None = None
    ) -> None:
        """Record the ids the endpoint reported, unless they are just the requested one."""
        ids = sorted({m for m in seen if m and m != "<synthetic>"})
        if ids and ids != [requested]:
            self.model_reported = ", ".join(ids)
            self.model_reported_source = source


class ModelRoute(Protocol):
    """An attempt's route to the model endpoint through the runner's model tap (the tap's own class is
    :class:`ctbench.evaluate.model_tap.TapRoute`): what an agent reads of it."""

    @property
    def base_url(self) -> str:
        """``--base-url`` as this attempt reaches it through the tap."""
        ...

    @property
    def failures(self) -> list[str]:
        """Why requests reached no endpoint (connection refused, a TLS error), for the task log."""
        ...

    def records(self) -> list[Any]:
        """What the endpoint answered so far (the tap's records), in the order they were complete."""
        ...


class NoOptions(BaseModel):
    """An agent without options of its own: any ``--agent-arg`` is refused with its name."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True)
class Availability:
    """Whether an agent can run on this machine (``ctb-eval agents``), and what it would run."""

    available: bool
    version: str | None = None
    detail: str = ""


@dataclass
class AgentContext:
    """Everything one attempt at one task may use. ``hidden`` is set only for :attr:`Agent.needs_hidden`."""

    task_id: str
    family: str
    spec: TaskSpec | None
    """Not filled by the runner (the prompt carries what an agent may know); kept for adapters' tests."""
    prompt: str
    session: Session
    log: AgentLog
    workdir: Path
    options: AgentSettings
    attempt: int = 1
    hidden: HiddenSpec | None = None
    replay_url: str | None = None
    result: AgentResult = field(default_factory=AgentResult)
    """Filled as the agent goes (rounds, tokens), so a timed-out attempt still reports its usage."""
    trial: int = 1
    agent_args: BaseModel = field(default_factory=NoOptions)
    """The agent's own options (its :attr:`Agent.Options`), validated from ``--agent-arg``."""
    session_token: str | None = None
    """The secret that grants this one session on the runner's server (None where none is needed)."""
    mcp_url: str | None = None
    """This session's own MCP streamable-HTTP endpoint (agents with transport ``mcp-http``)."""
    mcp_command: list[str] | None = None
    """argv of the stdio MCP proxy for this session (``ctb-replay mcp --connect URL --session ID``)."""
    launcher: Any = None
    """The sandbox's process launcher (:mod:`ctbench.evaluate.sandbox`); None when unsandboxed."""
    ssh: SshAccess | None = None
    """SSH logins on this attempt's devices (``ctb-eval run --ssh``, :mod:`ctbench.evaluate.ssh_access`)."""
    model_route: ModelRoute | None = None
    """This attempt's route through the run's model tap (:mod:`ctbench.evaluate.model_tap`), for
    agents with :attr:`Agent.uses_model_tap`; None: the agent reaches ``--base-url`` directly."""
    admit: Callable[[], Awaitable[None]] | None = None
    """For agents with :attr:`Agent.admits_itself`: awaited right before the agent's process runs,
    it waits for one of the run's running places (:class:`~ctbench.plugin_api.executor.Admission`)
    and starts the attempt's time limit. None: the runner admitted the attempt before ``solve``."""

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def base_url(self) -> str | None:
        """The model endpoint as this attempt reaches it: its tap route, else ``--base-url``."""
        return self.model_route.base_url if self.model_route is not None else self.options.base_url


class Agent(ABC):
    """One kind of agent. Instances live for a whole run; :meth:`solve` runs once per task attempt."""

    name: ClassVar[str]
    description: ClassVar[str]
    needs_hidden: ClassVar[bool] = False
    """Only the oracle: the runner loads hidden.yaml and puts it in the context."""
    transport: ClassVar[Transport] = "in-process"
    """How the agent reaches the replay; anything but in-process means a separate process (sandboxed)."""
    Options: ClassVar[type[BaseModel]] = NoOptions
    """The agent's own options, filled from ``--agent-arg KEY=VALUE`` (strings, coerced by pydantic)."""
    admits_itself: ClassVar[bool] = False
    """The agent awaits ``ctx.admit`` itself right before its process runs (the ``command`` agent,
    through :func:`~ctbench.evaluate.agents.process.run_agent_process`), so its sandbox is made
    while other attempts run; otherwise the runner admits the attempt before :meth:`solve`."""
    uses_model_tap: ClassVar[bool] = False
    """The agent reaches the model at ``ctx.base_url`` (a route through the runner's model tap), so the
    run records what the endpoint itself said: the model it named, each response's usage."""

    def __init__(self, options: AgentSettings, args: BaseModel | None = None) -> None:
        self.options = options
        self.args = args if args is not None else self.Options()

    @property
    def needs_http(self) -> bool:
        """The agent runs outside this process and reaches the replay over the runner's server."""
        return self.transport != "in-process"

    @property
    def takes_ssh(self) -> bool:
        """Whether ``ctb-eval run --ssh`` can give this agent SSH logins on its devices: it runs as
        its own process and has a way to use them (an agent CLI needs its shell tool for that)."""
        return self.needs_http

    @classmethod
    def availability(cls) -> Availability:
        """Can this agent run here? Built-in in-process agents always can."""
        from ctbench import __version__

        return Availability(True, __version__, "built in")

    @classmethod
    def parse_args(cls, pairs: dict[str, str] | dict[str, Any]) -> BaseModel:
        """Validate ``--agent-arg`` values against :attr:`Options`; one clear line on a bad one."""
        try:
            return cls.Options.model_validate(pairs)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = err.get("loc") or ("?",)
            key = str(loc[0])  # the option; the rest of pydantic's path names its own union branches
            known = ", ".join(cls.Options.model_fields) or "none"
            if err.get("type") == "extra_forbidden":
                raise AgentConfigError(
                    f"--agent-arg {key}: agent {cls.name!r} has no option {key!r} (its options: {known})"
                ) from None
            got = err.get("input")
            raise AgentConfigError(
                f"--agent-arg {key}={got}: {err.get('msg', 'invalid value')} "
                f"(agent {cls.name!r}; its options: {known})"
            ) from None

    @classmethod
    def log_turn(cls, event: Mapping[str, Any]) -> ModelTurn | None:
        """One JSON line of this agent's log (``logs/<ID>.log``) as a model turn, or None.

        The viewer, the HTML drill-down and the ATIF export call this on the log of a run this agent
        made, so a harness's own event stream is read here, in its adapter, and nowhere else. The
        default reads ctbench's neutral ``{"event": "model_turn"}`` lines (:mod:`.turns`); an adapter
        whose harness logs its own events overrides it and falls back to this."""
        return ctbench_turn(event)

    def check(self) -> None:  # noqa: B027 - optional hook, most agents accept any options
        """Refuse bad options before any task starts (raise :class:`AgentConfigError`)."""

    @property
    def harness(self) -> str:
        """What ran, as recorded in run.yaml (an external command line, or ``ctbench-<name>``)."""
        return f"ctbench-{self.name}"

    @property
    def harness_version(self) -> str:
        from ctbench import __version__

        return __version__

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Set up run-wide resources (an API client) inside the runner's event loop."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release run-wide resources."""

    @abstractmethod
    async def solve(self, ctx: AgentContext) -> AgentResult:
        """Work on one task through ``ctx.session`` (or over HTTP) and return the answer and usage."""
