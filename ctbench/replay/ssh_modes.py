"""The configuration views a login can enter and leave, as each vendor's CLI shows them.

An engineer (and netmiko's ``config_mode()``) types ``system-view``, ``configure terminal`` or
``configure`` and expects the device's answer and its configuration prompt; the replay changes
nothing on a device, so inside a view it answers what it can answer anywhere and refuses the rest:

* VRP / Comware system view (``[CORE_SW_01]``): ``display`` works in every view, so every line is
  answered as in the user view; ``quit`` or ``return`` (or Ctrl+Z) goes back to ``<CORE_SW_01>``.
* IOS configuration mode (``GW_01(config)#``): ``do CMD`` runs CMD; an EXEC command without ``do``
  is the device's ``% Invalid input``; any configuration line is refused like an unrecorded command;
  ``end``, ``exit`` or Ctrl+Z leave.
* Junos configuration mode (``[edit]`` above ``admin@PE_01#``): ``run CMD`` runs CMD; any other
  line is refused; ``exit`` or ``quit`` leave with ``Exiting configuration mode``.

Below a configuration view, the views engineers enter most while troubleshooting (:func:`sub_view`),
each with the device's prompt; ``display``/``do``/``run`` work in them as in their parent view:

* VRP / Comware: ``interface NAME`` -> ``[CORE_SW_01-GigabitEthernet0/0/1]`` (the full name, for an
  interface the device has; one it lacks gets ``Wrong parameter`` with its caret), ``vlan 10`` ->
  ``[X-vlan10]``, ``ospf 1`` -> ``[X-ospf-1]``, ``bgp 65001`` -> ``[X-bgp]`` (Comware 7:
  ``[X-bgp-default]``). ``quit`` goes up one view, ``return`` or Ctrl+Z back to the user view.
  Prompts from Huawei's and H3C's configuration guides (e.g. ``[HUAWEI-GigabitEthernet0/0/1]``,
  ``[RouterA-bgp-default]``, ``[PE1-ospf-1]``).
* IOS: ``interface X`` -> ``GW_01(config-if)#`` (``(config-subif)#`` for ``X.N``), ``router ospf|bgp
  N`` -> ``(config-router)#``, ``vlan N`` -> ``(config-vlan)#``, ``line vty 0 4`` ->
  ``(config-line)#``; ``exit`` goes up one mode, ``end`` or Ctrl+Z back to ``#``.

IOS privilege levels (:func:`ios_privileged_only`): a login may start in user EXEC (``GW_01>``,
``ctb-replay ssh --user-exec``); ``enable`` asks ``Password:`` (the login's password; three wrong
ones end with ``% Bad secrets``, as public lab transcripts show) and goes to ``#``, ``disable`` back
to ``>``. At ``>`` a privileged command is hidden, so the device answers ``% Invalid input detected
at '^' marker.`` with the caret under the hidden keyword (shared NOTES 2.3: ``show running-config`` at
``>``, netmiko issue 3426; ``show authentication sessions`` at ``ACCSW>``, netmiko issue 1823).

The texts, from public transcripts: VRP ``Enter system view, return user view with Ctrl+Z.``;
Comware ``System View: return to User View with Ctrl+Z.``; IOS ``Enter configuration commands, one
per line.  End with CNTL/Z.``; Junos ``Entering configuration mode`` / ``Exiting configuration
mode``. Entering and leaving are logged with outcome ``session`` (executes nothing, never scored).
NX-OS and the other families keep no views here (their lines are answered as always).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CTRL_Z = "\x1a"


def _abbrev(typed: str, word: str, least: int) -> bool:
    """``typed`` is ``word`` or a prefix of it at least ``least`` characters long (any case)."""
    t = typed.lower()
    return len(t) >= min(least, len(word)) and word.startswith(t)


@dataclass(frozen=True)
class View:
    """One configuration view of a CLI family: how it is entered, shown, used and left."""

    family: str
    entered: str
    """What the device prints on entering it."""
    left: str = ""
    """What it prints on leaving it."""

    def enters(self, words: list[str]) -> bool:
        if self.family in ("huawei_vrp", "huawei_vrp8", "hp_comware"):
            return len(words) == 1 and _abbrev(words[0], "system-view", 3)
        if self.family == "cisco_ios":
            return len(words) == 2 and _abbrev(words[0], "configure", 4) and _abbrev(words[1], "terminal", 1)
        if self.family == "juniper_junos":
            return len(words) == 1 and _abbrev(words[0], "configure", 4)
        return False

    def leaves(self, words: list[str]) -> bool:
        return self.leave_kind(words) is not None

    def leave_kind(self, words: list[str]) -> str | None:
        """``"one"`` for a line that goes up one view (VRP ``quit``, IOS ``exit``), ``"all"`` for one
        that goes back to the login view (VRP ``return``, IOS ``end``), None for any other line."""
        if len(words) != 1:
            junos_exit = [w.lower() for w in words] == ["exit", "configuration-mode"]
            return "all" if self.family == "juniper_junos" and junos_exit else None
        word = words[0]
        if self.family in ("huawei_vrp", "huawei_vrp8", "hp_comware"):
            return "one" if _abbrev(word, "quit", 1) else "all" if _abbrev(word, "return", 3) else None
        if self.family == "cisco_ios":
            return {"exit": "one", "end": "all"}.get(word.lower())
        return "all" if word.lower() in ("exit", "quit") else None

    def prompt(self, login_prompt: str, sub: str | None = None) -> str:
        """The view's prompt, made from the device's login prompt (``sub``: a view below it)."""
        if self.family in ("huawei_vrp", "huawei_vrp8", "hp_comware") and login_prompt.startswith("<"):
            name = login_prompt[1:].rstrip().removesuffix(">")
            return "[" + name + (f"-{sub}" if sub else "") + "]"
        if self.family == "cisco_ios" and login_prompt.endswith("#"):
            return login_prompt[:-1] + (f"(config-{sub})#" if sub else "(config)#")
        if self.family == "juniper_junos":
            stripped = login_prompt.rstrip()
            if stripped.endswith(">"):  # a blank line and the hierarchy level above each prompt
                return "\n[edit]\n" + stripped[:-1] + "# "
        return login_prompt

    def passthrough(self, line: str) -> str | None:
        """The command a line inside the view runs as in the login view, or None when it does not
        run one: everything in VRP's and Comware's system view, ``do CMD`` on IOS, ``run CMD`` on Junos."""
        if self.family in ("huawei_vrp", "huawei_vrp8", "hp_comware"):
            return line
        first, _, rest = line.strip().partition(" ")
        keyword = "do" if self.family == "cisco_ios" else "run"
        if first.lower() == keyword and rest.strip():
            return rest.strip()
        return None


@dataclass(frozen=True)
class SubView:
    """A view below the configuration view, as a line asks for it: ``suffix`` goes into the prompt;
    for an interface, ``token`` is the name as typed (at ``position`` in the line), which the terminal
    checks against the device's interfaces and spells out in full (VRP/Comware)."""

    kind: str
    suffix: str
    token: str = ""
    position: int = 0


_VRP = ("huawei_vrp", "huawei_vrp8", "hp_comware")


def sub_view(family: str, line: str) -> SubView | None:
    """The view ``line`` enters from a configuration view of ``family``, or None when it enters none."""
    spans = [(m.start(), m.group()) for m in re.finditer(r"\S+", line)]
    words = [w.lower() for _, w in spans]
    if not words:
        return None
    first = words[0]
    if _abbrev(first, "interface", 3) and len(words) in (2, 3):
        token = "".join(w for _, w in spans[1:])
        if family == "cisco_ios":
            return SubView("interface", "subif" if "." in token else "if", token, spans[1][0])
        if family in _VRP:
            return SubView("interface", "", token, spans[1][0])
        return None
    if family in _VRP:
        if first == "vlan" and len(words) == 2 and words[1].isdigit():
            return SubView("vlan", f"vlan{int(words[1])}")
        if first == "ospf" and (len(words) == 1 or (len(words) == 2 and words[1].isdigit())):
            return SubView("ospf", f"ospf-{int(words[1]) if len(words) == 2 else 1}")
        if first == "bgp" and len(words) == 2 and words[1].replace(".", "").isdigit():
            return SubView("bgp", "bgp-default" if family == "hp_comware" else "bgp")
        return None
    if family == "cisco_ios":
        if _abbrev(first, "router", 3) and len(words) == 3 and words[1] in ("ospf", "bgp", "eigrp"):
            return SubView("router", "router")
        if first == "vlan" and len(words) == 2 and words[1].isdigit():
            return SubView("vlan", "vlan")
        if first == "line" and len(words) >= 2 and words[1] in ("vty", "con", "console", "aux"):
            return SubView("line", "line")
    return None


# --------------------------------------------------------------------------- IOS privilege levels

IOS_PRIVILEGED: tuple[tuple[str, int], ...] = (
    ("configure", 4),
    ("copy", 3),
    ("write", 2),
    ("erase", 3),
    ("reload", 3),
    ("debug", 3),
    ("undebug", 3),
    ("clear", 3),
    ("delete", 3),
)
"""IOS EXEC commands of level 15 only (hidden at user EXEC), with the shortest prefix that names them."""
IOS_PRIVILEGED_SHOW: tuple[tuple[str, int], ...] = (
    ("running-config", 3),
    ("startup-config", 4),
    ("tech-support", 2),
    ("archive", 3),
    ("authentication", 5),
)
"""``show`` keywords of level 15 only: at ``>`` the device's caret goes under them."""


def ios_privileged_only(line: str) -> int | None:
    """Where IOS puts its caret when ``line`` is typed at user EXEC (``>``) and needs ``#``, or None
    when the line runs at user EXEC (``show ip route``, ``ping``, ``terminal length 0`` ...)."""
    spans = [(m.start(), m.group().lower()) for m in re.finditer(r"\S+", line)]
    if not spans:
        return None
    pos, first = spans[0]
    if any(_abbrev(first, word, least) for word, least in IOS_PRIVILEGED):
        return pos
    if _abbrev(first, "show", 2) and len(spans) > 1:
        pos, second = spans[1]
        if any(_abbrev(second, word, least) for word, least in IOS_PRIVILEGED_SHOW):
            return pos
    return None


def ios_level_word(line: str) -> str | None:
    """``"enable"`` or ``"disable"`` when ``line`` is one of them (as IOS abbreviates them)."""
    words = line.split()
    if len(words) == 1 and _abbrev(words[0], "enable", 2):
        return "enable"
    if len(words) == 1 and _abbrev(words[0], "disable", 4):
        return "disable"
    return None


VIEWS: dict[str, View] = {
    "huawei_vrp": View("huawei_vrp", "Enter system view, return user view with Ctrl+Z.\n"),
    "huawei_vrp8": View("huawei_vrp8", "Enter system view, return user view with Ctrl+Z.\n"),
    "hp_comware": View("hp_comware", "System View: return to User View with Ctrl+Z.\n"),
    "cisco_ios": View("cisco_ios", "Enter configuration commands, one per line.  End with CNTL/Z.\n"),
    "juniper_junos": View("juniper_junos", "Entering configuration mode\n", "Exiting configuration mode\n\n"),
}
"""The one configuration view of each family that has one here."""


__all__ = [
    "CTRL_Z",
    "VIEWS",
    "SubView",
    "View",
    "ios_level_word",
    "ios_privileged_only",
    "sub_view",
]
