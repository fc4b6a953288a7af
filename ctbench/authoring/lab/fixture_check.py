"""Re-recording the vtysh fixture from a live router and diffing it against the committed one.

``tests/fixtures/frr/vtysh_answers.json`` holds what a live vtysh printed for a fixed list of inputs
(``?`` help, abbreviations, errors, the pipe); the FRR dialect's tests hold the replay to it. The
fixture itself can drift from vtysh (a new FRR release, a changed help text), so this module types
the same inputs into a live router again and reports, input by input, what differs: the committed
answer beside the live one as a unified diff, and whether the FRR dialect's replay gives the live
answer. ``ctb-author lab vtysh-check`` runs it on a lab of its own; the opt-in test
(``CTBENCH_LIVE_FRR_FIXTURE=1``) on the test session's lab.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ctbench.dialects import Dialect
from ctbench.errors import CtbError
from ctbench.yamlio import atomic_write_text

from .runtime import Lab
from .vtysh import VtyshSession


class FixtureAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input: str
    answer: str


class VtyshFixture(BaseModel):
    """The fixture file: where it was recorded, the prompt, and each input with vtysh's answer."""

    model_config = ConfigDict(extra="forbid")

    source: str
    prompt: str
    answers: list[FixtureAnswer]


def load_fixture(path: Path) -> VtyshFixture:
    """Read the fixture; a bad one is a CtbError naming the file (and the field), never a traceback."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CtbError(f"{path}: cannot read the fixture ({exc.strerror})", exit_code=2) from None
    except ValueError as exc:
        raise CtbError(f"{path}: not JSON ({exc})", exit_code=2) from None
    try:
        return VtyshFixture.model_validate(data)
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors())
        raise CtbError(f"{path}: not a vtysh fixture ({where})", exit_code=2) from None


def replay_answer(dialect: Dialect, line: str, prompt: str) -> str:
    """What the replay prints for a typed line that is help or an error (commands print recordings)."""
    if line.endswith("?"):
        return dialect.help(line, prompt)
    res = dialect.resolve(line)
    if res.error is None:
        return f"(runs {res.canonical})"
    return dialect.render_error(res.error, line, prompt)


def ask_live(lab: Lab, device: str, inputs: Sequence[str]) -> tuple[str, list[str]]:
    """(prompt, answers): each input typed into one interactive vtysh on ``device``, in order.

    A fixture input that runs a command (rather than asking ``?`` or causing an error) is recorded
    as ``(runs CANONICAL)`` like the committed fixture, since its output is the lab's live state.
    """
    with VtyshSession(lab.vtysh_argv(device)) as session:
        answers = [session.ask(line) for line in inputs]
        return session.prompt, answers


@dataclass(frozen=True)
class Difference:
    input: str
    committed: str
    live: str
    replay_matches_live: bool

    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.committed.splitlines(keepends=True),
            self.live.splitlines(keepends=True),
            fromfile="committed",
            tofile="live",
            lineterm="\n",
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ no newline\n" for line in lines)


@dataclass
class CheckReport:
    """Input by input, what the live vtysh answered differently from the committed fixture."""

    device: str
    checked: int
    committed_prompt: str
    live_prompt: str
    differences: list[Difference] = field(default_factory=list)
    replay_differs: list[str] = field(default_factory=list)
    """Inputs the live vtysh answered as committed but the replay (the FRR dialect) does not."""

    @property
    def ok(self) -> bool:
        return not self.differences and not self.replay_differs and self.committed_prompt == self.live_prompt

    def text(self) -> str:
        head = f"vtysh fixture re-check on {self.device}: {self.checked} inputs"
        if self.ok:
            return f"{head}, all answered as committed (and as the replay answers)\n"
        out = [f"{head}, {len(self.differences)} answered differently from the committed fixture"]
        if self.committed_prompt != self.live_prompt:
            out.append(f"prompt: committed {self.committed_prompt!r}, live {self.live_prompt!r}")
        for d in self.differences:
            replay = "the replay gives the live answer" if d.replay_matches_live else "the replay does not"
            out.append(f"--- input {d.input!r} ({replay}):")
            out.append(d.diff().rstrip("\n"))
        for line in self.replay_differs:
            out.append(f"--- input {line!r}: live vtysh as committed, but the replay answers otherwise")
        return "\n".join(out) + "\n"

    def as_json(self) -> dict[str, object]:
        return {
            "device": self.device,
            "checked": self.checked,
            "ok": self.ok,
            "prompt": {"committed": self.committed_prompt, "live": self.live_prompt},
            "differences": [
                {
                    "input": d.input,
                    "committed": d.committed,
                    "live": d.live,
                    "replay_matches_live": d.replay_matches_live,
                }
                for d in self.differences
            ],
            "replay_differs": self.replay_differs,
        }


def check_fixture(
    fixture: VtyshFixture, live_prompt: str, live: Sequence[str], dialect: Dialect, device: str
) -> CheckReport:
    """The report for live answers (in the fixture's order) against the committed ones."""
    if len(live) != len(fixture.answers):
        raise CtbError(f"re-check: {len(live)} live answers for {len(fixture.answers)} inputs")
    report = CheckReport(device, len(live), fixture.prompt, live_prompt)
    for row, answer in zip(fixture.answers, live, strict=True):
        replay = replay_answer(dialect, row.input, live_prompt)
        if answer != row.answer:
            report.differences.append(Difference(row.input, row.answer, answer, replay == answer))
        elif replay != answer:
            report.replay_differs.append(row.input)
    return report


def rerecorded(fixture: VtyshFixture, live_prompt: str, live: Sequence[str]) -> VtyshFixture:
    """The fixture with the live answers (same inputs, same source note)."""
    return fixture.model_copy(
        update={
            "prompt": live_prompt,
            "answers": [
                FixtureAnswer(input=row.input, answer=a) for row, a in zip(fixture.answers, live, strict=True)
            ],
        }
    )


def write_fixture(path: Path, fixture: VtyshFixture) -> None:
    """Write a fixture (temp file and rename: an interrupted write leaves the old one whole)."""
    atomic_write_text(path, json.dumps(fixture.model_dump(), indent=1, ensure_ascii=False) + "\n")
