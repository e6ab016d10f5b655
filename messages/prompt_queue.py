"""The prompt admission queue (DEC-TURN-1, WIRE-020 capacity, DEC-DEDUP-1).

Sans-IO: the turn runner shell owns one :class:`PromptQueue` and asks it what
to do with each admitted ``user`` record. Priorities: ``later`` (default) at
the back, ``next`` at the front, ``now`` at the front *and* interrupts the
active turn. Capacity is 128 queued records and 16 MiB of admitted record
bytes; a record past either bound is refused with ``queue_full`` and nothing
already queued is lost.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Generic, Literal, TypeVar

from msgspec import Struct

Priority = Literal["now", "next", "later"]

#: WIRE-020 queue capacity.
MAX_QUEUED_RECORDS = 128
MAX_QUEUED_BYTES = 16 * 1024 * 1024
#: DEC-DEDUP-1 memory of admitted uuids; the oldest is forgotten past this.
MAX_REMEMBERED_UUIDS = 100_000

T = TypeVar("T")


class QueuedPrompt(Struct, Generic[T], frozen=True, kw_only=True):
    """One admitted user record waiting for its turn."""

    uuid: str | None
    priority: Priority
    size: int
    payload: T


class Admitted(Struct, frozen=True, kw_only=True):
    """Queued. ``interrupt`` is true for ``priority: now`` (abort the active turn)."""

    interrupt: bool


class Refused(Struct, frozen=True, kw_only=True):
    """Not queued; ``reason`` is the bounded input-error reason (``queue_full``)."""

    reason: str


class Duplicate(Struct, frozen=True, kw_only=True):
    """DEC-DEDUP-1: this uuid was already admitted in this session; not run again."""


Admission = Admitted | Refused | Duplicate


class PromptQueue(Generic[T]):
    """Bounded priority queue of prompts with uuid de-duplication."""

    def __init__(
        self,
        *,
        max_records: int = MAX_QUEUED_RECORDS,
        max_bytes: int = MAX_QUEUED_BYTES,
        max_remembered_uuids: int = MAX_REMEMBERED_UUIDS,
    ) -> None:
        self._max_records = max_records
        self._max_bytes = max_bytes
        self._max_uuids = max_remembered_uuids
        self._items: deque[QueuedPrompt[T]] = deque()
        self._bytes = 0
        self._seen: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    @property
    def queued_bytes(self) -> int:
        return self._bytes

    def seen(self, uuid: str) -> bool:
        """True when ``uuid`` was admitted before (DEC-DEDUP-1)."""
        return uuid in self._seen

    def check(self, *, uuid: str | None, size: int) -> Admission | None:
        """What :meth:`admit` would refuse, without changing anything.

        WIRE-020 asks for the queue reservation to be validated before a
        ``priority: now`` record interrupts active work; this is that check.
        """
        if uuid is not None and uuid in self._seen:
            return Duplicate()
        if len(self._items) >= self._max_records or self._bytes + size > self._max_bytes:
            return Refused(reason="queue_full")
        return None

    def admit(self, prompt: QueuedPrompt[T]) -> Admission:
        refusal = self.check(uuid=prompt.uuid, size=prompt.size)
        if refusal is not None:
            return refusal
        if prompt.uuid is not None:
            self._seen[prompt.uuid] = None
            if len(self._seen) > self._max_uuids:
                self._seen.popitem(last=False)
        if prompt.priority == "later":
            self._items.append(prompt)
        else:
            self._items.appendleft(prompt)
        self._bytes += prompt.size
        return Admitted(interrupt=prompt.priority == "now")

    def pop(self) -> QueuedPrompt[T] | None:
        """The next prompt to run, or None when empty."""
        if not self._items:
            return None
        prompt = self._items.popleft()
        self._bytes -= prompt.size
        return prompt

    def cancel(self, uuid: str) -> bool:
        """``cancel_async_message``: drop a queued, not yet started record by uuid."""
        for prompt in self._items:
            if prompt.uuid == uuid:
                self._items.remove(prompt)
                self._bytes -= prompt.size
                return True
        return False
