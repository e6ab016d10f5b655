"""Transcript entries as bytes: one JSON object per ``\\n``-terminated line.

The transcript is the append-only conversation (user, assistant, tool
results, compaction boundaries, committed attachment manifests). A batch is
encoded only if the strict reader reads it back identically; reading splits
on the byte ``\\n`` alone and decodes with the strict decoder (DECISIONS
section 1). A crash leaves a readable prefix: a torn last line (no final
newline, or undecodable) is reported, never parsed as data; an undecodable
line before the last is :class:`~agentx.sessions.store.errors.SessionCorrupt`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from msgspec import Struct

from agentx.messages.frozen import FrozenDict
from agentx.messages.strict_json import StrictJSONError, loads_strict
from agentx.sessions.store.errors import SessionCorrupt
from agentx.sessions.store.header import SessionHeader

#: Checks one encoded batch: True when it may be persisted (the output
#: guard's credential validator, :class:`agentx.messages.guard.CredentialValidator`).
Admit = Callable[[bytes], bool]


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


def encode_entries(entries: Sequence[Mapping[str, Any]]) -> bytes:
    """The batch as ``\\n``-terminated UTF-8 lines, refusing anything the
    strict reader would not read back identically (non-finite numbers, lone
    surrogates, non-string or colliding member names)."""
    lines: list[bytes] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise ValueError("a transcript entry must be a JSON object")
        try:
            line = json.dumps(
                entry, ensure_ascii=False, allow_nan=False, separators=(",", ":")
            ).encode("utf-8")
        except (TypeError, ValueError, RecursionError):
            raise ValueError("a transcript entry is not JSON-encodable") from None
        try:
            loads_strict(line)
        except StrictJSONError as error:
            raise ValueError(f"a transcript entry would not read back: {error.reason}") from None
        lines.append(line)
    lines.append(b"")
    return b"\n".join(lines)


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
