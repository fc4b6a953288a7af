"""FRR's command syntax (what ``vtysh -c list`` prints) written as ctbench command templates.

FRR describes every command in its own notation: ``<a|b>`` one of, ``[a|b]`` optional, ``{a|b}`` one or
more in any order, ``WORD``/``NAME``/``IFNAME`` any word, ``(1-65535)`` a number, ``A.B.C.D`` an IPv4
address, ``A.B.C.D/M`` a prefix, ``LINE...`` the rest of the line. The FRR dialect's grammar is that
list, translated once by ``python -m ctbench.authoring.lab.gen_frr`` and committed as data, so the
replay accepts exactly what the live vtysh accepts (the translation keeps FRR's placeholders as
template labels, which the dialect's ``?`` prints as vtysh does).
"""

from __future__ import annotations

import re

_PLACEHOLDERS: dict[str, str] = {
    "A.B.C.D": "ipv4",
    "A.B.C.D/M": "ipv4-prefix",
    "X:X::X:X": "ipv6",
    "X:X::X:X/M": "ipv6-prefix",
}
_RANGE = re.compile(r"\(\d+-\d+\)")
_VARIABLE = re.compile(r"[A-Z][A-Z0-9_:.\-/]*")
_TOKEN = re.compile(r"[<>\[\]{}|]|[^\s<>\[\]{}|]+")


class FrrSyntaxError(ValueError):
    """A pattern this translator cannot read (unbalanced brackets, an empty group)."""


def placeholder(word: str) -> str | None:
    """The ctbench template for one FRR placeholder word (``<number:(1-65535)>``), or None for a keyword."""
    base = word[:-3] if word.endswith("...") else word
    kind = _PLACEHOLDERS.get(base)
    if kind is None and _RANGE.fullmatch(base):
        kind = "number"
    if kind is None and _VARIABLE.fullmatch(base):
        kind = "word"  # WORD, NAME, IFNAME, X:X:X:X:X:X, ASN:NN_OR_IP-ADDRESS:NN ...: any word
    if kind is None:
        return None
    return f"<{kind}:{base}>"


def _element(word: str) -> str:
    repeat = word.endswith("...") and len(word) > 3
    base = word[:-3] if repeat else word
    param = placeholder(base)
    text = param if param is not None else (base if re.fullmatch(r"[^\s'\[\]{}|<>]+", base) else f"'{base}'")
    return f"{text}..." if repeat else text


def to_template(pattern: str) -> str:
    """One FRR command pattern as a ctbench template: ``show ip ospf [vrf <NAME|all>] neighbor`` ->
    ``show ip ospf [ vrf { <word:NAME> | all } ] neighbor``. ``{a|b}`` becomes ``{ a | b }...``."""
    tokens = _TOKEN.findall(pattern)
    out: list[str] = []
    stack: list[str] = []
    closing = {"<": "}", "[": "]", "{": "}"}
    for tok in tokens:
        if tok in closing:
            stack.append(tok)
            out.append("[" if tok == "[" else "{")
        elif tok in (">", "]", "}"):
            if not stack or {"<": ">", "[": "]", "{": "}"}[stack[-1]] != tok:
                raise FrrSyntaxError(f"unbalanced {tok!r} in {pattern!r}")
            opened = stack.pop()
            out.append(closing[opened] + ("..." if opened == "{" else ""))
        elif tok == "|":
            if not stack:
                raise FrrSyntaxError(f"'|' outside a group in {pattern!r}")
            out.append("|")
        else:
            out.append(_element(tok))
    if stack:
        raise FrrSyntaxError(f"unclosed {stack[-1]!r} in {pattern!r}")
    return " ".join(out)


def relaxed(template: str) -> str:
    """A fallback for a template the graph refuses as a repetition (``{a|b [c]}...``): no repetition."""
    return template.replace("}...", "}")
