"""Prior context from the host (spec "Input records", WIRE-017).

Replayed ``assistant`` records and ``user`` records with ``isReplay: true``
seed the conversation; they never execute a historical tool call and never
start a turn. Only their text is kept: a historical ``tool_use`` has no
``tool_result`` on this side, and a provider rejects an unanswered one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentx.messages.inbound import PriorContextRecord
from agentx.messages.inbound_user import TextPart, UserRecord
from agentx.providers.base import Message, TextBlock


def prior_message(record: PriorContextRecord | UserRecord) -> Message | None:
    """The history entry a replayed record contributes, if any."""
    if isinstance(record, UserRecord):
        texts = tuple(TextBlock(text=p.text) for p in record.content if isinstance(p, TextPart))
        return Message(role="user", content=texts) if texts else None
    if record.type != "assistant":
        return None
    message = record.raw.get("message")
    if not isinstance(message, Mapping):
        return None
    content = message.get("content")
    blocks = tuple(TextBlock(text=t) for t in _texts(content))
    return Message(role="assistant", content=blocks) if blocks else None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, tuple):
        return []
    return [
        block["text"]
        for block in content
        if isinstance(block, Mapping)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
