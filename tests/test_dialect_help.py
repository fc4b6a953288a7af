"""Context help (``?``) and Tab completion per vendor, at every position of a command line.

Positions: the start of the line, after a keyword, a partial word, after a complete command (``<cr>``
and the output pipe), after ``|`` and inside a filter. The expected texts are the vendor's layout
(header, columns, where ``<cr>`` goes) with the descriptions of the dialect data file.
"""

from __future__ import annotations

import pytest

from ctbench.dialects import OS_FAMILIES, get_dialect

HOST = "R1"

VRP_TOP = """\
  display                   Display information
  ping                      Ping function
  quit                      Exit from current mode and enter prior mode
  return                    Enter the privileged mode
  screen-length             Set the number of lines displayed on a screen
  system-view               Enter the system view
  tracert                   Tracert function
"""

IOS_TOP = """\
  configure   Enter configuration mode
  dir         List files on a filesystem
  disable     Turn off privileged commands
  enable      Turn on privileged commands
  exit        Exit from the EXEC
  logout      Exit from the EXEC
  ping        Send echo messages
  show        Show running system information
  ssh         Open a secure shell client connection
  telnet      Open a telnet connection
  terminal    Set terminal line parameters
  traceroute  Trace route to destination
"""

JUNOS_TOP = """\
Possible completions:
  configure            Manipulate software configuration information
  exit                 Exit the management session
  ping                 Ping remote target
  quit                 Exit the management session
  set                  Set CLI properties, date/time, craft interface message
  show                 Show system information
  ssh                  Start secure shell on another host
  start                Start shell
  traceroute           Trace route to remote host
"""

CASES: list[tuple[str, str, str]] = [
    # --- Huawei VRP
    ("huawei_vrp", "?", VRP_TOP),
    ("huawei_vrp", "dis int b?", "  brief\n"),
    ("huawei_vrp", "dis cu?", "  current-configuration\n"),
    ("huawei_vrp", "display clock ?", "  |                         Matching output\n  <cr>\n"),
    (
        "huawei_vrp",
        "display version ?",
        "  slot                      Slot number\n  |                         Matching output\n  <cr>\n",
    ),
    (
        "huawei_vrp",
        "dis int GigabitEthernet ?",
        "  <0-1023>/<0-63>/<0-1023>  Interface number\n  brief                     Brief information\n",
    ),
    (
        "huawei_vrp",
        "display clock | ?",
        "  begin                     Begin with the line that matches\n"
        "  count                     Count the lines\n"
        "  exclude                   Match the lines that do not match\n"
        "  include                   Match the lines that match\n"
        "  no-more                   Display without pausing\n"
        "  section                   Display the sections that match\n",
    ),
    ("huawei_vrp", "display clock | i?", "  include\n"),
    ("huawei_vrp", "display clock | include ?", "  REGULAR-EXPRESSION<1-255> Regular expression\n"),
    ("huawei_vrp", "dis foo ?", "        ^\nError: Unrecognized command found at '^' position.\n"),
    ("huawei_vrp", "dis zz?", "        ^\nError: Unrecognized command found at '^' position.\n"),
    # --- H3C Comware
    (
        "hp_comware",
        "?",
        "  display                 Display information\n"
        "  ping                    Ping function\n"
        "  quit                    Exit from current mode and enter prior mode\n"
        "  screen-length           Set the number of lines displayed on a screen\n"
        "  super                   Modify the current user level\n"
        "  system-view             Enter the system view\n"
        "  tracert                 Tracert function\n",
    ),
    ("hp_comware", "screen-length ?", "  disable                 Disable multiple-screen output\n"),
    ("hp_comware", "dis int b?", "  Bridge-Aggregation                      brief\n"),
    ("hp_comware", "display clock ?", "  |                       Matching output\n  <cr>\n"),
    (
        "hp_comware",
        "display clock | ?",
        "  begin                   Begin with the line that matches\n"
        "  count                   Count the lines\n"
        "  exclude                 Match the lines that do not match\n"
        "  include                 Match the lines that match\n",
    ),
    ("hp_comware", "dis foo ?", "        ^\n % Unrecognized command found at '^' position.\n"),
    # --- Cisco IOS
    ("cisco_ios", "?", IOS_TOP),
    ("cisco_ios", "s?", "*s=show  show  ssh\n"),
    ("cisco_ios", "sh ip int b?", "BDI  brief\n"),
    ("cisco_ios", "show clock ?", "  detail  Detailed information\n  |       Output modifiers\n  <cr>\n"),
    ("cisco_ios", "show clock | include ?", "  LINE  Regular Expression\n"),
    ("cisco_ios", "show clock | include up ?", "  |     Output modifiers\n  <cr>\n"),
    ("cisco_ios", "sh clock | i x | e?", "exclude\n"),
    (
        "juniper_junos",
        "show version | match x | ?",
        "Possible completions:\n"
        "  count                Count occurrences\n"
        "  except               Show only text that does not match a pattern\n"
        "  find                 Search for first occurrence of pattern\n"
        "  last                 Display end of output only\n"
        "  match                Show only text that matches a pattern\n"
        "  no-more              Don't paginate output\n"
        "  trim                 Trim specified number of columns from start of line\n",
    ),
    (
        "juniper_junos",
        "show version | match x ?",
        "Possible completions:\n  <[Enter]>            Execute this command\n  |                    Pipe through a command\n",
    ),
    (
        "juniper_junos",
        "show version | last ?",
        "Possible completions:\n  <[Enter]>            Execute this command\n  <number>             Number\n",
    ),
    ("cisco_ios", "show xyz?", "% Unrecognized command\n"),
    ("cisco_ios", "xyz ?", "% Unrecognized command\n"),
    ("cisco_ios", "show foo ?", "        ^\n% Invalid input detected at '^' marker.\n"),
    # --- Cisco NX-OS
    (
        "cisco_nxos",
        "?",
        "  configure    Enter configuration mode\n"
        "  dir          List files on a filesystem\n"
        "  end          Go back to EXEC mode\n"
        "  exit         Exit from the EXEC\n"
        "  ping         Send echo messages\n"
        "  ping6        Send IPv6 echo messages\n"
        "  show         Show running system information\n"
        "  terminal     Set terminal line parameters\n"
        "  traceroute   Trace route to destination\n"
        "  traceroute6  Trace the IPv6 route to destination\n",
    ),
    (
        "cisco_nxos",
        "configure ?",
        "  terminal  Configure from the terminal\n  |         Pipe command output to filter\n  <CR>\n",
    ),
    ("cisco_nxos", "sh ip int b?", "brief\n"),
    (
        "cisco_nxos",
        "show clock ?",
        "  detail  Detailed information\n  |       Pipe command output to filter\n  <CR>\n",
    ),
    ("cisco_nxos", "show clock | gr?", "grep\n"),
    ("cisco_nxos", "show xyz?", "        ^\n% Invalid command at '^' marker.\n"),
    # --- Juniper Junos
    ("juniper_junos", "?", JUNOS_TOP),
    (
        "juniper_junos",
        "show int?",
        "Possible completions:\n  interfaces           Show interface information\n",
    ),
    (
        "juniper_junos",
        "show version ?",
        "Possible completions:\n"
        "  <[Enter]>            Execute this command\n"
        "  brief                Brief information\n"
        "  detail               Detailed information\n"
        "  invoke-on            Invoke the command on other routing engines\n"
        "  |                    Pipe through a command\n",
    ),
    (
        "juniper_junos",
        "show version | match ?",
        "Possible completions:\n  <pattern>            Pattern to match against\n",
    ),
    (
        "juniper_junos",
        "show configuration | display s?",
        "Possible completions:\n  set                  Show configuration as set commands\n",
    ),
    ("juniper_junos", "show zzz?", "No valid completions\n"),
    ("juniper_junos", "show foo ?", "               ^\nsyntax error, expecting <command>.\n"),
]


@pytest.mark.parametrize(("os_name", "line", "expected"), CASES)
def test_help_at_each_position(os_name: str, line: str, expected: str) -> None:
    d = get_dialect(os_name)
    assert d.is_help(line)
    assert d.help(line, d.prompt(HOST)) == expected


@pytest.mark.parametrize("os_name", [o for o in OS_FAMILIES if o != "linux"])  # hosts have no "show"
def test_help_after_a_keyword_lists_the_next_words_with_descriptions(os_name: str) -> None:
    """``display ?`` / ``show ?`` lists every second word of the tree, each with a description."""
    d = get_dialect(os_name)
    first = "display" if os_name.startswith(("huawei_vrp", "hp_comware")) else "show"
    text = d.help(f"{first} ?", d.prompt(HOST))
    lines = [ln for ln in text.splitlines() if ln.startswith("  ")]
    assert len(lines) > 30
    words = [ln.split()[0] for ln in lines]
    assert words == sorted(words)
    assert "interface" in words or "interfaces" in words
    assert all(len(ln.split(None, 1)) == 2 for ln in lines), [
        ln for ln in lines if len(ln.split(None, 1)) < 2
    ]
    assert d.help(f"{first[:3]} ?", d.prompt(HOST)) == text  # abbreviated keyword, same help


@pytest.mark.parametrize("os_name", OS_FAMILIES)
def test_every_first_and_second_word_has_a_description(os_name: str) -> None:
    d = get_dialect(os_name)
    prompt = d.prompt(HOST)
    top = [ln.split()[0] for ln in d.help("?", prompt).splitlines() if ln.startswith("  ")]
    for word in top:
        for line in d.help(f"{word} ?", prompt).splitlines():
            if (
                not line.startswith("  ")
                or line.strip() in ("<cr>", "<CR>", "|")
                or line.strip().startswith("<")
            ):
                continue
            assert len(line.split(None, 1)) == 2, (
                f"{os_name}: no description for {line.strip()!r} after {word!r}"
            )


@pytest.mark.parametrize("os_name", OS_FAMILIES)
def test_help_is_the_same_whatever_was_recorded(os_name: str) -> None:
    """Help walks the vendor tree only: it has no way to see a task's recordings (no parameter for
    them), and a recorded command outside the tree does not make its words show up."""
    d = get_dialect(os_name)
    prompt = d.prompt(HOST)
    assert d.resolve("zzsecret probe", recorded={"zzsecret probe"}).ok  # valid for that task ...
    assert "zzsecret" not in d.help("?", prompt)  # ... but never listed
    assert d.complete("zzs") == []


def test_help_does_not_parse_as_a_command() -> None:
    for os_name in OS_FAMILIES:
        d = get_dialect(os_name)
        assert not d.resolve("?").ok and d.is_help("show ?  ") and not d.is_help("show version")


# --------------------------------------------------------------------------- completion

COMPLETIONS: list[tuple[str, str, list[str]]] = [
    ("huawei_vrp", "dis", ["display"]),
    ("huawei_vrp", "display cu", ["current-configuration"]),
    (
        "huawei_vrp",
        "dis c",
        ["clock", "configuration", "counters", "cpu-defend", "cpu-usage", "css", "current-configuration"],
    ),
    ("huawei_vrp", "dis int Gi", ["GigabitEthernet"]),
    ("huawei_vrp", "display clock | inc", ["include"]),
    ("huawei_vrp", "dis xyz ", []),
    ("hp_comware", "dis ip rou", ["routing-table"]),
    ("hp_comware", "di", ["display"]),
    ("cisco_ios", "sh", ["show"]),
    ("cisco_ios", "show ip int", ["interface"]),
    ("cisco_ios", "show ip b", ["bgp"]),
    ("cisco_ios", "show ip s", ["sla", "sockets", "source", "ssh"]),
    ("cisco_nxos", "show int", ["interface"]),
    ("cisco_nxos", "show clock | e", ["egrep", "exclude"]),
    ("juniper_junos", "show rou", ["route"]),
    ("juniper_junos", "show route ", None),  # many; checked below
    ("juniper_junos", "show i", ["igmp", "interfaces", "ipv6", "isis"]),
]


@pytest.mark.parametrize(("os_name", "text", "expected"), COMPLETIONS)
def test_completion(os_name: str, text: str, expected: list[str] | None) -> None:
    got = get_dialect(os_name).complete(text)
    if expected is None:
        assert "table" in got and "protocol" in got and got == sorted(got)
    else:
        assert got == expected


@pytest.mark.parametrize("os_name", [o for o in OS_FAMILIES if o != "frr"])  # FRR matches whole lines
def test_ambiguous_completion_matches_the_ambiguity_error(os_name: str) -> None:
    """What a second Tab lists is exactly what the device calls ambiguous."""
    d = get_dialect(os_name)
    first = "display" if os_name.startswith(("huawei_vrp", "hp_comware")) else "show"
    for prefix in ("i", "s", "c"):
        cands = d.complete(f"{first} {prefix}")
        res = d.resolve(f"{first} {prefix}")
        if len(cands) > 1:
            assert res.error is not None and res.error.kind == "ambiguous"
            if res.error.candidates:
                assert list(res.error.candidates) == cands
