"""What a device prints when an SSH shell opens on it, before its first prompt.

A login on a real device is not a bare prompt: VRP reports the VTY users and the login time,
Comware shows its copyright box, NX-OS the copyright header ``show version`` also begins with. A
client reads past all of it to the prompt (netmiko and scrapli do); an engineer sees the device they
expect. IOS prints only a banner the device is configured with, so an IOS device whose recorded
``show running-config`` has a ``banner motd`` shows that text; Junos prints its version line
(``--- JUNOS 18.4R1.8 built ...``), whose build time no recording holds, so Junos shows nothing.

Sources: VRP5's lines appear in many public login transcripts (``Info: The max number of VTY users
is 10, and the number`` / ``of current VTY users on line is 1.`` / ``The current login time is
...``; VRP8's one-line form, seen in V800R011 transcripts, ``Info: The max number of VTY users
is 5, the number of current VTY users online is 1, and total number of terminal users online is
...``); the Comware box likewise (``New H3C Technologies Co., Ltd.``, 2004-2017 release line); the
NX-OS header is that of a real ``show version`` capture, ``tests/fixtures/vendor-cli/cisco_nxos/
show_version/1.raw`` (ntc-templates, Apache-2.0), unless the device has its own ``show version``
recorded. Nothing here is logged in the trajectory: a banner is not a command.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctbench.replay.session import Session

VRP_LOGIN = (
    "Info: The max number of VTY users is 10, and the number\n"
    "      of current VTY users on line is {online}.\n"
    "      The current login time is {now}.\n"
)

VRP8_LOGIN = (
    "Info: The max number of VTY users is 5, the number of current VTY users online is {online}, "
    "and total number of terminal users online is {online}.\n"
    "      The current login time is {now}.\n"
)

COMWARE_BOX = (
    "******************************************************************************\n"
    "* Copyright (c) 2004-2017 New H3C Technologies Co., Ltd. All rights reserved.*\n"
    "* Without the owner's prior written consent,                                 *\n"
    "* no decompiling or reverse-engineering shall be allowed.                    *\n"
    "******************************************************************************\n"
    "\n"
)

NXOS_HEADER = (
    "\n".join(
        (
            "Cisco Nexus Operating System (NX-OS) Software",
            "TAC support: http://www.cisco.com/tac",
            "Copyright (C) 2002-2014, Cisco and/or its affiliates.",
            "All rights reserved.",
            "The copyrights to certain works contained in this software are",
            "owned by other third parties and used and distributed under their own",
            'licenses, such as open source.  This software is provided "as is," and unless',
            "otherwise stated, there is no warranty, express or implied, including but not",
            "limited to warranties of merchantability and fitness for a particular purpose.",
            "Certain components of this software are licensed under",
            "the GNU General Public License (GPL) version 2.0 or",
            "GNU General Public License (GPL) version 3.0  or the GNU",
            "Lesser General Public License (LGPL) Version 2.1 or",
            "Lesser General Public License (LGPL) Version 2.0.",
            "A copy of each such license is available at",
            "http://www.opensource.org/licenses/gpl-2.0.php and",
            "http://opensource.org/licenses/gpl-3.0.html and",
            "http://www.opensource.org/licenses/lgpl-2.1.php and",
            "http://www.gnu.org/licenses/old-licenses/library.txt.",
        )
    )
    + "\n"
)

_IOS_BANNER = re.compile(r"^banner motd (\S)(.*?)\1", re.M | re.S)


def _recorded(session: Session, device: str, command: str) -> str | None:
    """The device's recording of ``command`` as text, read without a call (no trajectory line)."""
    found = session.task.device(device)
    rec = found.index.get(command) if found is not None else None
    if rec is None:
        return None
    data = session.engine.recording_bytes(session.task, rec)
    return None if data is None else data.decode("utf-8", "replace")


def nxos_header(show_version: str | None) -> str:
    """The copyright header of a ``show version`` output (everything before its ``Software`` line)."""
    if show_version and show_version.startswith("Cisco Nexus Operating System"):
        head, sep, _ = show_version.replace("\r\n", "\n").partition("\nSoftware\n")
        if sep:
            return head.rstrip("\n") + "\n"
    return NXOS_HEADER


def ios_motd(running_config: str | None) -> str:
    """The text of a ``banner motd`` in a running configuration (``^C`` or any delimiter), or ``""``."""
    if not running_config:
        return ""
    text = running_config.replace("\r\n", "\n").replace("^C", "\x03")
    m = _IOS_BANNER.search(text)
    if m is None:
        return ""
    body = m.group(2).strip("\n")
    return body + "\n" if body else ""


def login_banner(session: Session, device: str, *, online: int = 1, now: datetime | None = None) -> str:
    """What ``device`` prints between the login and its first prompt (``""`` for none)."""
    found = session.task.device(device)
    if found is None:
        return ""
    family = found.info.os
    if family in ("huawei_vrp", "huawei_vrp8"):
        when = (now or datetime.now()).strftime("%Y-%m-%d %H:%M:%S")
        return (VRP_LOGIN if family == "huawei_vrp" else VRP8_LOGIN).format(online=online, now=when)
    if family == "hp_comware":
        return COMWARE_BOX
    if family == "cisco_nxos":
        return nxos_header(_recorded(session, device, "show version"))
    if family == "cisco_ios":
        return ios_motd(_recorded(session, device, "show running-config"))
    return ""


__all__ = ["COMWARE_BOX", "NXOS_HEADER", "VRP8_LOGIN", "VRP_LOGIN", "ios_motd", "login_banner", "nxos_header"]
