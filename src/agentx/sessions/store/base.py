"""The session store interface (DEC-STORE-1).

Every backend keeps the same guarantees: a session is created whole (header
and empty transcript) or not at all; one writer per session, across
processes and machines (:class:`~agentx.sessions.store.errors.SessionBusy` for a second
one); appends become durable at :meth:`Appender.sync`, the output barrier
the writer actor runs before any byte leaves (group commit: one barrier for
every append since the last); a batch is admitted by the output guard before
it is written (DEC-AUTH-6) and is written whole or not at all; readers see a
prefix of the appended entries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from agentx.sessions.store.errors import SessionError
from agentx.sessions.store.header import SessionHeader
from agentx.sessions.store.jsonl import Admit, Transcript


class SessionTaken(SessionError):
    """Another process took the session while this one's store connection
    was lost (DEC-STORE-1): this process may never write it again, and the
    session ends with exit 4 (DECISIONS section 8)."""


class Appender(Protocol):
    """One session's transcript, open for appending with exclusive ownership."""

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Write ``entries`` (durable at the next :meth:`sync`); raises and
        writes nothing if the batch cannot be written whole."""

    def sync(self) -> None:
        """Make every append so far durable; a failure is raised and
        remembered, so every later append raises."""

    def close(self) -> None:
        """Release the session (a running sync completes first)."""


def append_synced(appender: Appender, entries: Sequence[Mapping[str, Any]]) -> None:
    """:meth:`SessionStore.append` of every backend: one append, one sync,
    and the session released (DEC-STORE-1)."""
    try:
        appender.append(entries)
        appender.sync()
    finally:
        appender.close()


class SessionStore(Protocol):
    """Where sessions live: the local files or a PostgreSQL database."""

    @property
    def location(self) -> str:
        """Where the store is, for diagnostics: never a credential."""

    def create(self, header: SessionHeader) -> None:
        """Create the session with ``header`` and no entries
        (:class:`~agentx.sessions.store.errors.SessionExists` if the id is taken)."""

    def open(self, session_id: str) -> Transcript:
        """Read the session for resuming it; :class:`~agentx.sessions.store.errors.SessionBusy`
        while another writer holds it."""

    def read(self, session_id: str) -> Transcript:
        """Read the session without changing it."""

    def appender(self, session_id: str, *, admit: Admit | None = None) -> Appender:
        """Open the session for appending; it is held until the appender closes."""

    def append(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append ``entries`` durably in one call."""

    def newest(self, cwd: str) -> str | None:
        """DEC-CLI-5 ``--continue``: the session of ``cwd`` that changed last."""

    def headers(self) -> tuple[SessionHeader, ...]:
        """Every readable session's header, oldest first."""

    def delete(self, session_id: str) -> None:
        """Remove the session whole (``agentx sessions delete``, DEC-STORE-5):
        :class:`~agentx.sessions.store.errors.SessionNotFound` if it is not
        there, :class:`~agentx.sessions.store.errors.SessionBusy` while a
        writer holds it. Attachment blobs stay: they are shared by content."""

    def close(self) -> None:
        """Release the store's connections (nothing for the files)."""
