"""The review steps of the paper's pipeline (section 3.2, A.3), one module per step.

``desk`` holds what every step shares (the task set, its review branch, the round record and the
signed commit that records a step); each other module holds one step's rules and nothing else, and
imports no other step. :class:`ctbench.review.workflow.ReviewDesk` is the one face the CLI and the
apps call.
"""
