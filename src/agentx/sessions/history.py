"""The conversation of one session, with transcript ids (DEC-STORE-1, WIRE-005, DEC-TURN-1).

:class:`History` is the turn engine's message list. Every message has the id
its transcript entry carries, so a compaction boundary can name the
preserved segment (WIRE-005). Messages appended since the last
:meth:`History.flush` are written by the next flush, which the engine runs
before the result that depends on them; a compaction writes them together
with its boundary entry, so the boundary never names an unwritten message.
Used from the turn worker thread; readers elsewhere take :meth:`messages`
(a snapshot).

A flush that fails drops the messages it could not write, from memory as
well as from every later write: the turn is reported failed and is never
persisted afterwards (DEC-STORE-1), so the live conversation and a resumed
one stay the same (:class:`TranscriptWriteFailed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, Protocol, overload

from agentx.diagnostics import logger
from agentx.messages.compaction import CompactBoundary, CompactionPlan, HistoryItem
from agentx.providers.base import Message, text_chars
from agentx.sessions.compaction import history_items
from agentx.sessions.pairing import pair_tool_uses
from agentx.sessions.store.errors import SessionError, TranscriptRefused
from agentx.sessions.transcript import Recorded, boundary_entry, to_entries


class TranscriptWriteFailed(Exception):
    """A flush could not make the turn's messages durable; they were dropped.

    The message says why in one credential-free line, for the turn's result
    and the one ERROR line (DEC-STORE-1).
    """


def _failure(error: Exception) -> TranscriptWriteFailed:
    if isinstance(error, TranscriptRefused):
        return TranscriptWriteFailed(f"transcript write refused: {error} (DEC-AUTH-6)")
    if isinstance(error, OSError):
        return TranscriptWriteFailed(
            f"transcript write failed: {error.strerror or type(error).__name__}"
        )
    return TranscriptWriteFailed(f"transcript write failed: {error}")


class TranscriptSink(Protocol):
    """Where the history is made durable (:class:`agentx.sessions.setup.StoredTranscript`)."""

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Write (durable at the next :meth:`sync`); raises if nothing could be written."""

    def sync(self) -> bool:
        """Make every append so far durable; the output barrier, never raises:
        False when the store failed (DEC-STORE-6: drop what waited for it)."""

    def start_new(self, session_id: str) -> None:
        """``/clear``: later appends go to a new session ``session_id``."""

    def close(self) -> None:
        """Sync and close at the end of the session."""


class MessagesView(Sequence[Message]):
    """The first ``length`` messages of a list the history only appends to:
    an immutable snapshot that costs nothing to take, so a model request
    does not copy the whole conversation each call. (The history never
    rewrites a list it has handed out: compaction and ``/clear`` start a
    new one.)"""

    __slots__ = ("_items", "_length")

    def __init__(self, items: list[Message], length: int) -> None:
        self._items = items
        self._length = length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Message, ...]: ...

    def __getitem__(self, index: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(index, slice):
            return tuple(self._items[: self._length][index])
        position = index + self._length if index < 0 else index
        if not 0 <= position < self._length:
            raise IndexError("history index out of range")
        return self._items[position]

    def __iter__(self) -> Iterator[Message]:
        return islice(self._items, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"MessagesView({tuple(self)!r})"


class History:
    def __init__(
        self, *, new_uuid: Callable[[], str], transcript: TranscriptSink | None = None
    ) -> None:
        self._uuid = new_uuid
        self._transcript = transcript
        self._messages: list[Message] = []
        self._ids: list[str] = []
        self._unsaved: list[Recorded] = []
        #: Ledger entries (agentx.messages.session_ledger) for the next flush.
        self._notes: list[dict[str, Any]] = []
        #: Text characters of every message, kept current so the per-call
        #: context estimate (auto-compaction) never rescans the history.
        self._chars = 0

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(tuple(self._messages))

    def messages(self) -> tuple[Message, ...]:
        return tuple(self._messages)

    def view(self) -> MessagesView:
        """The current messages for a model request, without a copy (the
        worker thread's; other threads take :meth:`messages`)."""
        return MessagesView(self._messages, len(self._messages))

    @property
    def text_chars(self) -> int:
        """:func:`~agentx.providers.base.text_chars` summed over the history."""
        return self._chars

    def items(self) -> tuple[HistoryItem, ...]:
        return history_items(self._ids, self._messages)

    def append(self, message: Message, uuid: str | None = None) -> None:
        """A new message: written by the next :meth:`flush`. ``uuid`` is the
        id of the record the client saw for it (a prompt's, an assistant
        message's), so ``--resume-session-at`` can name it (DEC-CLI-5); an id
        already in the history is never reused."""
        if uuid is None or uuid in self._ids:
            uuid = self._uuid()
        record = Recorded(uuid=uuid, message=message)
        self._put(record)
        self._unsaved.append(record)

    def restore(self, records: Iterable[Recorded]) -> None:
        """A resumed session's history, already durable (never executed again).

        Spec "Ordering": a tool use the stored history never answered gets an
        error result (:mod:`agentx.sessions.pairing`), so the resumed
        session's requests are ones a provider accepts. An answer after the
        last stored message is stored with the next turn; one between stored
        messages lives in memory only (the next resume repairs it the same way).
        """
        for record in records:
            self._put(record)
        self._pair()

    def _pair(self) -> None:
        paired = pair_tool_uses(self._messages)
        if not paired.repaired and paired.messages == tuple(self._messages):
            return
        old_ids = iter(self._ids)
        last = len(paired.messages) - 1
        messages: list[Message] = []
        ids: list[str] = []
        for position, message in enumerate(paired.messages):
            if position in paired.inserted:
                record = Recorded(uuid=self._uuid(), message=message)
                if position == last:
                    self._unsaved.append(record)
                ids.append(record.uuid)
            else:
                ids.append(next(old_ids))
            messages.append(message)
        # New lists: views handed out of the old ones stay as they were.
        self._messages, self._ids = messages, ids
        self._chars = sum(text_chars(m) for m in messages)
        if paired.repaired:
            logger.warning(
                "the stored history had {} unanswered tool use(s); each is answered as not run",
                paired.repaired,
            )

    def _put(self, record: Recorded) -> None:
        self._messages.append(record.message)
        self._ids.append(record.uuid)
        self._chars += text_chars(record.message)

    def note(self, entry: Mapping[str, Any]) -> None:
        """A ledger entry (a turn's record, DEC-STORE-1), written by the next
        :meth:`flush` after the messages, in the same batch."""
        self._notes.append(dict(entry))

    def flush(self) -> None:
        """Write the unwritten messages and ledger entries. If that fails they
        are dropped for good (memory included) and
        :class:`TranscriptWriteFailed` says why."""
        notes, self._notes = self._notes, []
        try:
            self._write([*to_entries(self._unsaved), *notes])
        except (OSError, SessionError, ValueError) as exc:
            self._drop_unsaved()
            raise _failure(exc) from None
        except BaseException:
            self._drop_unsaved()
            raise
        self._unsaved.clear()

    def _drop_unsaved(self) -> None:
        """Forget the unwritten messages: always the newest ones (``restore``
        runs before any ``append``; ``compact`` writes what it keeps)."""
        count = len(self._unsaved)
        if not count:
            return
        self._chars -= sum(text_chars(record.message) for record in self._unsaved)
        # A new list: views handed out of the old one stay as they were.
        self._messages = self._messages[:-count]
        del self._ids[-count:]
        self._unsaved.clear()

    def _write(self, entries: list[dict[str, Any]]) -> None:
        if self._transcript is not None and entries:
            self._transcript.append(entries)

    def compact(
        self, chosen: CompactionPlan, *, summary: Recorded, boundary: CompactBoundary, uuid: str
    ) -> None:
        """Replace the summarized prefix by ``summary`` once the unwritten
        messages and the boundary entry are durable; if writing fails it
        raises :class:`TranscriptWriteFailed` and nothing changes (the
        unwritten messages are still the running turn's)."""
        entry = boundary_entry(uuid=uuid, boundary=boundary, summary=summary)
        try:
            self._write([*to_entries(self._unsaved), entry])
        except (OSError, SessionError, ValueError) as exc:
            raise _failure(exc) from None
        self._unsaved.clear()
        summarized = self._messages[: chosen.summarized]
        self._chars += text_chars(summary.message) - sum(map(text_chars, summarized))
        # A new list: views handed out of the old one stay as they were.
        self._messages = [summary.message, *self._messages[chosen.summarized :]]
        self._ids[: chosen.summarized] = [summary.uuid]

    def clear(self, session_id: str) -> None:
        """``/clear``: the old transcript gets what it lacks and stays
        resumable; then the conversation continues in a new session
        ``session_id`` with no context. Raises before clearing if either
        step fails (a failed flush has dropped what it could not write,
        DEC-STORE-1)."""
        self.flush()
        if self._transcript is not None:
            try:
                self._transcript.start_new(session_id)
            except (OSError, SessionError, ValueError) as exc:
                raise _failure(exc) from None
        self._messages = []
        self._ids.clear()
        self._unsaved.clear()
        self._chars = 0
