"""Resolving one command line against a compiled tree, the way the device's CLI parser does.

The line is split into tokens (blanks separate them; ``|`` is always a token of its own before the
first filter). Tokens are consumed left to right from a set of *configurations*: a node of the graph,
the canonical words produced so far and their rank. At each token:

- a keyword that equals the token wins; otherwise a keyword the token is a unique prefix of wins;
  two or more such keywords make the token ambiguous (the device's rule);
- every parameter type at the node that can read the token (or the token and the next one) is
  followed as well, ranked below keywords, so a value is only taken where no keyword fits better;
- at ``|``, a configuration that may end there continues into the *pipe* node, whose keywords are
  the vendor's filters (which end the command) and its output-changing pipes (Junos
  ``| display xml``, which are part of the command).

A vendor that matches the whole line instead (FRR's vtysh, ``line_match``) follows every keyword a
token is a prefix of, ranks a prefix below an exact word, and calls the line ambiguous only when two
complete commands rank the same at the end (``sh i b``: ``show interface brief`` and ``show ip bgp``).

Configurations reaching the same node are merged, keeping the better rank, so the work per token
stays small. When nothing survives, the furthest token reached is where the device would put its
caret, and what the surviving configurations expected there decides which error it prints.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ._grammar import KwEdge, Node
from ._params import RANK_KEYWORD, RANK_NAME, RANK_WORD, ParamContext
from ._types import CliError

TOKEN_RE = re.compile(r"\||[^ \t|]+")

RANK_PARTIAL = RANK_NAME
"""Line matching: a keyword read from a prefix ranks below an exact keyword and a typed value, above a
free word (FRR's order: address or range, keyword exact, keyword partial, variable)."""

Cfg = tuple[Node, tuple[str, ...], tuple[int, ...], bool]
"""(node, canonical words so far, rank per word, reached through recorded commands)."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """A successful parse: canonical words, and where the filter chain starts (if any)."""

    words: tuple[str, ...]
    recorded: bool
    filter_start: int | None


def tokenize(line: str) -> list[tuple[str, int]]:
    """Tokens with their offsets; blanks are spaces and tabs only (anything else is token text)."""
    return [(m.group(), m.start()) for m in TOKEN_RE.finditer(line)]


def _put(
    bucket: dict[int, Cfg], node: Node, words: tuple[str, ...], rank: tuple[int, ...], recorded: bool
) -> None:
    old = bucket.get(id(node))
    if old is None or rank < old[2]:
        bucket[id(node)] = (node, words, rank, recorded)


def _major(keys: dict[str, list[Node]]) -> list[str]:
    """Of several keywords a prefix begins, those that are not minor where they stand (all if none)."""
    major = [k for k, nodes in keys.items() if not all(k in n.minor for n in nodes)]
    return major if len(keys) > 1 and major else list(keys)


def _prefixed(node: Node, low: str) -> list[str]:
    keys = node.keys
    pos = bisect_left(keys, low)
    out: list[str] = []
    while pos < len(keys) and keys[pos].startswith(low):
        out.append(keys[pos])
        pos += 1
    return out


def looks_like_value(token: str) -> bool:
    """Addresses, interface names and numbers: a failed match there is a *wrong parameter*."""
    return any(ch.isdigit() or ch in "./:" for ch in token)


class Parser:
    """Parses lines against a tree root (plus a task's recorded-command root) and a pipe root."""

    def __init__(
        self,
        pipe_root: Node,
        ctx: ParamContext,
        aliases: Mapping[str, str],
        *,
        line_match: bool = False,
        case_sensitive: bool = False,
        pipes: bool = True,
    ) -> None:
        self.pipe_root = pipe_root
        self.ctx = ctx
        self.aliases = aliases
        self.line_match = line_match
        """Whole-line matching (FRR): every prefix reading is followed; ambiguity is decided at the end."""
        self.case_sensitive = case_sensitive
        """Keywords match only in their own case (FRR: ``SHOW`` is an unknown command)."""
        self.pipes = pipes
        """Whether ``|`` starts a filter chain here; False when the dialect splits the pipe off first."""

    def parse(self, line: str, roots: Sequence[tuple[Node, bool]]) -> Parsed | CliError:
        toks = tokenize(line)
        n = len(toks)
        if n == 0:
            return CliError("incomplete", len(line), "", index=0)
        buckets, hit = self.walk([t for t, _ in toks], roots)
        if hit is not None:
            i, (_node, words, _rank, recorded) = hit
            return Parsed(words, recorded, toks[i - 1][1])
        done = [cfg for cfg in buckets[n].values() if cfg[0].terminal]
        if done:
            _node, words, rank, recorded = min(done, key=lambda c: c[2])
            if self.line_match and len({c[1] for c in done if c[2] == rank}) > 1:
                return CliError("ambiguous", 0, toks[0][0], index=0, context=words)
            return Parsed(words, recorded, None)
        return self._diagnose(line, toks, buckets)

    def walk(
        self, texts: Sequence[str], roots: Sequence[tuple[Node, bool]], *, exact_first: bool = False
    ) -> tuple[list[dict[int, Cfg]], tuple[int, Cfg] | None]:
        """Consume ``texts`` from ``roots``: the configurations after each token, and the first filter.

        ``buckets[i]`` holds what may be reached after ``i`` tokens. When token ``i`` is an output
        filter keyword the walk stops there and returns ``(i, best configuration before it)``: the
        rest of the line is the filter chain, not the command. Context help walks the words typed
        before the ``?`` with this same method, so help and parsing cannot disagree. ``exact_first``
        (help under line matching) drops the prefix readings of a word that is some keyword exactly, as
        vtysh's ``show ip route ?`` lists nothing of ``show ipv6 route``.
        """
        n = len(texts)
        buckets: list[dict[int, Cfg]] = [{} for _ in range(n + 1)]
        for node, recorded in roots:
            _put(buckets[0], node, (), (), recorded)
        pipe_root = self.pipe_root
        ctx = self.ctx
        for i in range(n):
            bucket = buckets[i]
            if not bucket:
                continue
            tok = texts[i]
            nxt = buckets[i + 1]
            if tok == "|" and self.pipes:
                for node, words, rank, recorded in bucket.values():
                    edge = node.kw.get("|")
                    if edge is not None:
                        for target in edge.targets:
                            _put(nxt, target, (*words, edge.text), (*rank, RANK_KEYWORD), recorded)
                    if node.terminal:
                        _put(nxt, pipe_root, words, rank, recorded)
                continue
            low = tok if self.case_sensitive else tok.lower()
            if i == 0:
                low = self.aliases.get(low, low)
            filter_hits: list[Cfg] = []
            moves = self._keyword_moves(bucket, low)
            if exact_first and any(r == RANK_KEYWORD for _c, _e, r in moves):
                moves = [m for m in moves if m[2] == RANK_KEYWORD]
            for cfg, edge, kw_rank in moves:
                node, words, rank, recorded = cfg
                if edge.filter:
                    filter_hits.append(cfg)
                    continue
                new_words = (*words, "|", edge.text) if node is pipe_root else (*words, edge.text)
                new_rank = (*rank, kw_rank)
                for target in edge.targets:
                    old = nxt.get(id(target))
                    if old is None or new_rank < old[2]:
                        nxt[id(target)] = (target, new_words, new_rank, recorded)
            if filter_hits:
                return buckets, (i, min(filter_hits, key=lambda c: c[2]))
            # Values: recorded literals, then every parameter type that reads the token here; a free
            # word is not read where a keyword of the same point reads the token (``in`` after
            # ``display ip vpn-instance`` is ``instance-name``, not an instance called "in").
            keyed = set() if self.line_match else {id(cfg[0]) for cfg, _e, _r in moves}
            for node, words, rank, recorded in tuple(bucket.values()):
                if node.literals:
                    edge = node.literals.get(low) or node.literals.get(ctx.interfaces.normalize(tok).lower())
                    if edge is not None:
                        for target in edge.targets:
                            _put(nxt, target, (*words, edge.text), (*rank, RANK_KEYWORD), recorded)
                for pedge in node.params.values():
                    ptype = pedge.type
                    if ptype.rank == RANK_WORD and id(node) in keyed:
                        continue
                    for consumed, value in ptype.match(texts, i, ctx):
                        dst = buckets[i + consumed]
                        new_words = (*words, value)
                        new_rank = (*rank, ptype.rank)
                        for target in pedge.targets:
                            old = dst.get(id(target))
                            if old is None or new_rank < old[2]:
                                dst[id(target)] = (target, new_words, new_rank, recorded)
        return buckets, None

    def _keyword_moves(self, bucket: dict[int, Cfg], low: str) -> list[tuple[Cfg, KwEdge, int]]:
        """The keyword edges the token takes, each with the rank of that reading."""
        exact: list[tuple[Cfg, KwEdge, int]] = []
        for cfg in bucket.values():
            edge = cfg[0].kw.get(low)
            if edge is not None:
                exact.append((cfg, edge, RANK_KEYWORD))
        if exact and not self.line_match:
            return exact
        found: dict[str, list[tuple[Cfg, KwEdge, int]]] = {}
        for cfg in bucket.values():
            kw = cfg[0].kw
            for key in _prefixed(cfg[0], low):
                if key != low:
                    found.setdefault(key, []).append((cfg, kw[key], RANK_PARTIAL))
        if self.line_match:
            return exact + [move for moves in found.values() for move in moves]
        keys = _major({k: [m[0][0] for m in moves] for k, moves in found.items()})
        if len(keys) == 1:
            return found[keys[0]]
        return []

    def _diagnose(self, line: str, toks: list[tuple[str, int]], buckets: list[dict[int, Cfg]]) -> CliError:
        """The error the device prints for the furthest token any reading reached."""
        n = len(toks)
        last = max(j for j in range(n + 1) if buckets[j])
        best = min(buckets[last].values(), key=lambda c: c[2])
        context = best[1]
        if last == n:
            end = toks[-1][1] + len(toks[-1][0])
            return CliError("incomplete", end, "", index=n, context=context)
        tok, pos = toks[last]
        if tok == "|" and self.pipes:
            # A filter after a command that cannot end there: the command is what is incomplete.
            return CliError("incomplete", pos, tok, index=last, context=context)
        nodes = [cfg[0] for cfg in buckets[last].values()]
        if not any(node.has_edges or node is self.pipe_root for node in nodes):
            return CliError("too_many", pos, tok, index=last, context=context)
        low = tok if self.case_sensitive else tok.lower()
        where: dict[str, list[Node]] = {}
        for node in nodes:
            for key in _prefixed(node, low):
                where.setdefault(key, []).append(node)
        candidates = sorted(_major(where))
        if len(candidates) > 1 and not self.line_match:
            return CliError("ambiguous", pos, tok, index=last, candidates=tuple(candidates), context=context)
        value_slot = any(node.value_params for node in nodes)
        keyword_slot = any(node.kw for node in nodes)
        if value_slot and (looks_like_value(tok) or not keyword_slot):
            slot = "interface" if any("interface" in node.params for node in nodes) else ""
            return CliError("wrong_parameter", pos, tok, index=last, context=context, slot=slot)
        return CliError("unrecognised", pos, tok, index=last, context=context)
