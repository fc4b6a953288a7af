"""Blind review with author-reviewer consensus, every step a git commit (paper section 3.2, A.3).

Modules, by what they hold: ``states`` (the state machine and the four criteria), ``records`` (one
YAML record per review round), ``hashes`` (content hashes that reopen exactly the criteria a change
touches), ``gitflow`` (review branches, crash-safe commits with trailers), ``workflow`` (the steps,
shared by the CLI and the app), ``compare`` (the reveal, scored by the evaluator), ``view``,
``assign``, ``audit``, ``history`` (statistics), ``prdesc`` (pull-request text) and the Textual app
(``blind_app``, ``reveal_screen``, ``widgets``), which nothing else here imports.
"""
