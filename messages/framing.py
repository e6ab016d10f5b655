"""Inbound NDJSON framing: bytes in, physical lines out (spec "Framing and envelopes").

The incremental reader accepts arbitrary chunks, retains a partial trailing
record, hands over a final unterminated record at EOF (WIRE-EOF-001), ignores
blank lines and keeps arrival order. Records are split on the byte ``\\n``
alone (DECISIONS section 1): never ``str.splitlines()``, which splits at
U+2028/U+2029/U+0085, and never at a bare ``\\r``. A ``\\r`` before the
``\\n`` stays in the line; the decoder treats it as JSON whitespace.

A record longer than ``max_record_bytes`` (8,388,608 by default, WIRE-018 and
DECISIONS section 1) is fatal. The limit is enforced while the unterminated
tail grows, so an endless line never buffers more than the limit.
"""

from __future__ import annotations

from typing import NoReturn

from msgspec import Struct

#: DECISIONS section 1 / WIRE-018: the largest record, newline excluded.
MAX_RECORD_BYTES = 8_388_608

#: JSON whitespace (RFC 8259); a line made only of these is blank.
_JSON_WHITESPACE = b" \t\r"
_WHITESPACE_BYTES = frozenset(_JSON_WHITESPACE)


class Line(Struct, frozen=True, kw_only=True):
    """One non-blank physical line: its 1-based line number and its bytes
    without the terminating ``\\n``. A frozen ``msgspec.Struct``: one is built
    per record, and a frozen dataclass costs twice as much to build
    (bench/wire_bench.py); a ``NamedTuple`` class costs five times as much to
    define at start-up (DEC-CLI-3)."""

    number: int
    data: bytes


class FramingError(Exception):
    """Fatal framing failure (WIRE-001): the stream cannot go on.

    ``preceding`` holds the complete lines framed before the failure in the
    same call; the caller processes them first, so a good record before a bad
    one is never lost. ``reason`` is fixed text that never echoes input bytes.
    """

    def __init__(self, line_number: int, reason: str, preceding: tuple[Line, ...] = ()) -> None:
        super().__init__(f"line {line_number}: {reason}")
        self.line_number = line_number
        self.reason = reason
        self.preceding = preceding


class LineFramer:
    """Incremental ``\\n`` splitter with a per-record byte limit.

    ``feed`` returns the complete non-blank lines a chunk finishes; ``close``
    returns the non-blank unterminated tail (WIRE-EOF-001). After a
    :class:`FramingError` the framer is latched: every later call raises the
    same error without the preceding lines.
    """

    __slots__ = ("_failed", "_limit", "_next_number", "_pending", "_pending_size")

    def __init__(self, max_record_bytes: int = MAX_RECORD_BYTES) -> None:
        if max_record_bytes < 1:
            raise ValueError("max_record_bytes must be positive")
        self._limit = max_record_bytes
        self._next_number = 1
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._failed: FramingError | None = None

    def feed(self, chunk: bytes) -> list[Line]:
        """Frame ``chunk``; return the lines it completes, in arrival order."""
        self._raise_if_failed()
        pieces = chunk.split(b"\n")
        tail = pieces.pop()
        lines: list[Line] = []
        if pieces:
            if self._pending:
                self._pending.append(pieces[0])
                pieces[0] = b"".join(self._pending)
                self._pending = []
                self._pending_size = 0
            self._complete(pieces, lines)
        self._grow_tail(tail, lines)
        return lines

    def close(self) -> list[Line]:
        """End of input: the unterminated tail as a line, if it is non-blank."""
        self._raise_if_failed()
        tail = b"".join(self._pending)
        self._pending = []
        self._pending_size = 0
        lines: list[Line] = []
        if tail:
            self._complete([tail], lines)
        return lines

    def _complete(self, records: list[bytes], lines: list[Line]) -> None:
        """Number each physical line in ``records``; keep the non-blank ones."""
        number = self._next_number
        limit = self._limit
        for data in records:
            if len(data) > limit:
                self._fail(number, lines)
            if data and (data[0] not in _WHITESPACE_BYTES or data.strip(_JSON_WHITESPACE)):
                lines.append(Line(number=number, data=data))
            number += 1
        self._next_number = number

    def _grow_tail(self, data: bytes, lines: list[Line]) -> None:
        if not data:
            return
        self._pending_size += len(data)
        if self._pending_size > self._limit:
            self._pending = []
            self._fail(self._next_number, lines)
        self._pending.append(data)

    def _fail(self, number: int, lines: list[Line]) -> NoReturn:
        reason = f"record exceeds {self._limit} bytes"
        self._failed = FramingError(number, reason)
        raise FramingError(number, reason, tuple(lines))

    def _raise_if_failed(self) -> None:
        if self._failed is not None:
            raise self._failed
