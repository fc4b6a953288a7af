"""The runner freezes the collector's view of what outlives the run's attempts, and thaws it after.

Why: at 1,000 tasks each full collection walked the task set, plan and units again, 0.7-0.8 ms per
task (`tests/bench/bench_runner.py` part 1 prints it beside the runner without the freeze).
"""

from __future__ import annotations

import gc
from pathlib import Path

from ctbench.evaluate.agents import Agent, AgentContext, AgentOptions, AgentResult
from ctbench.evaluate.runner import Runner, RunSettings


class FreezeWitness(Agent):
    """Answers at once and notes how many objects the collector had set aside while it ran."""

    name = "freeze-witness"
    description = "notes gc.get_freeze_count() during the attempt"
    seen: list[int]

    async def solve(self, ctx: AgentContext) -> AgentResult:
        self.seen.append(gc.get_freeze_count())
        ctx.session.submit("CORE_SW_01;GigabitEthernet0/0/24;shutdown")
        return AgentResult(rounds=1)


def _run(task_set: Path, out: Path) -> list[int]:
    agent = FreezeWitness(AgentOptions())
    agent.seen = []
    settings = RunSettings(allow_unreviewed=True, agent="freeze-witness", tasks=task_set, out=out)
    report = Runner(settings, agent=agent).run()
    assert report.complete and report.ran == len(agent.seen) > 0
    return agent.seen


def test_the_run_freezes_what_outlives_its_attempts_and_thaws_it_after(
    task_set: Path, tmp_path: Path
) -> None:
    assert gc.get_freeze_count() == 0
    seen = _run(task_set, tmp_path / "run")
    assert all(n > 1000 for n in seen), seen  # the task set, the plan, the units (and the rest)
    assert gc.get_freeze_count() == 0  # thawed: what the run let go of can be collected again


def test_a_callers_own_freeze_is_left_as_it_was(task_set: Path, tmp_path: Path) -> None:
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        _run(task_set, tmp_path / "run")
        # not thawed (objects freed by their count leave the frozen set, so it may shrink), not grown
        assert 0 < gc.get_freeze_count() <= before
    finally:
        gc.unfreeze()
