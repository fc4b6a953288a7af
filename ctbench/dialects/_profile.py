"""Loading a vendor's tree file (``data/<os>.yaml``) and a task set's extra tree files.

Everything vendor-specific lives in the data file, not in code: prompts, error texts and where the
caret goes, first-word aliases, interface names, prefix spelling, filter keywords, and the command
templates. A task set extends a vendor with files holding only ``commands`` (and optionally
``pipe_commands``), so that a command a task needs can be made valid without touching the package.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ._filters import FilterOptions, FilterSpec
from ._help import HelpStyle, load_help_style
from ._interfaces import InterfaceNaming
from ._params import PrefixStyle

DATA_DIR = Path(__file__).resolve().parent / "data"

DIALECT_PATH_ENV = "CTBENCH_DIALECT_PATH"
"""Folders (``os.pathsep``-separated) with more dialect data files, read after the bundled ones."""

_FAMILY_NAME = re.compile(r"[a-z][a-z0-9_]*")


def dialect_dirs() -> tuple[Path, ...]:
    """The folders dialect data files are read from: the bundled one, then those of ``$CTBENCH_DIALECT_PATH``."""
    extra = os.environ.get(DIALECT_PATH_ENV, "")
    return (DATA_DIR, *(Path(p) for p in extra.split(os.pathsep) if p))


@lru_cache(maxsize=16)
def _families_in(dirs: tuple[Path, ...]) -> Mapping[str, Path]:
    found: dict[str, Path] = {}
    for folder in dirs:
        for path in sorted(folder.glob("*.yaml")):
            # <os>.yaml only; a bundled family wins over a file of the same name further down the path
            if _FAMILY_NAME.fullmatch(path.stem) and path.stem not in found:
                found[path.stem] = path
    return MappingProxyType(dict(sorted(found.items())))


def family_files() -> Mapping[str, Path]:
    """Each CLI family (``os`` of a device) with its data file, by name: the one list of families.

    A family is a data file ``<os>.yaml`` in :func:`dialect_dirs`, so a new vendor dialect is one file.
    The listing is cached per search path; a file added to a folder already listed is seen by the next
    process.
    """
    return _families_in(dialect_dirs())


def known_os() -> tuple[str, ...]:
    """The CLI families, sorted by name (see :func:`family_files`)."""
    return tuple(family_files())


BUNDLED_OS: tuple[str, ...] = tuple(_families_in((DATA_DIR,)))
"""The families ctbench ships a data file for (``dialect.OS_FAMILIES`` re-exports this tuple)."""

_PROFILE_KEYS = {
    "os",
    "based_on",
    "display_name",
    "prompt",
    "max_line",
    "aliases",
    "messages",
    "denied",
    "prefix_style",
    "prefix6_style",
    "interfaces",
    "filters",
    "filter_options",
    "pipe_commands",
    "commands",
    "notes",
    "help",
    "capture_prompt",
    "first_commands",
    "matching",
    "case_sensitive",
    "pipe",
    "minor_keywords",
}
_EXTRA_KEYS = {"os", "commands", "pipe_commands", "notes"}
_FILTER_KINDS = {"include", "exclude", "begin", "count", "section", "last", "trim", "passthrough"}
_FILTER_ARGS = {"regex", "optional-regex", "number", "optional-number", "none"}
_STYLES = {"slash", "length", "mask"}
_CAPTURE_PROMPTS = {"vrp", "cisco", "junos"}
_MATCHING = {"token", "line"}
_PIPES = {"chain", "first"}


@dataclass(frozen=True, slots=True)
class Message:
    """One error text and whether the device prints a caret line above it."""

    text: str
    caret: bool = True


@dataclass(slots=True)
class Profile:
    """A vendor's CLI as described by its data file plus any extra tree files."""

    os: str
    display_name: str
    prompt: str
    max_line: int
    aliases: dict[str, str]
    messages: dict[str, Message]
    denied: str
    prefix_style: PrefixStyle
    prefix6_style: PrefixStyle
    interfaces: InterfaceNaming
    filters: dict[str, FilterSpec]
    filter_options: FilterOptions
    help: HelpStyle = field(default_factory=HelpStyle)
    pipe_commands: list[tuple[str, str]] = field(default_factory=list)
    commands: list[tuple[str, str]] = field(default_factory=list)
    """Templates with where they came from (``file:index``), for error messages."""
    capture_prompt: str | None = None
    """How the device's prompt looks in a session log (``vrp`` ``<host>``, ``cisco`` ``host#``, ``junos``
    ``user@host>``), for the capture importer; None: its logs cannot be imported."""
    first_commands: tuple[str, ...] = ()
    """What an engineer types first on an unfamiliar box of this vendor (the probe agent's checklist)."""
    matching: str = "token"
    """``token``: each word must be a unique prefix where it stands (IOS, VRP, Junos); ``line``: the
    whole line is matched and only a tie between complete commands is ambiguous (FRR's vtysh)."""
    case_sensitive: bool = False
    """Keywords match only as written in the tree (FRR); the others take any case."""
    minor_keywords: frozenset[str] = frozenset()
    """Keywords that give way to another keyword a typed prefix also begins (``Graph.freeze``)."""
    pipe: str = "chain"
    """``chain``: ``| filter`` stages parsed with the command (most vendors); ``first``: the line is cut
    at its first ``| ``, the word after it must be a filter's exact name and the rest of the line is
    one regular expression (FRR 8.4's vtysh)."""


def _read(path: Path) -> Mapping[str, Any]:
    try:
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError) as exc:
        raise ValueError(f"cannot read tree file {path}: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ValueError(f"tree file {path} must be a mapping")
    return data


def _str_list(data: Mapping[str, Any], key: str, path: Path) -> list[tuple[str, str]]:
    items = data.get(key) or []
    if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
        raise ValueError(f"{path}: '{key}' must be a list of strings")
    return [(item, f"{path.name}:{key}[{i}]") for i, item in enumerate(items)]


def _message(value: Any, where: str) -> Message:
    if isinstance(value, str):
        return Message(value)
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return Message(value["text"], bool(value.get("caret", True)))
    raise ValueError(f"{where}: a message is a string or {{text: ..., caret: true|false}}")


def _style(value: Any, where: str) -> PrefixStyle:
    if value not in _STYLES:
        raise ValueError(f"{where}: style must be one of {sorted(_STYLES)}")
    return cast(PrefixStyle, value)


def _capture_prompt(value: Any, where: str) -> str | None:
    if value is not None and value not in _CAPTURE_PROMPTS:
        raise ValueError(f"{where}: one of {sorted(_CAPTURE_PROMPTS)}")
    return cast(str | None, value)


def _choice(value: Any, allowed: set[str], where: str) -> str:
    if value not in allowed:
        raise ValueError(f"{where}: one of {sorted(allowed)}, not {value!r}")
    return str(value)


def extra_tree_targets(path: Path, data: Mapping[str, Any]) -> tuple[str, ...]:
    """The OS families an extra tree file extends: its ``os`` key (a name or a list of names), or
    else the first part of its file name (``huawei_vrp.yaml``, ``huawei_vrp.firewall.yaml``)."""
    value = data.get("os", path.name.split(".", 1)[0])
    names = (value,) if isinstance(value, str) else tuple(value) if isinstance(value, list) else ()
    known = known_os()
    if not names or not all(isinstance(n, str) and n in known for n in names):
        raise ValueError(
            f"{path}: cannot tell which OS this tree file extends; set 'os' to one or more of "
            f"{', '.join(known)} or name the file <os>.yaml"
        )
    return names


def _family_data(os_name: str, seen: tuple[str, ...] = ()) -> tuple[Path, Mapping[str, Any]]:
    """The data file of ``os_name`` with the file it is ``based_on`` under it, key by key.

    A release line of a vendor (VRP8 beside VRP5) shares the command tree and help texts of its
    base and says only what differs, usually the error texts. A top-level key of the file replaces
    the base's key whole, so what a file says is never half-merged with what it did not say; only
    ``commands`` and ``pipe_commands`` add to the base's, as a task set's extra tree files do, and
    ``help`` is merged table by table, so the help of a command the release line adds lives in its
    own file beside the command.
    """
    path = family_files().get(os_name, DATA_DIR / f"{os_name}.yaml")
    data = _read(path)
    unknown = set(data) - _PROFILE_KEYS
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
    if data.get("os") != os_name:
        raise ValueError(f"{path}: 'os' must be {os_name!r}")
    base = data.get("based_on")
    if base is None:
        return path, data
    if not isinstance(base, str) or base not in family_files():
        raise ValueError(f"{path}: based_on must name another CLI family ({', '.join(known_os())})")
    if base in (*seen, os_name):
        raise ValueError(f"{path}: based_on {base!r} leads back to {os_name!r}")
    _, under = _family_data(base, (*seen, os_name))
    merged = {**under, **{k: v for k, v in data.items() if k != "based_on"}}
    for key in ("commands", "pipe_commands"):  # added to the base's, as an extra tree file's are
        merged[key] = [*(under.get(key) or []), *(data.get(key) or [])]
    if "help" in data and "help" in under:
        merged["help"] = _merge_tables(under["help"], data["help"])
    return path, merged


def _merge_tables(under: Any, over: Any) -> Any:
    """``over`` laid on ``under``: tables merge key by key, anything else in ``over`` wins."""
    if not isinstance(under, Mapping) or not isinstance(over, Mapping):
        return over
    return {**under, **{k: _merge_tables(under.get(k), v) if k in under else v for k, v in over.items()}}


def load_profile(os_name: str, extra_trees: tuple[Path, ...] = ()) -> Profile:
    """Read the data file of ``os_name`` (:func:`family_files`) and merge the extra tree files into it."""
    path, data = _family_data(os_name)
    messages = {str(k): _message(v, f"{path}: messages.{k}") for k, v in (data.get("messages") or {}).items()}
    for required in ("unrecognised", "incomplete", "ambiguous"):
        if required not in messages:
            raise ValueError(f"{path}: messages.{required} is required")
    iface = data.get("interfaces") or {}
    naming = InterfaceNaming(
        {str(k): [str(a) for a in (v or [])] for k, v in (iface.get("types") or {}).items()},
        **({"number": str(iface["number"])} if "number" in iface else {}),
        exact=iface.get("exact"),
    )
    filters: dict[str, FilterSpec] = {}
    for name, spec in (data.get("filters") or {}).items():
        kind = spec.get("kind", name)
        arg = spec.get("arg", "regex")
        if kind not in _FILTER_KINDS or arg not in _FILTER_ARGS:
            raise ValueError(
                f"{path}: filters.{name}: kind in {sorted(_FILTER_KINDS)}, arg in {sorted(_FILTER_ARGS)}"
            )
        filters[str(name).lower()] = FilterSpec(str(name).lower(), kind, arg, spec.get("default"))
    fopts = data.get("filter_options") or {}
    profile = Profile(
        os=os_name,
        display_name=str(data.get("display_name", os_name)),
        prompt=str(data.get("prompt", "{host}>")),
        max_line=int(data.get("max_line", 1024)),
        aliases={str(k).lower(): str(v).lower() for k, v in (data.get("aliases") or {}).items()},
        messages=messages,
        denied=str(data.get("denied", "")),
        prefix_style=_style(data.get("prefix_style", "slash"), f"{path}: prefix_style"),
        prefix6_style=_style(data.get("prefix6_style", "slash"), f"{path}: prefix6_style"),
        interfaces=naming,
        filters=filters,
        filter_options=FilterOptions(
            count_format=str(fopts.get("count_format", "{n}")),
            ignore_case=bool(fopts.get("ignore_case", False)),
            underscore=bool(fopts.get("underscore", False)),
            strip_quotes=bool(fopts.get("strip_quotes", False)),
        ),
        help=load_help_style(data.get("help"), f"{path}"),
        pipe_commands=_str_list(data, "pipe_commands", path),
        commands=_str_list(data, "commands", path),
        capture_prompt=_capture_prompt(data.get("capture_prompt"), f"{path}: capture_prompt"),
        first_commands=tuple(c for c, _ in _str_list(data, "first_commands", path)),
        matching=_choice(data.get("matching", "token"), _MATCHING, f"{path}: matching"),
        case_sensitive=bool(data.get("case_sensitive", False)),
        pipe=_choice(data.get("pipe", "chain"), _PIPES, f"{path}: pipe"),
        minor_keywords=frozenset(c.lower() for c, _ in _str_list(data, "minor_keywords", path)),
    )
    for extra in extra_trees:
        more = _read(Path(extra))
        unknown = set(more) - _EXTRA_KEYS
        if unknown:
            raise ValueError(
                f"{extra}: an extra tree file may hold only {sorted(_EXTRA_KEYS)}; got {sorted(unknown)}"
            )
        if os_name not in extra_tree_targets(Path(extra), more):
            continue  # a task set passes all its tree files to every vendor; this one is another's
        profile.commands.extend(_str_list(more, "commands", Path(extra)))
        profile.pipe_commands.extend(_str_list(more, "pipe_commands", Path(extra)))
    return profile
