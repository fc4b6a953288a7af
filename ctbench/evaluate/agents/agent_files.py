"""Moved to :mod:`ctbench.plugin_api.agent_files`: reading what an agent CLI left in its attempt folder,
without following links, is part of the kit every agent CLI adapter needs. This name stays so code
written against it keeps working."""

from ctbench.plugin_api.agent_files import (
    ANSWER_CAP,
    CHUNK,
    DB_CAP,
    KIB,
    LOG_CAP,
    MIB,
    SMALL_CAP,
    TAIL_CAP,
    AttemptFolder,
    Capped,
    RefusedFile,
    Writer,
    copy_capped,
    human,
    log_tail,
    read_log,
    truncation_marker,
)

__all__ = [
    "ANSWER_CAP",
    "CHUNK",
    "DB_CAP",
    "KIB",
    "LOG_CAP",
    "MIB",
    "SMALL_CAP",
    "TAIL_CAP",
    "AttemptFolder",
    "Capped",
    "RefusedFile",
    "Writer",
    "copy_capped",
    "human",
    "log_tail",
    "read_log",
    "truncation_marker",
]
