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

The texts, from public transcripts: VRP ``Enter system view, return user view with Ctrl+Z.``;
Comware ``System View: return to User View with Ctrl+Z.``; IOS ``Enter configuration commands, one
per line.  End with CNTL/Z.``; Junos ``Entering configuration mode`` / ``Exiting configuration
mode``. Entering and leaving are logged with outcome ``session`` (executes nothing, never scored).
NX-OS and the other families keep no views here (their lines are answered as always).
"""

from __future__ import annotations

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
        if len(words) != 1:
            return self.family == "juniper_junos" and [w.lower() for w in words] == [
                "exit",
                "configuration-mode",
            ]
        word = words[0]
        if self.family in ("huawei_vrp", "huawei_vrp8", "hp_comware"):
            return _abbrev(word, "quit", 1) or _abbrev(word, "return", 3)
        if self.family == "cisco_ios":
            return word.lower() in ("end", "exit")
        return word.lower() in ("exit", "quit")

    def prompt(self, login_prompt: str) -> str:
        """The view's prompt, made from the device's login prompt."""
        if self.family in ("huawei_vrp", "huawei_vrp8", "hp_comware") and login_prompt.startswith("<"):
            return "[" + login_prompt[1:].rstrip().removesuffix(">") + "]"
        if self.family == "cisco_ios" and login_prompt.endswith("#"):
            return login_prompt[:-1] + "(config)#"
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


VIEWS: dict[str, View] = {
    "huawei_vrp": View("huawei_vrp", "Enter system view, return user view with Ctrl+Z.\n"),
    "huawei_vrp8": View("huawei_vrp8", "Enter system view, return user view with Ctrl+Z.\n"),
    "hp_comware": View("hp_comware", "System View: return to User View with Ctrl+Z.\n"),
    "cisco_ios": View("cisco_ios", "Enter configuration commands, one per line.  End with CNTL/Z.\n"),
    "juniper_junos": View("juniper_junos", "Entering configuration mode\n", "Exiting configuration mode\n\n"),
}
"""The one configuration view of each family that has one here."""


__all__ = ["CTRL_Z", "VIEWS", "View"]
