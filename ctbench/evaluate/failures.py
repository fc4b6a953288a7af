"""Automatic F1-F5 failure taxonomy for wrong RCA answers (paper appendix E.2, Table 28).

The paper's annotators applied the taxonomy by hand "with a fixed priority order": output level
first, then answer-set level, then entry level with mechanism before object (E.2). This module makes
that order a deterministic rule, so a run's failure profile (Table 29) is computed, not annotated.

The rule, for a task whose prediction is not exactly the gold set (``P != G``; correct answers get no
label):

1. **F5 answer realisation** - there is no parsed answer: the prediction is missing (timeout, error,
   no final message) or its status is ``empty`` / ``unparsable``.
2. **F1 causal coverage deficit** - ``|P| < |G|``: fewer predicted root causes than gold causes, so
   under any one-to-one correspondence of predicted to gold entries at least one gold cause is left
   unmatched. Checked before F2, as the paper assigns "the set-level coverage error ... first".
3. **F2 causal minimality violation** - ``|P| > |G|``: the answer asserts more causes than there are,
   i.e. at least one non-gold extra cause, whatever else is wrong (paper example q18).
4. Otherwise ``|P| == |G|``: the answer set is *comparable* to the gold set and the error is in its
   entries. Entries in both sets are set aside; the remaining predicted and gold entries (equally many)
   are paired one-to-one by an optimal assignment (``scipy.optimize.linear_sum_assignment``) that
   maximises ``4*[same label] + 2*[same node] + [same object]`` summed over pairs, so a pair agrees on
   mechanism whenever some pairing can, then on node, then on object. Then:
   - **F4 mechanism discrimination** - some pair has different labels (even if its node/object is
     wrong too: "mechanism mismatch has priority over object mismatch");
   - **F3 fault-object grounding** - every pair has the right label, and some pair's node or object
     differs.

This reproduces the paper's examples (E.3): q12 empty answer -> F5; q7 one of two gold causes -> F1;
q18 two predicted causes for one gold cause -> F2; q10 right firewall and address, OSPF label instead
of VRRP -> F4; q11 right label and address on a neighbouring switch -> F3.

Definitional consequence to know: the set level is decided by counts alone, so ``G={A,B}``,
``P={A,C,D}`` with ``C``, ``D`` unrelated is F2 (extra causes), not F1; and a comparable answer whose
entry is wholly wrong (wrong label and wrong node) is F4, as the paper prescribes for an entry with
both a wrong mechanism and a wrong object.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Literal

from ctbench.answer import RcaEntry
from ctbench.evaluate.parse import ParsedAnswer

FailureMode = Literal["F1", "F2", "F3", "F4", "F5"]

FAILURE_MODES: dict[str, str] = {
    "F1": "causal coverage deficit",
    "F2": "causal minimality violation",
    "F3": "fault-object grounding error",
    "F4": "mechanism discrimination error",
    "F5": "answer realisation failure",
}
"""Label -> name, in code order (Table 28 lists them in priority order F5, F1, F2, F4, F3)."""

PRIORITY: tuple[FailureMode, ...] = ("F5", "F1", "F2", "F4", "F3")


@dataclass(frozen=True, slots=True)
class FailureDiagnosis:
    """The failure label of one wrong RCA answer, with what led to it.

    ``pairs`` are the (gold, predicted) entry pairs compared at entry level (only for F3/F4), sorted.
    """

    mode: FailureMode
    missing: int = 0
    extra: int = 0
    pairs: tuple[tuple[RcaEntry, RcaEntry], ...] = ()


def _pair_entries(gold: list[RcaEntry], pred: list[RcaEntry]) -> list[tuple[RcaEntry, RcaEntry]]:
    from scipy.optimize import linear_sum_assignment  # lazy: keeps `import ctbench.evaluate` light

    weights = [
        [4 * (g.label == p.label) + 2 * (g.node == p.node) + (g.object == p.object) for p in pred]
        for g in gold
    ]
    rows, cols = linear_sum_assignment(weights, maximize=True)
    return sorted((gold[r], pred[c]) for r, c in zip(rows.tolist(), cols.tolist(), strict=True))


def diagnose_rca_failure(gold: Set[RcaEntry], prediction: ParsedAnswer | None) -> FailureDiagnosis | None:
    """Assign the primary failure label to an RCA prediction; ``None`` when it is exactly correct.

    ``prediction`` is the parsed answer, or ``None`` when the task produced none (timeout, error).
    See the module docstring for the rule.
    """
    if prediction is None or prediction.status != "answered":
        return FailureDiagnosis("F5", missing=len(gold))
    if prediction.rca is None:
        raise ValueError("an RCA task needs an RCA prediction (got a path answer)")
    pred = prediction.rca
    if pred == gold:
        return None
    missing = len(gold - pred)
    extra = len(pred - gold)
    if len(pred) < len(gold):
        return FailureDiagnosis("F1", missing=missing, extra=extra)
    if len(pred) > len(gold):
        return FailureDiagnosis("F2", missing=missing, extra=extra)
    pairs = tuple(_pair_entries(sorted(gold - pred), sorted(pred - gold)))
    mode: FailureMode = "F4" if any(g.label != p.label for g, p in pairs) else "F3"
    return FailureDiagnosis(mode, missing=missing, extra=extra, pairs=pairs)


def classify_rca_failure(gold: Set[RcaEntry], prediction: ParsedAnswer | None) -> FailureMode | None:
    """Just the label of :func:`diagnose_rca_failure` (``None`` for an exactly correct answer)."""
    diagnosis = diagnose_rca_failure(gold, prediction)
    return None if diagnosis is None else diagnosis.mode
