"""Blind review with author-reviewer consensus, every step a git commit (paper section 3.2, A.3).

Modules, by what they hold: ``states`` (the state machine and the four criteria), ``records`` (one
YAML record per review round), ``hashes`` (content hashes that reopen exactly the criteria a change
touches), ``gitflow`` (review branches, crash-safe commits with trailers), ``steps`` (one module per review
step, and ``steps.desk``, the plumbing they share), ``workflow`` (``ReviewDesk``, the steps' one face
for the CLI and the app), ``blind_judge`` (the reveal's judge of a blind answer, through scoring), ``view``,
``assign``, ``audit``, ``history`` (statistics), ``prdesc`` (pull-request text) and the Textual app
(``blind_app``, ``reveal_screen``, ``widgets``), which nothing else here imports.
"""
