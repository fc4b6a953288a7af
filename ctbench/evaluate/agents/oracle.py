"""The oracle: replays the golden actions and answers the gold.

It is the ceiling of every metric and the end-to-end check of the pipeline: if the oracle does not
score 100 on accuracy, localisation, identification, restoration and evidence, something between the
task files, the replay engine, the run folder and the scorer disagrees. It is the only agent the
runner gives the hidden part of a task.
"""

from __future__ import annotations

from ctbench.plugin_api import (
    Agent,
    AgentConfigError,
    AgentContext,
    AgentResult,
    Family,
    ParsedAnswer,
    families,
)


def gold_answer_text(ctx: AgentContext) -> str:
    """The gold answer written exactly as the prompt asks agents to write it."""
    hidden = ctx.hidden
    if hidden is None:
        raise AgentConfigError("the oracle needs the hidden part of the task")
    family = Family(ctx.family)
    if family.builtin:
        lines = hidden.gold_answer_lines(family)
    else:  # a plug-in family writes its gold as it asks agents to write answers
        kind = families().get(family.value)
        if kind is None:
            raise AgentConfigError(f"no task family {family.value!r} is installed")
        gold = kind.gold(hidden.answer, normalize=lambda node, name: name, resolve_label=lambda label: label)
        lines = kind.lines(ParsedAnswer("answered", entries=gold, kind=family.value)) if gold else []
    return "<answer>\n" + "\n".join(lines) + "\n</answer>\n"


class OracleAgent(Agent):
    name = "oracle"
    description = "runs the golden actions and answers the gold"
    needs_hidden = True

    async def solve(self, ctx: AgentContext) -> AgentResult:
        assert ctx.hidden is not None
        for action in ctx.hidden.golden_actions:
            obs = ctx.session.run(action.device, action.command)
            ctx.log.line(
                f"{action.device}> {action.command}  [{obs.outcome.value}, {obs.output_bytes} bytes]"
            )
        answer = gold_answer_text(ctx)
        ctx.session.submit(answer)
        ctx.log.line("submitted:\n" + answer)
        # The submission is the answer (the runner reads it from the session, source "submit").
        return AgentResult(rounds=len(ctx.hidden.golden_actions), input_tokens=0, output_tokens=0)
