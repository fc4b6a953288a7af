"""Track B's strict CLI: the whitelist its reference server applies and the errors it generates.

The reference server does not read commands as devices do: it takes a line only when it matches
one of about 35 patterns per vendor (case-insensitive, whole words, no abbreviations) and answers
anything else with an error it generates from the line's words (docs/trackb.md). ``ctb-replay
serve --trackb-strict`` puts this in front of ctbench's dialects so an agent meets exactly Track B's
CLI. The patterns are data (``whitelist.yaml``); this module compiles them and reproduces the
documented error texts, caret column included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from ctbench.replay.trackb.layout import prompt
from ctbench.yamlio import load_fast

_PARAM_AFTER = {"interface", "int", "eth-trunk", "vlan"}
"""Keywords whose next word the server takes as an interface-like value (it must hold a digit)."""
_NAME_AFTER = {"vpn-instance", "vrf", "policy", "source"}
"""Keywords whose next word the server takes as a name, whatever it is."""


def _compile(template: str) -> re.Pattern[str]:
    words = template.split()
    rest = words[-1] == "..."
    if rest:
        words = words[:-1]
    parts: list[str] = []
    for w in words:
        if w == "<arg>":
            parts.append(r" \S+")
        elif w == "[<arg>]":
            parts.append(r"(?: \S+)?")
        else:
            parts.append(" " + re.escape(w))
    body = "".join(parts)[1:]
    return re.compile("^" + body + (".*" if rest else "") + "$", re.IGNORECASE)


@dataclass(frozen=True)
class Whitelist:
    """One vendor's accepted commands, and the keywords its error generator knows."""

    vendor: str
    templates: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    keywords: frozenset[str]

    def accepts(self, command: str) -> bool:
        return any(p.match(command) for p in self.patterns)


@cache
def _data() -> dict[str, object]:
    text = resources.files("ctbench.replay.trackb").joinpath("whitelist.yaml").read_text(encoding="utf-8")
    data = load_fast(Path(__file__).with_name("whitelist.yaml"), text)
    assert isinstance(data, dict)
    return data


@cache
def whitelist(vendor: str) -> Whitelist:
    """The whitelist of ``vendor`` (huawei, h3c or cisco)."""
    entry = _data()[vendor]
    assert isinstance(entry, dict)
    templates = tuple(str(t) for t in entry["commands"])
    words = {
        w.lower() for t in templates for w in t.split() if w not in ("<arg>", "[<arg>]", "...") and w != "|"
    }
    return Whitelist(vendor, templates, tuple(_compile(t) for t in templates), frozenset(words))


def wrong_parameter_rules() -> dict[str, int]:
    """Command prefix -> index of the parameter word, for the four 'Wrong parameter' commands."""
    rules = _data()["wrong_parameter"]
    assert isinstance(rules, dict)
    return {str(k): int(v) for k, v in rules.items()}


def samples() -> dict[str, dict[str, str]]:
    """A value for ``<arg>`` after each keyword, per vendor (to check the grammars cover the list)."""
    data = _data()["samples"]
    assert isinstance(data, dict)
    return {str(k): {str(v): str(x) for v, x in d.items()} for k, d in data.items()}


def sample_commands(vendor: str) -> list[str]:
    """One concrete command per whitelist template of ``vendor``."""
    values = samples()
    out: list[str] = []
    for t in whitelist(vendor).templates:
        words: list[str] = []
        for w in t.split():
            if w == "...":
                break
            if w == "[<arg>]":
                continue  # the shortest form: an optional word is left out
            if w == "<arg>":
                prev = words[-1].lower() if words else ""
                value = (
                    values.get(prev, {}).get(vendor) or values.get(words[0].lower(), {}).get(vendor) or "1"
                )
                words.append(value)
            else:
                words.append(w)
        out.append(" ".join(words))
    return out


def _messages(vendor: str) -> dict[str, str]:
    if vendor == "cisco":
        invalid = "% Invalid input detected at '^' marker."
        return {
            "ambiguous": "",
            "unrecognized": invalid,
            "wrong_parameter": invalid,
            "too_many_parameters": invalid,
            "incomplete": "% Incomplete command.",
        }
    lead, tail = (
        ("Error: ", "found at '^' position.") if vendor == "huawei" else ("% ", "found at '^' position.")
    )
    return {
        "ambiguous": f"{lead}Ambiguous command {tail}",
        "unrecognized": f"{lead}Unrecognized command {tail}",
        "wrong_parameter": f"{lead}Wrong parameter {tail}",
        "too_many_parameters": f"{lead}Too many parameters {tail}",
        "incomplete": f"{lead}Incomplete command {tail}",
    }


def _classify(wl: Whitelist, words: list[str]) -> tuple[str, str]:
    """(error kind, offending word) of a line the whitelist refuses, as the server judges it."""
    for i in range(len(words) - 1, 0, -1):
        if wl.accepts(" ".join(words[:i])):
            return "too_many_parameters", words[i]
    previous: str | None = None
    for word in words:
        low = word.lower()
        if low in wl.keywords:
            previous = low
            continue
        matches = [k for k in wl.keywords if k.startswith(low)]
        if len(matches) == 1:
            previous = matches[0]
            continue
        if len(matches) > 1:
            return "ambiguous", word
        if previous in _PARAM_AFTER:
            if not re.search(r"[0-9]", word):
                return "wrong_parameter", word
            previous = None
            continue
        if previous in _NAME_AFTER or re.search(r"[0-9./:-]", word):
            previous = None
            continue
        return "unrecognized", word
    return "incomplete", words[-1]


def _caret(prompt_text: str, command: str, word: str) -> str:
    m = re.search(r"\b" + re.escape(word) + r"\b", command)
    index = m.start() if m else command.find(word)
    if index == -1:
        index = len(command) - len(word)
    return " " * (len(prompt_text) + 1 + index) + "^"


def refusal(vendor: str, device: str, command: str) -> str:
    """The error text the server returns (422) for a line outside the whitelist."""
    echo = prompt(vendor, device)
    words = command.split()
    if not words:
        return echo + "\n"
    kind, word = _classify(whitelist(vendor), words)
    line = f"{echo} {command}"
    if vendor == "cisco" and kind == "ambiguous":
        return f'{line}\n% Ambiguous command:  "{command}"'
    message = _messages(vendor)[kind]
    if vendor == "cisco" and kind == "incomplete":
        return f"{line}\n{message}"
    return f"{line}\n{_caret(echo, command, word)}\n{message}"


def wrong_parameter(vendor: str, device: str, command: str) -> tuple[str, str] | None:
    """(text, parameter) of the 422 'Wrong parameter' answer to a missing file of the four
    parameterised commands, or None for any other command."""
    words = command.split()
    low = command.lower()
    for prefix, index in wrong_parameter_rules().items():
        if low.startswith(prefix) and len(words) > index:
            echo = prompt(vendor, device)
            message = _messages(vendor)["wrong_parameter"]
            return f"{echo} {command}\n{_caret(echo, command, words[index])}\n{message}", words[index]
    return None
