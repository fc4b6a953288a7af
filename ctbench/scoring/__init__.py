"""Scoring: the one judge of an answer, below every tool that shows a score.

Answer parsing (:mod:`.parse`), the paper's per-task metrics (:mod:`.metrics`), the F1-F5 failure
taxonomy (:mod:`.failures`), aggregation (:mod:`.summary`), statistics (:mod:`.stats`), the trial
estimators (:mod:`.trials`), the prompt's answer wording (:mod:`.prompt`) and the per-task judge
(:mod:`.judge`) that the runner, ``ctb-eval score``, the review reveal and the oracle check all call,
so that the four can never disagree about the same answer.

This package imports only the core (task model, store, taxonomy, dialects); ``lint-imports`` holds it
to that. Nothing is imported here so that ``import ctbench.scoring.parse`` stays light; numpy is
loaded by :mod:`.stats`, scipy lazily where a matching needs it.
"""
