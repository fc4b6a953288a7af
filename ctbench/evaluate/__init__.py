"""Evaluation: running agents over tasks (:mod:`.runner`), reading run folders and scoring them with
the one judge of :mod:`ctbench.scoring` (:mod:`.score`), and the reports, comparisons and exports
built on those scores.
"""
