"""The lists beside the fields (section navigation, validation findings), which never swallow typing.

An option list takes no text, so a character typed while one has the focus would vanish. These lists
hand every printable key to their screen instead (:class:`SideList.Typed`), which sends it on to a text
field or refuses it visibly; nothing typed is lost without a sign.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.widgets import OptionList


class SideList(OptionList):
    """An option list that passes typed characters to its screen instead of dropping them."""

    @dataclass
    class Typed(Message):
        """A printable key reached the list; ``key``/``character`` as in :class:`textual.events.Key`."""

        key: str
        character: str

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable and event.character is not None:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(event.key, event.character))
            return
        await super()._on_key(event)
