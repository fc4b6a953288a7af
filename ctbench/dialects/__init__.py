"""Vendor dialects: how each vendor's CLI reads a command line, and what it prints back.

The replay engine resolves every command an agent sends through the device's dialect::

    from ctbench.dialects import get_dialect

    d = get_dialect("huawei_vrp")
    r = d.resolve("dis ip rou | i 10.0", recorded=frozenset({"display ip routing-table"}))
    r.canonical        # 'display ip routing-table'  (the recording key)
    r.filters          # (OutputFilter(kind='include', keyword='include', pattern='10.0', ...),)
    d.apply_filters(recorded_bytes, r.filters)

Invalid lines carry a ``CliError`` that ``render_error`` turns into the vendor's own text with the
caret under the offending character. ``d.help("dis int ?", prompt)`` is the vendor's context help at
that point and ``d.complete("dis cu")`` the Tab candidates, both from the tree alone. The command trees are data (``data/<os>.yaml``); a task set
adds commands with extra tree files of the same format (``get_dialect(os, extra_trees=(path,))``). A
new vendor is one more data file, bundled or in a folder on ``$CTBENCH_DIALECT_PATH``: the list of
CLI families (:func:`os_families`) is the list of data files.

This package is part of the core: it imports neither Textual nor any of the four components.
"""

from ._profile import DIALECT_PATH_ENV
from ._types import CliError, ErrorKind, FilterKind, OutputFilter, Resolution
from .dialect import OS_FAMILIES, Dialect, get_dialect, os_families

__all__ = [
    "DIALECT_PATH_ENV",
    "OS_FAMILIES",
    "CliError",
    "Dialect",
    "ErrorKind",
    "FilterKind",
    "OutputFilter",
    "Resolution",
    "get_dialect",
    "os_families",
]
