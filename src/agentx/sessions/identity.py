"""The session id outbound records carry (DEC-COMPAT-2), renewable by ``/clear``.

``/clear`` (a slash command, DEC-TURN-1) starts a new session in the same process: every
record emitted after it carries the new id. The parts that build records
read the id here at emit time instead of holding a copy. One thread renews
it (the turn worker, between the records of a turn); readers on other
threads see the old or the new id, never a torn value (a reference swap).
"""

from __future__ import annotations


class SessionIdentity:
    __slots__ = ("_id",)

    def __init__(self, session_id: str) -> None:
        self._id = session_id

    @property
    def id(self) -> str:
        return self._id

    def renew(self, session_id: str) -> None:
        self._id = session_id
