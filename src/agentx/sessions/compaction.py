"""Running a compaction against the provider (WIRE-005).

The turn engine decides when (``/compact``, or automatically past 80% of the
window, :mod:`agentx.messages.compaction`); this module builds the one
summary request (a fixed instruction after the history being summarized, no
tools) and reads its stream. A failed or empty summary raises
:class:`CompactionFailed` and the caller leaves its history untouched.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentx.messages.compaction import HistoryItem
from agentx.providers.base import (
    Message,
    ModelRequest,
    ProviderError,
    Stop,
    TextBlock,
    TextDelta,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)

SUMMARY_SYSTEM = (
    "You write the summary that replaces the earlier part of a conversation between "
    "a user and a coding agent, so the conversation can continue in a smaller context."
)
SUMMARY_INSTRUCTION = (
    "Summarize the conversation above for the agent that will continue it: the user's "
    "goals and requests, decisions made, files and commands involved with their outcomes, "
    "errors met and how they were resolved, and the work still pending. Reply with the "
    "summary only."
)
#: The summary message opens the compacted history (the preserved segment's anchor).
SUMMARY_PREFIX = "This session continues an earlier conversation, summarized here:\n\n"


class CompactionFailed(Exception):
    """The summary could not be obtained; the message is credential-free."""


def history_items(ids: Sequence[str], messages: Sequence[Message]) -> tuple[HistoryItem, ...]:
    """What the planner needs to know about each message."""
    return tuple(
        HistoryItem(
            id=ident,
            role=message.role,
            tool_use_ids=tuple(b.id for b in message.content if isinstance(b, ToolUseBlock)),
            tool_result_ids=tuple(
                b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)
            ),
        )
        for ident, message in zip(ids, messages, strict=True)
    )


def summary_request(
    *, model: str, effort: str | None, summarized: Sequence[Message], instructions: str
) -> ModelRequest:
    """One model call: the summarized history, then the fixed instruction
    (and ``/compact``'s own instructions, when given)."""
    instruction = SUMMARY_INSTRUCTION
    if instructions:
        instruction = f"{instruction}\n\nAdditional instructions: {instructions}"
    return ModelRequest(
        model=model,
        system=SUMMARY_SYSTEM,
        messages=(*summarized, Message(role="user", content=(TextBlock(text=instruction),))),
        tools=(),
        effort=effort,
        stream_events=False,
    )


def stream_usage(items: Iterable[object]) -> Usage | None:
    """The usage a summary stream reported (the last one), if any."""
    usage = None
    for item in items:
        if isinstance(item, Usage):
            usage = item
    return usage


def read_summary(items: Iterable[object]) -> str:
    """Collect the summary text; a provider error, a length stop or an empty
    summary is :class:`CompactionFailed`."""
    text: list[str] = []
    stop: str | None = None
    for item in items:
        if isinstance(item, TextDelta):
            text.append(item.text)
        elif isinstance(item, Stop):
            stop = item.stop_reason
        elif isinstance(item, ProviderError):
            raise CompactionFailed(f"{item.category}: {item.message}")
    summary = "".join(text).strip()
    if stop == "max_tokens":
        raise CompactionFailed("max_output_tokens: the summary reached the output token limit")
    if not summary:
        raise CompactionFailed("the provider returned an empty summary")
    return summary


def summary_message(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=SUMMARY_PREFIX + text),))
