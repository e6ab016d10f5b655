"""Every ``tool_use`` has exactly one ``tool_result`` (spec "Ordering", hard-interrupt order).

A provider rejects a conversation in which an assistant message's tool use is
not answered by a ``tool_result`` in the message right after it. A turn that
failed between the two (an older agentx, a tool that raised, a crash) can
leave such a history on disk, and every later request would then be refused.
:func:`pair_tool_uses` is the repair a resume applies (and the turn engine
after a failed turn): pure, no IO.

- An answer that is missing gets an error ``tool_result`` saying the tool was
  not run (:data:`NOT_RUN`), placed with the other results of that message
  in the user message that follows it, results first, in the order the model
  asked; that message keeps its other blocks.
- A second answer to the same tool use in that message is dropped.
- When no user message follows (the unanswered message is the last one, or
  another assistant message comes next) the answers are a new user message
  inserted right after it; :attr:`Paired.inserted` names where.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from msgspec import Struct

from agentx.providers.base import Block, Message, ToolResultBlock, ToolUseBlock

#: The content of a synthesized answer.
NOT_RUN: Final = "Tool not run: the turn that asked for it ended before its result"


class Paired(Struct, frozen=True, kw_only=True):
    """The repaired conversation: ``messages`` in the input's order, some user
    messages rewritten and new ones inserted at the ``inserted`` positions;
    ``repaired`` counts the synthesized results."""

    messages: tuple[Message, ...]
    inserted: tuple[int, ...]
    repaired: int


def _uses(message: Message) -> tuple[str, ...]:
    if message.role != "assistant":
        return ()
    return tuple(b.id for b in message.content if isinstance(b, ToolUseBlock))


def _answered(ids: tuple[str, ...], reply: Message | None, reason: str) -> tuple[Message, int]:
    """The user message answering ``ids``: ``reply``'s blocks with every
    missing result synthesized and duplicates dropped; how many were missing."""
    results: dict[str, ToolResultBlock] = {}
    others: list[Block] = []
    for block in reply.content if reply is not None else ():
        if isinstance(block, ToolResultBlock) and block.tool_use_id in ids:
            results.setdefault(block.tool_use_id, block)
        else:
            others.append(block)
    missing = [i for i in ids if i not in results]
    for tool_use_id in missing:
        results[tool_use_id] = ToolResultBlock(
            tool_use_id=tool_use_id, content=reason, is_error=True
        )
    ordered = tuple(results[i] for i in ids)
    return Message(role="user", content=(*ordered, *others)), len(missing)


def _intact(ids: tuple[str, ...], reply: Message) -> bool:
    """Whether ``reply`` already answers each id exactly once, results first."""
    head = reply.content[: len(ids)]
    if tuple(getattr(b, "tool_use_id", None) for b in head) != ids:
        return False
    return not any(
        isinstance(b, ToolResultBlock) and b.tool_use_id in ids for b in reply.content[len(ids) :]
    )


def pair_tool_uses(messages: Sequence[Message], reason: str = NOT_RUN) -> Paired:
    """Repair ``messages`` so every tool use is answered exactly once (see the module)."""
    out: list[Message] = []
    inserted: list[int] = []
    repaired = 0
    pending: tuple[str, ...] = ()  # the uses of the message just copied
    for given in messages:
        message = given
        if pending:
            if message.role == "user":
                if not _intact(pending, message):
                    message, count = _answered(pending, message, reason)
                    repaired += count
            else:
                answer, count = _answered(pending, None, reason)
                inserted.append(len(out))
                out.append(answer)
                repaired += count
        out.append(message)
        pending = _uses(message)
    if pending:
        answer, count = _answered(pending, None, reason)
        inserted.append(len(out))
        out.append(answer)
        repaired += count
    return Paired(messages=tuple(out), inserted=tuple(inserted), repaired=repaired)
