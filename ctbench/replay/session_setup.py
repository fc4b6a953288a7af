"""Session-setup commands: paging, width and privilege lines every client types before working.

netmiko, scrapli, Ansible and engineers alike open a session with ``terminal length 0``,
``screen-length 0 temporary``, ``set cli screen-length 0`` and the like. They are not evidence of
troubleshooting, and answering them with the "not recorded" permission text breaks the clients
(netmiko's Junos driver waits for ``Screen width set to``). So each vendor's setup commands get the
vendor's own answer, in every transport, and are logged with outcome ``session``, which scoring
ignores (only ``recorded`` and ``denied`` calls are executed actions).

The answers, with their sources:

* Huawei VRP ``screen-length 0 temporary``: ``Info: The configuration takes effect on the current
  user terminal interface only.`` (real session logs, e.g. annetutil/gnetcli's Huawei mock dialog and
  published NE40E captures).
* H3C Comware ``screen-length disable``: ``% Screen-length configuration is disabled for current
  user.`` (Comware 5.20 captures of HPE MSR routers in public device-detection tests).
* Junos ``set cli screen-length N`` / ``screen-width N`` / ``complete-on-space off``: ``Screen length
  set to N``, ``Screen width set to N``, ``Disabling complete-on-space`` (what netmiko's Junos driver
  waits for; the same texts in public Junos mock devices).
* Cisco IOS and NX-OS ``terminal length|width N``, ``terminal [no] monitor``, IOS ``enable``: the
  device prints nothing and shows its prompt again (the replay's IOS prompt is already ``#``).

scrapli's Huawei definition writes ``screen-width 255\\ny\\n\\n`` with literal backslashes as a
fallback; on a VRP that has ``screen-width`` the value is not a number, so the device answers with
its wrong-parameter error under the first backslash. That line is session setup as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

Answerer = Callable[[re.Match[str]], str]


@dataclass(frozen=True, slots=True)
class SetupRule:
    """A canonical setup command (a regular expression over the canonical form) and its answer."""

    pattern: re.Pattern[str]
    answer: Answerer


def _fixed(text: str) -> Answerer:
    return lambda _m: text


def _rule(pattern: str, answer: Answerer) -> SetupRule:
    return SetupRule(re.compile(pattern), answer)


_CISCO_TERMINAL = _rule(r"terminal (?:length|width|session-timeout) \d+|terminal (?:no )?monitor", _fixed(""))

RULES: dict[str, tuple[SetupRule, ...]] = {
    "cisco_ios": (_CISCO_TERMINAL, _rule(r"enable(?: 15)?", _fixed(""))),
    "cisco_nxos": (_CISCO_TERMINAL,),
    "cisco_iosxr": (_CISCO_TERMINAL,),
    "arista_eos": (_CISCO_TERMINAL, _rule(r"enable", _fixed(""))),  # what it prints: unverified
    "huawei_vrp": (
        _rule(
            r"screen-length \d+ temporary",
            _fixed("Info: The configuration takes effect on the current user terminal interface only."),
        ),
    ),
    "huawei_vrp8": (
        _rule(
            r"screen-length \d+ temporary",
            _fixed("Info: The configuration takes effect on the current user terminal interface only."),
        ),
    ),
    "hp_comware": (
        _rule(
            r"screen-length disable", _fixed("% Screen-length configuration is disabled for current user.")
        ),
    ),
    "juniper_junos": (
        _rule(r"set cli screen-length (\d+)", lambda m: f"Screen length set to {m.group(1)}"),
        _rule(r"set cli screen-width (\d+)", lambda m: f"Screen width set to {m.group(1)}"),
        _rule(r"set cli complete-on-space off", _fixed("Disabling complete-on-space")),
        _rule(r"set cli complete-on-space on", _fixed("Enabling complete-on-space")),
    ),
}
"""Per CLI family: the setup commands it answers itself. A family without rules has none."""

VRP_SCREEN_WIDTH = re.compile(r"\s*screen-width\s")
"""scrapli's Huawei fallback line (``screen-width 255\\ny\\n\\n``, backslashes literal)."""


def setup_answer(os_name: str, canonical: str) -> str | None:
    """The device's answer to a valid setup command (``""`` when it prints nothing), else None.

    The answer ends with a newline when it is not empty, like every other device answer.
    """
    for rule in RULES.get(os_name, ()):
        m = rule.pattern.fullmatch(canonical)
        if m is not None:
            text = rule.answer(m)
            return text + "\n" if text else ""
    return None


def stray_setup_position(os_name: str, line: str) -> int | None:
    """Where the device puts its wrong-parameter caret on a setup line it does not take, or None.

    Only scrapli's VRP ``screen-width 255\\ny\\n\\n`` is such a line: the value is not a number,
    so the caret goes under its first character that is not a digit (a position in ``line``).
    """
    if os_name != "huawei_vrp" or not VRP_SCREEN_WIDTH.match(line):
        return None
    start = line.index("screen-width") + len("screen-width")
    while start < len(line) and line[start] in " \t":
        start += 1
    pos = start
    while pos < len(line) and line[pos].isdigit():
        pos += 1
    if pos < len(line) and line[pos] not in " \t":
        return pos
    return None


__all__ = ["RULES", "SetupRule", "setup_answer", "stray_setup_position"]
