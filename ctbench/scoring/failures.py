"""Automatic F1-F5 failure taxonomy for wrong RCA answers (paper appendix E.2, Table 28).

The paper's annotators applied the taxonomy by hand "with a fixed priority order": output level
first, then answer-set level, then entry level with mechanism before object (E.2). Table 28's rows
follow that order: F5, then F1 and F2, then F4 and F3. This module makes the order a deterministic
rule, so a run's failure profile (Table 29) is computed, not annotated.

Every stated cause is a predicted entry, including lines whose node, label or object the task does
not know (:mod:`.parse`): such an entry matches no gold entry and shares no mechanism with one when
its label is unknown, so it is judged like any other wrong entry.

The rule, for a task whose prediction is not exactly the gold set (``P != G``; correct answers get no
label). Entries in both sets are set aside. A remaining predicted entry ``p`` *addresses* a remaining
gold entry ``g`` when they name the same mechanism (label) or the same node: ``p`` is then an
entry-level error about ``g`` (the gold cause returned on the wrong node or object, or the right place
with the wrong mechanism) rather than a different cause. Remaining gold and predicted entries are
paired one-to-one by an optimal assignment (``scipy.optimize.linear_sum_assignment``) that maximises
the number of addressed pairs first, then ``4*[same label] + 2*[same node] + [same object]``, so a pair
agrees on mechanism whenever some pairing can, then on node, then on object. Then, in priority order:

1. **F5 answer realisation** - the final answer is not realised under the required RCA schema (E.2:
   "first checked whether the final answer was parseable under the required RCA schema"; Table 28:
   "the output is missing, malformed, or uses labels outside the schema"): the prediction is
   missing (timeout, error, no final message), its status is ``empty`` / ``unparsable``, or any of
   its lines is outside the schema - a node or label the task does not know, an object the node
   cannot have, or a line of the wrong shape inside a declared answer
   (:attr:`ParsedAnswer.schema_violations`). This comes before any set or entry comparison; the
   answer's parseable entries still count in the IoUs.
2. **F1 causal coverage deficit** - a gold cause is missing from the set: ``|P| < |G|``, or the answer
   asserts more causes than the gold (``|P| > |G|``) yet some gold cause is *dropped entirely* -
   neither returned nor addressed by any predicted entry. E.2: "when a prediction both misses an
   independent root cause and mislocalizes a returned tuple, the set-level coverage error is assigned
   first", so ``G={A,B}``, ``P={A,C,D}`` with ``C``, ``D`` unrelated to ``B`` is F1, not F2.
3. **F2 causal minimality violation** - ``|P| > |G|`` and every gold cause is returned or addressed:
   the answer keeps non-gold causes beside the gold ones (paper example q18: the gold VRRP fault is
   returned on a different firewall, beside a prefix-list fault that is not a cause - F2, not F3).
4. Otherwise ``|P| == |G|``: the answer set is *comparable* to the gold set (each predicted entry
   stands in for one gold entry) and the error is in its entries, compared pair by pair:
   - **F4 mechanism discrimination** - some pair has different labels, whatever else is wrong with it
     ("a prediction with both a wrong mechanism and a wrong object is labeled F4 rather than F3"; the
     object includes the device, E.2);
   - **F3 fault-object grounding** - every pair has the right label, and some pair's node or object
     differs.

This reproduces the paper's examples (E.3): q12 empty answer -> F5; q7 one of two gold causes -> F1;
q18 a non-gold cause beside the gold mechanism on the wrong node -> F2; q10 right firewall and
address, OSPF label instead of VRRP -> F4; q11 right label and address on a neighbouring switch -> F3.

Every stated cause counts in the IoUs, including lines whose node, label or object the task does not
know (:mod:`.parse`); such a line makes the answer F5 by the order above: ``FW_02;...;VRRP`` plus
``Core_SW_01;8.8.8.8;routing loop on the core`` (a label outside the schema) for the gold
``FW_02;...;VRRP`` is F5, not a correct answer and not F2.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass
from typing import Literal

from ctbench.answer import RcaEntry
from ctbench.scoring.parse import ParsedAnswer

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

    ``pairs`` are the (gold, predicted) entry pairs compared, sorted: for F3/F4 every missing gold
    entry with the predicted entry standing in for it; for F1/F2 only the pairs in which the predicted
    entry addresses its gold entry (same label or node; see the module docstring).
    """

    mode: FailureMode
    missing: int = 0
    extra: int = 0
    pairs: tuple[tuple[RcaEntry, RcaEntry], ...] = ()


def addresses(gold: RcaEntry, pred: RcaEntry) -> bool:
    """Whether ``pred`` is an entry-level error about ``gold`` (same mechanism, or same node)."""
    return gold.label == pred.label or gold.node == pred.node


def _pair_entries(gold: list[RcaEntry], pred: list[RcaEntry]) -> list[tuple[RcaEntry, RcaEntry]]:
    """The optimal one-to-one pairing of the module docstring, sorted."""
    if not gold or not pred:
        return []
    from scipy.optimize import linear_sum_assignment  # lazy: keeps `import ctbench.scoring` light

    weights = [
        [
            8 * addresses(g, p) + 4 * (g.label == p.label) + 2 * (g.node == p.node) + (g.object == p.object)
            for p in pred
        ]
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
        return None  # exactly right: no failure, whatever else the answer held
    if prediction.schema_violations:
        return FailureDiagnosis("F5", missing=len(gold - pred), extra=len(pred - gold))
    missing = len(gold - pred)
    extra = len(pred - gold)
    pairs = _pair_entries(sorted(gold - pred), sorted(pred - gold))
    if len(pred) < len(gold):
        return FailureDiagnosis(
            "F1", missing=missing, extra=extra, pairs=tuple(p for p in pairs if addresses(*p))
        )
    if len(pred) > len(gold):
        addressed = tuple(p for p in pairs if addresses(*p))
        mode: FailureMode = "F1" if len(addressed) < missing else "F2"  # a gold cause dropped entirely: F1
        return FailureDiagnosis(mode, missing=missing, extra=extra, pairs=addressed)
    mode = "F4" if any(g.label != p.label for g, p in pairs) else "F3"
    return FailureDiagnosis(mode, missing=missing, extra=extra, pairs=tuple(pairs))


def classify_rca_failure(gold: Set[RcaEntry], prediction: ParsedAnswer | None) -> FailureMode | None:
    """Just the label of :func:`diagnose_rca_failure` (``None`` for an exactly correct answer)."""
    diagnosis = diagnose_rca_failure(gold, prediction)
    return None if diagnosis is None else diagnosis.mode
