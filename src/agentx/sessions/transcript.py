"""Conversation history <-> durable transcript entries (DEC-STORE-1, WIRE-005).

Each history message becomes one JSONL entry ``{"type":"message","uuid":ID,
"role":R,"content":[blocks]}``; the id names the message in a compaction
boundary. A compaction appends one ``{"type":"compact_boundary","uuid":ID,
"compact_metadata":{...},"summary":{message entry}}`` entry, and reading back
relinks the history around it (WIRE-005, :func:`agentx.messages.compaction.relink`).
Attachments are stored as their manifest (WIRE-022: no
bytes) and reloaded from the content-addressed blob store on resume. Entries
read back are prior context only: nothing here executes a tool (resume never
replays a historical tool call).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from msgspec import Struct

from agentx.messages.compaction import (
    BOUNDARY_ENTRY,
    MESSAGE_ENTRY,
    CompactBoundary,
    RelinkError,
    relink,
)
from agentx.messages.frozen import FrozenDict, freeze
from agentx.providers.base import (
    Block,
    MediaBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)


class TranscriptError(ValueError):
    """An entry that is not a history message this version understands."""


class Recorded(Struct, frozen=True, kw_only=True):
    """A history message and the id its transcript entry carries."""

    uuid: str
    message: Message


def to_entries(records: Iterable[Recorded]) -> list[dict[str, Any]]:
    return [_message_entry(record) for record in records]


def _message_entry(record: Recorded) -> dict[str, Any]:
    return {
        "type": MESSAGE_ENTRY,
        "uuid": record.uuid,
        "role": record.message.role,
        "content": [_block(b) for b in record.message.content],
    }


def boundary_entry(*, uuid: str, boundary: CompactBoundary, summary: Recorded) -> dict[str, Any]:
    """The transcript entry of one compaction: its metadata and the summary
    message (the anchor of the preserved segment)."""
    return {
        "type": BOUNDARY_ENTRY,
        "uuid": uuid,
        "compact_metadata": boundary.metadata(),
        "summary": _message_entry(summary),
    }


def _block(block: Block) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ThinkingBlock):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinkingBlock):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolResultBlock):
        return {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": block.content,
            "is_error": block.is_error,
        }
    return {
        "type": "attachment_ref",
        "kind": block.kind,
        "name": block.name,
        "mime_type": block.mime_type,
        "size_bytes": block.size_bytes,
        "sha256": block.sha256,
        "storage_id": f"blob_sha256_{block.sha256}",
    }


def from_entries(
    entries: Iterable[Mapping[str, Any]], read_blob: Callable[[str], bytes]
) -> list[Recorded]:
    """Rebuild the history, relinked across compaction boundaries (WIRE-005);
    raises :class:`TranscriptError` on an entry this version does not read."""
    try:
        chain = relink(entries)
    except RelinkError as exc:
        raise TranscriptError(str(exc)) from None
    records = []
    for entry in chain:
        if entry.get("role") not in ("user", "assistant"):
            raise TranscriptError("transcript entry is not a history message")
        content = tuple(_from_block(b, read_blob) for b in entry.get("content", ()))
        message = Message(role=entry["role"], content=content)
        records.append(Recorded(uuid=entry["uuid"], message=message))
    return records


def _from_block(block: Mapping[str, Any], read_blob: Callable[[str], bytes]) -> Block:
    kind = block.get("type")
    try:
        if kind == "text":
            return TextBlock(text=block["text"])
        if kind == "thinking":
            return ThinkingBlock(thinking=block["thinking"], signature=block["signature"])
        if kind == "redacted_thinking":
            return RedactedThinkingBlock(data=block["data"])
        if kind == "tool_use":
            input_value: FrozenDict = freeze(block["input"])
            return ToolUseBlock(id=block["id"], name=block["name"], input=input_value)
        if kind == "tool_result":
            return ToolResultBlock(
                tool_use_id=block["tool_use_id"],
                content=block["content"],
                is_error=bool(block["is_error"]),
            )
        if kind == "attachment_ref":
            return MediaBlock(
                kind=block["kind"],
                mime_type=block["mime_type"],
                name=block["name"],
                data=read_blob(block["storage_id"]),
                sha256=block["sha256"],
                size_bytes=block["size_bytes"],
            )
    except KeyError:
        raise TranscriptError("transcript block is missing a member") from None
    raise TranscriptError("unknown transcript block type")
