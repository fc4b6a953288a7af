"""Parameter types of the command trees (``<ipv4>``, ``<interface>``, ``<word>`` ...).

A parameter matcher looks at the token list from a position and returns every way it can read a
value there, as ``(tokens consumed, canonical text)``. Some values take two tokens on some vendors
(``10.0.0.0 24``, ``GigabitEthernet 0/0/1``), which is why a matcher may consume more than one and
why it may offer several readings: the parser keeps all of them and lets the rest of the line decide.

The canonical text is what goes into the recording key, so each type normalises what the devices
treat as the same value (``010.1.1.1`` and ``10.1.1.1``; ``GE1/0/1`` and ``GigabitEthernet1/0/1``;
a prefix written with a mask, a length or a slash) to one spelling chosen per vendor.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from ._interfaces import InterfaceNaming

PrefixStyle = Literal["slash", "length", "mask"]

RANK_KEYWORD = 0
"""Reading a token as a keyword beats reading it as a value."""
RANK_VALUE = 1
RANK_NAME = 2
RANK_WORD = 3
"""A free word matches anything, so it is the last resort."""

Match = tuple[int, str]


@dataclass(frozen=True, slots=True)
class ParamContext:
    """What a matcher needs to know about the vendor: its interface names and prefix spelling."""

    interfaces: InterfaceNaming
    prefix_style: PrefixStyle
    prefix6_style: PrefixStyle


_IPV4_RE = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")
_IPV6_CHARS = re.compile(r"[0-9A-Fa-f:.]{2,45}")
_NUMBER_RE = re.compile(r"\d{1,10}")
_WORD_RE = re.compile(r"[\x21-\x7b\x7d\x7e]{1,255}")  # printable ASCII except '|'
_HOST_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,253}")
_MAC_RE = re.compile(
    r"[0-9A-Fa-f]{4}([-.])[0-9A-Fa-f]{4}\1[0-9A-Fa-f]{4}|[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\2){4}[0-9A-Fa-f]{2}"
)


def ipv4(token: str) -> str | None:
    """Dotted quad in normal form (no leading zeros), or None."""
    if not _IPV4_RE.fullmatch(token):
        return None
    octets = [int(part) for part in token.split(".")]
    if any(o > 255 for o in octets):
        return None
    return ".".join(str(o) for o in octets)


def ipv6(token: str) -> str | None:
    """IPv6 address in compressed lower-case form, or None."""
    if ":" not in token or not _IPV6_CHARS.fullmatch(token):
        return None
    try:
        return ipaddress.IPv6Address(token).compressed
    except ValueError:
        return None


def mask_length(token: str) -> int | None:
    """Prefix length from ``24`` or ``255.255.255.0``; None if neither (or a non-contiguous mask)."""
    if token.isdigit() and len(token) <= 2:
        value = int(token)
        return value if value <= 32 else None
    dotted = ipv4(token)
    if dotted is None:
        return None
    bits = int(ipaddress.IPv4Address(dotted))
    length = bin(bits).count("1")
    if bits != ((0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF):
        return None
    return length


def _dotted(length: int) -> str:
    return str(ipaddress.IPv4Address((0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF))


def _fmt4(address: str, length: int, style: PrefixStyle) -> str:
    if style == "slash":
        return f"{address}/{length}"
    if style == "mask":
        return f"{address} {_dotted(length)}"
    return f"{address} {length}"


def _fmt6(address: str, length: int, style: PrefixStyle) -> str:
    return f"{address} {length}" if style == "length" else f"{address}/{length}"


def _m_word(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    tok = toks[i]
    return [(1, tok)] if _WORD_RE.fullmatch(tok) else []


def _m_number(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    tok = toks[i]
    return [(1, str(int(tok)))] if _NUMBER_RE.fullmatch(tok) else []


def _m_ipv4(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    value = ipv4(toks[i])
    return [(1, value)] if value else []


def _m_ipv6(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    value = ipv6(toks[i])
    return [(1, value)] if value else []


def _m_ip(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    return _m_ipv4(toks, i, ctx) or _m_ipv6(toks, i, ctx)


def _m_mask(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    length = mask_length(toks[i])
    if length is None:
        return []
    return [(1, _dotted(length) if ctx.prefix_style == "mask" else str(length))]


def _m_ipv4_net(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    """An IPv4 address with an optional mask: ``a.b.c.d``, ``a.b.c.d/len``, ``a.b.c.d len|mask``."""
    tok = toks[i]
    if "/" in tok:
        address, _, length = tok.partition("/")
        norm = ipv4(address)
        if norm is None or not length.isdigit() or len(length) > 2 or int(length) > 32:
            return []
        return [(1, _fmt4(norm, int(length), ctx.prefix_style))]
    norm = ipv4(tok)
    if norm is None:
        return []
    found: list[Match] = [(1, norm)]
    if i + 1 < len(toks):
        bits = mask_length(toks[i + 1])
        if bits is not None:
            found.append((2, _fmt4(norm, bits, ctx.prefix_style)))
    return found


def _m_ipv6_net(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    """An IPv6 address with an optional length: ``x::``, ``x::/64``, ``x:: 64``."""
    tok = toks[i]
    if "/" in tok:
        address, _, length = tok.partition("/")
        norm = ipv6(address)
        if norm is None or not length.isdigit() or len(length) > 3 or int(length) > 128:
            return []
        return [(1, _fmt6(norm, int(length), ctx.prefix6_style))]
    norm = ipv6(tok)
    if norm is None:
        return []
    found: list[Match] = [(1, norm)]
    if i + 1 < len(toks):
        nxt = toks[i + 1]
        if nxt.isdigit() and len(nxt) <= 3 and int(nxt) <= 128:
            found.append((2, _fmt6(norm, int(nxt), ctx.prefix6_style)))
    return found


def _m_ipv4_prefix(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    """``a.b.c.d/len`` only, one token (FRR's ``A.B.C.D/M``, which does not take a bare address)."""
    return _m_ipv4_net(toks, i, ctx)[:1] if "/" in toks[i] else []


def _m_ipv6_prefix(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    """``x::/len`` only, one token (FRR's ``X:X::X:X/M``)."""
    return _m_ipv6_net(toks, i, ctx)[:1] if "/" in toks[i] else []


def _m_ip_net(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    return _m_ipv4_net(toks, i, ctx) or _m_ipv6_net(toks, i, ctx)


def _m_interface(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    """An interface name in any form the vendor takes, given in the vendor's full spelling."""
    naming = ctx.interfaces
    tok = toks[i]
    hit = naming.parse(tok)
    if hit is not None:
        return [(1, hit)]
    if i + 1 < len(toks):
        hit = naming.parse_pair(tok, toks[i + 1])
        if hit is not None:
            return [(2, hit)]
    return []


def _m_hostname(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    tok = toks[i]
    if ipv4(tok) or ipv6(tok):
        return []  # taken by the address types, with their normalisation
    return [(1, tok)] if _HOST_RE.fullmatch(tok) else []


def _m_mac(toks: Sequence[str], i: int, ctx: ParamContext) -> list[Match]:
    tok = toks[i]
    return [(1, tok.lower())] if _MAC_RE.fullmatch(tok) else []


Matcher = Callable[[Sequence[str], int, ParamContext], list[Match]]


@dataclass(frozen=True, slots=True)
class ParamType:
    """A named parameter type: how to read it and how much a reading of it is worth."""

    name: str
    match: Matcher
    rank: int
    value_like: bool
    """A token that fails a value-like type is a *wrong parameter*, not an unknown keyword."""


def _all_types() -> Mapping[str, ParamType]:
    types = [
        ParamType("word", _m_word, RANK_WORD, False),
        ParamType("number", _m_number, RANK_VALUE, True),
        ParamType("ipv4", _m_ipv4, RANK_VALUE, True),
        ParamType("ipv6", _m_ipv6, RANK_VALUE, True),
        ParamType("ip", _m_ip, RANK_VALUE, True),
        ParamType("mask", _m_mask, RANK_VALUE, True),
        ParamType("ipv4-net", _m_ipv4_net, RANK_VALUE, True),
        ParamType("ipv6-net", _m_ipv6_net, RANK_VALUE, True),
        ParamType("ip-net", _m_ip_net, RANK_VALUE, True),
        ParamType("ipv4-prefix", _m_ipv4_prefix, RANK_VALUE, True),
        ParamType("ipv6-prefix", _m_ipv6_prefix, RANK_VALUE, True),
        ParamType("interface", _m_interface, RANK_VALUE, True),
        ParamType("hostname", _m_hostname, RANK_NAME, False),
        ParamType("mac", _m_mac, RANK_VALUE, True),
    ]
    return MappingProxyType({t.name: t for t in types})


PARAM_TYPES: Mapping[str, ParamType] = _all_types()
"""Every type a tree file may use as ``<name>``; ``host`` is sugar for ``{<ip> | <hostname>}``."""
