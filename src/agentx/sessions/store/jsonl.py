"""Transcript entries as bytes: one JSON object per ``\\n``-terminated line.

The transcript is the append-only conversation (user, assistant, tool
results, compaction boundaries, committed attachment manifests). A batch is
encoded only if the strict reader reads it back identically (a structural
check of its values, :class:`EncodedBatch`), in bounded pieces; reading splits
on the byte ``\\n`` alone and decodes with the strict decoder (DECISIONS
section 1). A crash leaves a readable prefix: a torn last line (no final
newline, or undecodable) is reported, never parsed as data; an undecodable
line before the last is :class:`~agentx.sessions.store.errors.SessionCorrupt`.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, Final

from msgspec import Struct

from agentx.messages.encode import encode_value
from agentx.messages.frozen import FrozenDict
from agentx.messages.strict_json import StrictJSONError, loads_strict
from agentx.sessions.store.errors import SessionCorrupt
from agentx.sessions.store.header import SessionHeader

#: Checks one encoded batch, given as the pieces :meth:`EncodedBatch.pieces`
#: spells: True when it may be persisted (the output guard's credential
#: validator, :meth:`agentx.messages.guard.CredentialValidator.check_spelled`).
Admit = Callable[[Iterable[bytes]], bool]


class Transcript(Struct, frozen=True, kw_only=True):
    """A session read back: its header and the decoded entries, in order.

    ``torn`` says a torn last line was found and dropped. ``rows`` is a
    database store's ``(seq, entry count)`` of each stored row, in order
    (empty for the files: an entry's place is its line); where a session
    is stored is no part of what it holds, so it is not compared.
    """

    header: SessionHeader
    entries: tuple[FrozenDict, ...]
    torn: bool
    rows: tuple[tuple[int, int], ...] = ()

    def __eq__(self, other: object) -> bool:
        """Equal when what they hold is: ``rows`` is not compared."""
        if type(other) is not Transcript:
            return NotImplemented
        return (self.header, self.entries, self.torn) == (other.header, other.entries, other.torn)

    def __hash__(self) -> int:
        return hash((self.header, self.entries, self.torn))

    def place(self, index: int) -> str:
        """Where entry ``index`` (from 0) is stored, for a diagnostic
        (DEC-STORE-1): its line, or its row's ``seq`` and line in that row."""
        if not self.rows:
            return f"line {index + 1}"
        first = 0
        for seq, count in self.rows:
            if index < first + count:
                return f"the row with seq {seq}, line {index - first + 1} of it"
            first += count
        return f"line {index + 1}"


#: Deepest nesting of objects and arrays an entry may have. The strict
#: reader takes about two interpreter frames a level of arrays, so an entry
#: at the bound reads back on any thread's stack (DECISIONS section 1).
MAX_NESTING: Final = 256
#: Code points of a long text spelled at a time, and about the size of each
#: piece written: what a batch costs beyond its entries, however long they are.
PIECE: Final = 1 << 16
#: Integers up to about 4,200 digits (the interpreter converts at most 4,300).
_INT_BITS: Final = 14_000


@functools.cache
def _surrogates() -> re.Pattern[str]:
    """A surrogate code point: Python holds one, UTF-8 and the reader cannot.
    Compiled with the first non-ASCII text (its 2,048-code-point class takes
    about half a millisecond: start-up, DEC-CLI-3)."""
    return re.compile("[\ud800-\udfff]")


class EncodedBatch:
    """A batch checked to read back identically with the strict reader,
    spelled in bounded pieces on demand (DECISIONS section 1, DEC-STORE-1).

    The check is structural, over the values: every entry is an object;
    member names are text; values are text, finite numbers, integers a
    reader converts, booleans, null, objects and arrays, nested at most
    :data:`MAX_NESTING` deep; no text holds a surrogate. What it refuses is
    what a strict read-back refused (non-finite numbers, lone surrogates,
    names that collide once spelled as text, nesting the reader cannot
    follow) and what has no JSON spelling; so no line is encoded whole to be
    read back. :meth:`pieces` spells the lines with
    :func:`~agentx.messages.encode.encode_value` (the output's own spelling,
    so the persist guard's needles match it: DEC-AUTH-6), a text longer than
    :data:`PIECE` and any container longer than that a piece at a time, so a
    long text is never copied whole to be stored.
    """

    __slots__ = ("_entries", "_long")

    def __init__(self, entries: Sequence[Mapping[str, Any]]) -> None:
        self._entries = entries
        #: ``id`` of each container spelled a piece at a time (alive while
        #: the entries are).
        self._long: set[int] = set()
        for entry in entries:
            if not isinstance(entry, dict):
                raise ValueError("a transcript entry must be a JSON object")
            self._measure(entry, 1)

    def __len__(self) -> int:
        return len(self._entries)

    def _measure(self, value: Any, depth: int) -> int:
        """Check ``value`` at ``depth`` and return about its spelled length."""
        if isinstance(value, str):
            if not value.isascii() and _surrogates().search(value):
                raise ValueError("a transcript entry holds a lone surrogate")
            return len(value) + 2
        if value is None or isinstance(value, bool):
            return 5
        if isinstance(value, int):
            if value.bit_length() > _INT_BITS:
                raise ValueError("a transcript entry holds an integer too long to read back")
            return 20
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError("a transcript entry holds a non-finite number")
            return 24
        if depth > MAX_NESTING:
            raise ValueError("a transcript entry nests too deep to read back")
        size = 2
        if isinstance(value, dict):
            for name, item in value.items():
                if not isinstance(name, str):
                    raise ValueError("a transcript entry has a member name that is not text")
                size += self._measure(name, depth) + self._measure(item, depth + 1) + 2
        elif isinstance(value, list | tuple):
            for item in value:
                size += self._measure(item, depth + 1) + 1
        else:
            raise ValueError("a transcript entry is not JSON-encodable")
        if size > PIECE:
            self._long.add(id(value))
        return size

    def pieces(self) -> Iterator[bytes]:
        """The ``\\n``-terminated UTF-8 lines, in pieces of about
        :data:`PIECE` bytes (a fresh spelling each call)."""
        held: list[bytes] = []
        size = 0
        for entry in self._entries:
            for piece in chain(self._spell(entry), (b"\n",)):
                held.append(piece)
                size += len(piece)
                if size >= PIECE:
                    yield b"".join(held)
                    held, size = [], 0
        if held:
            yield b"".join(held)

    def _spell(self, value: Any) -> Iterator[bytes]:
        if isinstance(value, str) and len(value) > PIECE:
            yield b'"'
            for start in range(0, len(value), PIECE):
                yield encode_value(value[start : start + PIECE])[1:-1]
            yield b'"'
        elif id(value) not in self._long:
            yield encode_value(value)
        elif isinstance(value, dict):
            yield b"{"
            for number, (name, item) in enumerate(value.items()):
                yield (b"," if number else b"") + encode_value(name) + b":"
                yield from self._spell(item)
            yield b"}"
        else:
            yield b"["
            for number, item in enumerate(value):
                if number:
                    yield b","
                yield from self._spell(item)
            yield b"]"


def encode_entries(entries: Sequence[Mapping[str, Any]]) -> EncodedBatch:
    """The batch, checked to read back identically (raises ``ValueError``
    otherwise), to be spelled by :meth:`EncodedBatch.pieces`."""
    return EncodedBatch(entries)


def first_refused(entries: Sequence[Mapping[str, Any]], admit: Admit | None) -> int | None:
    """DEC-AUTH-6: the index of the first entry ``admit`` refuses, ``None``
    when it admits them all or is ``None`` (raises ``ValueError`` as
    :func:`encode_entries` for a batch that would not read back). For
    entries stored other than through an appender (a copy read back from
    elsewhere), checked before anything of them is stored: one pass over the
    whole batch, entry by entry only to name a refused one (a literal only
    the joined lines spell names the first)."""
    batch = encode_entries(entries)
    if admit is None or admit(batch.pieces()):
        return None
    return next(
        (i for i, entry in enumerate(entries) if not admit(encode_entries((entry,)).pieces())),
        0,
    )


def parse_transcript(data: bytes) -> tuple[tuple[FrozenDict, ...], int | None]:
    """Decode transcript bytes into entries.

    Returns the entries and, when the last line is torn (no final newline,
    or undecodable), the byte length of the intact prefix; else ``None``.
    Raises :class:`SessionCorrupt` for an undecodable line before the last.
    """
    lines = data.split(b"\n")
    # The piece after the last newline: empty for a well-formed file.
    tail = lines.pop()
    entries: list[FrozenDict] = []
    offset = 0
    last = len(lines) - 1
    for number, line in enumerate(lines):
        try:
            entry = loads_strict(line)
        except StrictJSONError as error:
            if number == last and not tail:
                return tuple(entries), offset
            raise SessionCorrupt(f"transcript line {number + 1}: {error.reason}") from None
        if not isinstance(entry, FrozenDict):
            raise SessionCorrupt(f"transcript line {number + 1}: not a JSON object")
        entries.append(entry)
        offset += len(line) + 1
    return tuple(entries), (offset if tail else None)
