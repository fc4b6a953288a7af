"""Interface names as each vendor accepts them and as the recording key spells them.

Devices take many spellings of one port (``GE1/0/1``, ``Gig1/0/1``, ``GigabitEthernet 1/0/1``) but
the recording and the golden actions must name it once, so every accepted form is mapped to the
vendor's full name. Junos is the exception: its names (``ge-0/0/0.0``) are exact, so it is described by
a pattern instead of a table of types.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache


class InterfaceNaming:
    """Parses interface names for one vendor.

    ``types`` maps each full type name (``GigabitEthernet``) to its explicit short forms (``GE``);
    besides those, any unique prefix of a full type name is accepted, as the devices do. ``number``
    is the regex of the numbering part (``1/0/1``, ``0/0.100``, ``0/0/0:1``). ``exact`` (Junos) is a
    regex of whole names, used instead of the table.
    """

    def __init__(
        self,
        types: Mapping[str, Sequence[str]],
        number: str = r"\d+(?:/\d+)*(?:\.\d+)?(?::\d+)?",
        exact: str | None = None,
    ) -> None:
        self._full: dict[str, str] = {name.lower(): name for name in types}
        self._alias: dict[str, str] = {}
        for name, aliases in types.items():
            for alias in aliases:
                self._alias[alias.lower()] = name
        self._sorted = sorted(self._full)
        self._number = re.compile(number)
        self._exact = re.compile(exact) if exact else None
        # Parsing is pure and the same few names come back all the time: memoise per instance.
        self.parse: Callable[[str], str | None] = lru_cache(maxsize=8192)(self._parse)

    @property
    def type_names(self) -> tuple[str, ...]:
        """The full type names (``GigabitEthernet``), as context help lists them; none for Junos."""
        return () if self._exact is not None else tuple(self._full.values())

    def resolve_type(self, word: str) -> str | None:
        """Full type name for a typed type word: exact name, explicit alias, or unique prefix."""
        low = word.lower()
        if not low:
            return None
        full = self._full.get(low) or self._alias.get(low)
        if full is not None:
            return full
        pos = bisect_left(self._sorted, low)
        hits: list[str] = []
        while pos < len(self._sorted) and self._sorted[pos].startswith(low):
            hits.append(self._sorted[pos])
            pos += 1
            if len(hits) > 1:
                return None
        return self._full[hits[0]] if hits else None

    def _parse(self, token: str) -> str | None:
        """Canonical name for a one-token interface name, or None if it is not one."""
        if self._exact is not None:
            return token if self._exact.fullmatch(token) else None
        if len(token) > 64:
            return None
        for pos, ch in enumerate(token):
            if not ch.isdigit() or pos == 0:
                continue
            prev = token[pos - 1]
            if not (prev.isalpha() or prev == "-"):
                continue
            number = token[pos:]
            if not self._number.fullmatch(number):
                continue
            full = self.resolve_type(token[:pos])
            if full is not None:
                return full + number
        return None

    def parse_pair(self, type_word: str, number: str) -> str | None:
        """Canonical name for the two-token form ``GigabitEthernet 1/0/1``, or None."""
        if self._exact is not None or not type_word.isascii() or not type_word[:1].isalpha():
            return None
        if not self._number.fullmatch(number):
            return None
        full = self.resolve_type(type_word)
        return full + number if full is not None else None

    def normalize(self, name: str) -> str:
        """Full form of ``name`` (one token or type and number separated by spaces); else unchanged."""
        text = name.strip()
        hit = self.parse(text)
        if hit is not None:
            return hit
        parts = text.split()
        if len(parts) == 2:
            hit = self.parse_pair(parts[0], parts[1])
            if hit is not None:
                return hit
        return name
