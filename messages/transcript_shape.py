"""The shape of a stored transcript entry, checked before a resume reads it
(DEC-STORE-1: a stored entry this version cannot replay is a start-up
error, exit 2, naming the session and the entry's place).

A SANS-IO core: :func:`entry_problem` says what is wrong with one decoded
entry (a member missing or of the wrong JSON type), or ``None`` when the
replay (:func:`agentx.sessions.transcript.from_entries`, and
:func:`agentx.messages.compaction.relink` before it) can read it;
:func:`first_problem` finds the first such entry. The problems spell only the
format's own member names and JSON types, never a stored value (an entry may
hold anything, credentials included).

The shapes (``agentx.sessions.transcript`` writes them):

- ``{"type": "message", "uuid"?: str, "role": "user"|"assistant",
  "content": [block, ...]}`` (``uuid`` is absent in older transcripts);
- ``{"type": "compact_boundary", "uuid"?: str, "compact_metadata": {...,
  "preserved_segment"?: null | {"anchor_uuid", "head_uuid", "tail_uuid": str}},
  "summary": message}``;
- blocks: ``text`` (``text``: str), ``tool_use`` (``id``, ``name``: str,
  ``input``: object), ``tool_result`` (``tool_use_id``, ``content``: str,
  ``is_error``: bool), ``thinking`` (``thinking``, ``signature``: str),
  ``redacted_thinking`` (``data``: str), ``attachment_ref`` (``kind``: "image"|"document",
  ``mime_type``, ``name``, ``sha256``, ``storage_id``: str, ``size_bytes``:
  a whole number, not negative);
- ``{"type": "resume_point", "uuid": str, "at": str}``: a cut made by
  ``--resume-session-at`` without a fork (:mod:`agentx.messages.resume_point`);
- ``{"type": "turn", ...}`` and ``{"type": "permission", ...}``: the session
  ledger's entries, checked by its own readers
  (:func:`agentx.messages.session_ledger.read_turn`, ``read_decision``);
- ``{"type": "sidechain", "agent_id", "agent_type", "parent_tool_use_id": str,
  "message": message}``: a subagent's message (DEC-TURN-3), never replayed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentx.messages.resume_point import RESUME_POINT
from agentx.messages.session_ledger import (
    PERMISSION_ENTRY,
    SIDECHAIN_ENTRY,
    TURN_ENTRY,
    LedgerError,
    read_decision,
    read_turn,
)

#: Entry and block types this version replays.
MESSAGE = "message"
BOUNDARY = "compact_boundary"
ROLES = ("user", "assistant")
MEDIA_KINDS = ("image", "document")

#: Each block type's members and the JSON type each must have.
_STR = "a string"
_OBJECT = "an object"
_BOOL = "true or false"
_COUNT = "a whole number not below 0"
_BLOCKS: dict[str, dict[str, str]] = {
    "text": {"text": _STR},
    "tool_use": {"id": _STR, "name": _STR, "input": _OBJECT},
    "tool_result": {"tool_use_id": _STR, "content": _STR, "is_error": _BOOL},
    # DEC-CLI-5: signed thinking, sent back unchanged after a resume.
    "thinking": {"thinking": _STR, "signature": _STR},
    "redacted_thinking": {"data": _STR},
    "attachment_ref": {
        "kind": _STR,
        "mime_type": _STR,
        "name": _STR,
        "sha256": _STR,
        "storage_id": _STR,
        "size_bytes": _COUNT,
    },
}
_SEGMENT = ("anchor_uuid", "head_uuid", "tail_uuid")


def _json_type(value: Any) -> str:
    """The JSON type of a decoded value, for a problem's text."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    return "an array"


def _fits(value: Any, wanted: str) -> bool:
    if wanted == _STR:
        return isinstance(value, str)
    if wanted == _OBJECT:
        return isinstance(value, Mapping)
    if wanted == _BOOL:
        return isinstance(value, bool)
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _member(entry: Mapping[str, Any], name: str, wanted: str, where: str) -> str | None:
    if name not in entry:
        return f"{where} has no {name!r}"
    value = entry[name]
    if not _fits(value, wanted):
        return f"{where}'s {name!r} is {_json_type(value)}, not {wanted}"
    return None


def _block_problem(block: Any, where: str) -> str | None:
    if not isinstance(block, Mapping):
        return f"{where} is {_json_type(block)}, not an object"
    kind = block.get("type")
    members = _BLOCKS.get(kind) if isinstance(kind, str) else None
    if members is None:
        return f"{where} has no known 'type'"
    for name, wanted in members.items():
        if (problem := _member(block, name, wanted, where)) is not None:
            return problem
    if kind == "attachment_ref" and block["kind"] not in MEDIA_KINDS:
        return f"{where}'s 'kind' is not one of {', '.join(MEDIA_KINDS)}"
    return None


def _message_problem(entry: Mapping[str, Any], where: str) -> str | None:
    if "uuid" in entry and not isinstance(entry["uuid"], str):
        return f"{where}'s 'uuid' is {_json_type(entry['uuid'])}, not a string"
    if entry.get("role") not in ROLES:
        return f"{where}'s 'role' is not one of {', '.join(ROLES)}"
    content = entry.get("content")
    if not isinstance(content, Sequence) or isinstance(content, str | Mapping):
        return f"{where}'s 'content' is {_json_type(content)}, not an array"
    for number, block in enumerate(content):
        if (problem := _block_problem(block, f"{where}'s block {number}")) is not None:
            return problem
    return None


def _boundary_problem(entry: Mapping[str, Any]) -> str | None:
    if "uuid" in entry and not isinstance(entry["uuid"], str):
        return f"the boundary's 'uuid' is {_json_type(entry['uuid'])}, not a string"
    summary = entry.get("summary")
    if not isinstance(summary, Mapping) or summary.get("type") != MESSAGE:
        return "the boundary's 'summary' is not a message"
    if (problem := _message_problem(summary, "the summary")) is not None:
        return problem
    metadata = entry.get("compact_metadata")
    if not isinstance(metadata, Mapping):
        return f"the boundary's 'compact_metadata' is {_json_type(metadata)}, not an object"
    segment = metadata.get("preserved_segment")
    if segment is None:
        return None
    if not isinstance(segment, Mapping):
        return f"the boundary's 'preserved_segment' is {_json_type(segment)}, not an object"
    for name in _SEGMENT:
        if (problem := _member(segment, name, _STR, "the preserved segment")) is not None:
            return problem
    return None


def _sidechain_problem(entry: Mapping[str, Any]) -> str | None:
    """DEC-TURN-3: a subagent's message; only its shape is checked (it is
    never replayed)."""
    for name in ("agent_id", "agent_type", "parent_tool_use_id"):
        if (problem := _member(entry, name, _STR, "the sidechain entry")) is not None:
            return problem
    message = entry.get("message")
    if not isinstance(message, Mapping) or message.get("type") != MESSAGE:
        return "the sidechain entry's 'message' is not a message entry"
    return _message_problem(message, "the sidechain's message")


def entry_problem(entry: Any) -> str | None:
    """What keeps ``entry`` from being replayed, or ``None``."""
    if not isinstance(entry, Mapping):
        return f"the entry is {_json_type(entry)}, not an object"
    kind = entry.get("type")
    if kind == MESSAGE:
        return _message_problem(entry, "the message")
    if kind == BOUNDARY:
        return _boundary_problem(entry)
    if kind == RESUME_POINT:
        for name in ("uuid", "at"):
            if (problem := _member(entry, name, _STR, "the resume point")) is not None:
                return problem
        return None
    if kind == SIDECHAIN_ENTRY:
        return _sidechain_problem(entry)
    if kind in (TURN_ENTRY, PERMISSION_ENTRY):
        try:
            (read_turn if kind == TURN_ENTRY else read_decision)(entry)
        except LedgerError as exc:
            return str(exc)
        return None
    return "the entry has no known 'type'"


def first_problem(entries: Iterable[Any]) -> tuple[int, str] | None:
    """The index (from 0) of the first entry that cannot be replayed, and
    what is wrong with it; ``None`` when every entry can be."""
    for index, entry in enumerate(entries):
        if (problem := entry_problem(entry)) is not None:
            return index, problem
    return None
