"""Compaction decisions and resume relinking (WIRE-005, DEC-AUTH-2 ``context_window``; spec
"System and lifecycle events": ``system/compact_boundary``).

Sans-IO: the caller describes its history (one :class:`HistoryItem` per
message, with the message's id), its context estimate and the profile's
window; this core says when automatic compaction triggers, which part is
summarized and which recent segment is preserved verbatim, and shapes the
boundary's ``compact_metadata``. :func:`relink` rebuilds a resumed history
from transcript entries.

What the preserved segment's ids mean in agentx (Claude Code's
``compact_metadata.preserved_segment`` names):

- ``head_uuid``: the first preserved message (the newest user prompt).
- ``tail_uuid``: the last message of the history when compaction ran.
- ``anchor_uuid``: the summary message that replaces everything before the
  head; the preserved segment follows it.

After compaction the history is ``[summary, head .. tail]``. The preserved
messages are already in the transcript (written before the boundary), so the
boundary entry does not copy them: on resume :func:`relink` replaces the
history built so far by the summary and the exact entries from ``head`` to
``tail`` spliced after the anchor, then keeps appending what follows the
boundary (WIRE-005).
"""

from __future__ import annotations

import uuid as uuid_module
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.session_ledger import LEDGER_ENTRIES

Trigger = Literal["manual", "auto"]

#: Automatic compaction runs before a model call once the context estimate
#: passes this share of the profile's window (DEC-AUTH-2).
AUTO_COMPACT_PERCENT = 80

#: Transcript entry types (see :mod:`agentx.sessions.transcript`).
MESSAGE_ENTRY = "message"
BOUNDARY_ENTRY = "compact_boundary"

#: Ids for message entries written before entries carried a ``uuid``: derived
#: from the line number, so every read of one transcript agrees on them.
_LEGACY_IDS = uuid_module.UUID("6f1d2f8e-3c1a-4d8e-9a57-0d6c1f6b2a10")


class RelinkError(ValueError):
    """A transcript whose boundaries do not name a segment it holds."""


class HistoryItem(Struct, frozen=True, kw_only=True):
    """The shape of one history message the planner needs."""

    id: str
    role: Literal["user", "assistant"]
    tool_use_ids: tuple[str, ...] = ()
    tool_result_ids: tuple[str, ...] = ()

    @property
    def is_prompt(self) -> bool:
        """A user message that answers no tool use: a prompt starting a turn."""
        return self.role == "user" and not self.tool_result_ids


class PreservedSegment(Struct, frozen=True, kw_only=True):
    head_uuid: str
    anchor_uuid: str
    tail_uuid: str

    def to_wire(self) -> FrozenDict:
        return FrozenDict(
            head_uuid=self.head_uuid, anchor_uuid=self.anchor_uuid, tail_uuid=self.tail_uuid
        )


class CompactionPlan(Struct, frozen=True, kw_only=True):
    """``history[:summarized]`` becomes the summary; the rest is preserved."""

    summarized: int
    preserved: int

    def segment(self, items: Sequence[HistoryItem], *, anchor_uuid: str) -> PreservedSegment | None:
        if not self.preserved:
            return None
        return PreservedSegment(
            head_uuid=items[self.summarized].id, anchor_uuid=anchor_uuid, tail_uuid=items[-1].id
        )


class CompactBoundary(Struct, frozen=True, kw_only=True):
    """The data of one ``system/compact_boundary`` and its transcript entry."""

    trigger: Trigger
    pre_tokens: int
    preserved_segment: PreservedSegment | None

    def metadata(self) -> FrozenDict:
        """``compact_metadata`` (Claude Code's member names)."""
        members: dict[str, Any] = {"trigger": self.trigger, "pre_tokens": self.pre_tokens}
        if self.preserved_segment is not None:
            members["preserved_segment"] = self.preserved_segment.to_wire()
        return FrozenDict(members)


def should_auto_compact(*, estimate: int, window: int) -> bool:
    """DEC-AUTH-2: strictly more than 80% of the window (exactly 80% does not)."""
    return estimate * 100 > window * AUTO_COMPACT_PERCENT


def plan(items: Sequence[HistoryItem]) -> CompactionPlan | None:
    """Choose the preserved segment: the newest prompt and everything after it.

    The head is the newest prompt with something before it to summarize and
    no tool result after it answering a tool use before it, so a
    ``tool_use`` is never separated from its ``tool_result``. Without such a
    prompt the whole history is summarized and nothing is preserved. An
    empty history has nothing to compact (``None``).
    """
    if not items:
        return None
    used_at = {use: index for index, item in enumerate(items) for use in item.tool_use_ids}
    # The earliest tool use answered by a result at or after ``index``.
    earliest_answered = len(items)
    for index in range(len(items) - 1, 0, -1):
        item = items[index]
        for answered in item.tool_result_ids:
            earliest_answered = min(earliest_answered, used_at.get(answered, index))
        if item.is_prompt and earliest_answered >= index:
            return CompactionPlan(summarized=index, preserved=len(items) - index)
    return CompactionPlan(summarized=len(items), preserved=0)


def relink(entries: Iterable[Mapping[str, Any]]) -> tuple[FrozenDict, ...]:
    """WIRE-005: the message entries of a resumed history, in order.

    A ``compact_boundary`` entry replaces the history read so far by its
    ``summary`` message entry (the anchor) followed by the exact entries
    from ``head_uuid`` to ``tail_uuid``; without a preserved segment the
    summary alone remains. Message entries lacking a ``uuid`` (older
    transcripts) get one derived from their line number.
    """
    chain: list[FrozenDict] = []
    for line, entry in enumerate(entries, start=1):
        kind = entry.get("type")
        if kind == MESSAGE_ENTRY:
            chain.append(_with_id(entry, line))
        elif kind == BOUNDARY_ENTRY:
            chain = _splice(chain, entry, line)
        elif kind in LEDGER_ENTRIES:
            continue  # bookkeeping, never prior context (agentx.messages.session_ledger)
        else:
            raise RelinkError(f"transcript line {line}: unknown entry type")
    return tuple(chain)


def _with_id(entry: Mapping[str, Any], line: int) -> FrozenDict:
    if isinstance(entry.get("uuid"), str):
        return entry if isinstance(entry, FrozenDict) else _frozen(entry)
    return _frozen({**entry, "uuid": str(uuid_module.uuid5(_LEGACY_IDS, str(line)))})


def _frozen(entry: Mapping[str, Any]) -> FrozenDict:
    return FrozenDict((key, freeze(value)) for key, value in entry.items())


def _splice(chain: list[FrozenDict], boundary: Mapping[str, Any], line: int) -> list[FrozenDict]:
    summary = boundary.get("summary")
    metadata = boundary.get("compact_metadata")
    if not isinstance(summary, Mapping) or summary.get("type") != MESSAGE_ENTRY:
        raise RelinkError(f"transcript line {line}: a boundary without its summary")
    if not isinstance(metadata, Mapping):
        raise RelinkError(f"transcript line {line}: a boundary without compact_metadata")
    anchor = _with_id(summary, line)
    segment = metadata.get("preserved_segment")
    if segment is None:
        return [anchor]
    if not isinstance(segment, Mapping) or segment.get("anchor_uuid") != anchor["uuid"]:
        raise RelinkError(f"transcript line {line}: the preserved segment names another anchor")
    ids = [entry["uuid"] for entry in chain]
    try:
        head = ids.index(segment.get("head_uuid"))
        tail = ids.index(segment.get("tail_uuid"), head)
    except ValueError:
        raise RelinkError(
            f"transcript line {line}: the preserved segment is not in the transcript"
        ) from None
    return [anchor, *chain[head : tail + 1]]
