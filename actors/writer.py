"""WriterActor: the only owner of stdout (WIRE-003, WIRE-013, WIRE-015).

Its inbox is the shared FIFO: ordinary events, outbound control requests,
cancellation records and keepalives all arrive here, each sender's order
preserved, and one message drains at a time. Every record goes through the
:class:`~agentx.messages.guard.OutputGuard`, which validates the exact final
bytes before anything reaches the sink. A latched failure (credential match,
broken pipe, short write) is reported once to ``on_failure``; later records
are dropped without touching the guard's callbacks again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pykka
from loguru import logger

from agentx.actors.base import Actor
from agentx.messages.encode import EncodeError
from agentx.messages.guard import OutputFailure, OutputGuard

Records = tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Emit:
    """Write these records, whole and in order."""

    records: Records


@dataclass(frozen=True, slots=True)
class Drain:
    """Answered once everything sent before it was handled."""


class WriterActor(Actor):
    """Serialises complete, validated records onto the output sink."""

    def __init__(
        self,
        *,
        guard: OutputGuard,
        on_failure: Callable[[str], None],
        select: Callable[[Mapping[str, Any]], bool] = lambda record: True,
    ) -> None:
        super().__init__()
        self._guard = guard
        self._select = select
        self._on_failure = on_failure
        self._failed = False

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Emit):
            self._write(message.records)
            return None
        if isinstance(message, Drain):
            # Scenario 15: this says only that the bytes were handed to the
            # sink, never that a client received or acknowledged them.
            return not self._failed
        raise TypeError(f"WriterActor got an unknown message {type(message).__name__}")

    def _write(self, records: Records) -> None:
        if self._failed:
            return
        for record in records:
            if not self._select(record):
                continue
            try:
                self._guard.write_record(record)
            except OutputFailure as failure:
                self._failed = True
                self._on_failure(failure.kind)
                return
            except EncodeError as exc:
                # A record with no JSON spelling is a defect upstream; nothing
                # was written and the encoder did not latch (WIRE-013).
                logger.error("record dropped: {}", exc)


class WriterSink:
    """The ``emit`` handle every other party writes through (one tell per batch)."""

    __slots__ = ("_ref",)

    def __init__(self, ref: pykka.ActorRef[WriterActor]) -> None:
        self._ref = ref

    def emit(self, records: Records) -> None:
        self._ref.tell(Emit(records))

    def __call__(self, records: Records) -> None:
        self._ref.tell(Emit(records))

    def drain(self, timeout: float | None = None) -> bool:
        """Block until everything emitted before was handled; False if output failed."""
        return bool(self._ref.ask(Drain(), block=True, timeout=timeout))
