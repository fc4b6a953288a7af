"""Evaluation: answer parsing (:mod:`.parse`), the paper's metrics (:mod:`.metrics`), statistics
(:mod:`.stats`) and the F1-F5 failure taxonomy (:mod:`.failures`).

Nothing is imported here so that ``import ctbench.evaluate.parse`` (used by review and replay) stays
light; numpy is loaded by :mod:`.stats`, scipy lazily where a matching or a test needs it.
"""
