"""The review half of the task folder contract, in the core: every tool that asks "is this task approved?"
reads it, so the run gate and the authoring app need not reach into the review component for it.

:mod:`~ctbench.approval.states` is the vocabulary and the state machine (statuses, roles, actions, the four
criteria), :mod:`~ctbench.approval.hashes` the per-part content hashes a verdict is given on,
:mod:`~ctbench.approval.records` the review records in ``reviews/round-NN.yaml``, and
:mod:`~ctbench.approval.check` the one answer to "approved and unchanged since?". The review component
(``ctbench.review``) writes the records through its workflow; everything here only reads and computes.
"""
