"""Slash commands in user text (DEC-TURN-1; DECISIONS section 11).

Sans-IO: :func:`parse` recognises a command in an admitted ``user`` record and
the ``render_*`` functions turn session data into the text of its
``system/local_command_output``. Running a command (the compaction call,
``/clear``'s new session) belongs to the turn engine.

Decisions where the spec is silent:

- A command is a record whose whole content is one text part starting with
  ``/`` followed by a known name. ``/compact`` takes free-text instructions;
  the others take none, so ``/help me with X`` is ordinary prompt text.
- Anything else that starts with ``/`` (``/foo``, ``/etc/hosts is odd``) is
  ordinary prompt text sent to the model, as Claude Code does with names it
  does not know.
- The list below, in this order, is ``system/init`` ``slash_commands``
  (names) and the initialize response's ``commands``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from msgspec import Struct

from agentx.messages.inbound_user import TextPart, UserRecord

CommandName = Literal["compact", "context", "cost", "clear", "help"]


class CommandSpec(Struct, frozen=True, kw_only=True):
    name: CommandName
    description: str
    argument_hint: str = ""

    def to_wire(self) -> dict[str, str]:
        """One element of the initialize response's ``commands``."""
        return {
            "name": self.name,
            "description": self.description,
            "argumentHint": self.argument_hint,
        }


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        name="compact",
        description="Summarize the conversation so far and keep the latest turn verbatim",
        argument_hint="<optional summarization instructions>",
    ),
    CommandSpec(name="context", description="Show the context window usage"),
    CommandSpec(name="cost", description="Show the session's token usage and cost"),
    CommandSpec(name="clear", description="Start a new session with an empty context"),
    CommandSpec(name="help", description="List the slash commands"),
)

_BY_NAME: dict[str, CommandSpec] = {spec.name: spec for spec in COMMANDS}


class SlashCommand(Struct, frozen=True, kw_only=True):
    name: CommandName
    arguments: str = ""


def parse(record: UserRecord) -> SlashCommand | None:
    """The command ``record`` asks for, or ``None`` for an ordinary prompt."""
    if len(record.content) != 1 or not isinstance(record.content[0], TextPart):
        return None
    text = record.content[0].text.strip()
    if not text.startswith("/"):
        return None
    name, _, arguments = text[1:].partition(" ")
    spec = _BY_NAME.get(name)
    if spec is None:
        return None
    arguments = arguments.strip()
    if arguments and not spec.argument_hint:
        return None
    return SlashCommand(name=spec.name, arguments=arguments)


def render_help() -> str:
    lines = ["Slash commands:"]
    for spec in COMMANDS:
        usage = f"/{spec.name} {spec.argument_hint}".rstrip()
        lines.append(f"  {usage} - {spec.description}")
    return "\n".join(lines)


def render_context(usage: Mapping[str, Any]) -> str:
    """``/context``: the ``get_context_usage`` payload as text."""
    lines = [
        f"Context usage for {usage['model']}: {usage['totalTokens']} of "
        f"{usage['maxTokens']} tokens ({usage['percentage']}%)"
    ]
    for category in usage["categories"]:
        lines.append(f"  {category['name']}: {category['tokens']} tokens")
    return "\n".join(lines)


def render_cost(
    *,
    total_cost_usd: float | None,
    api_seconds: float,
    model_usage: Mapping[str, Mapping[str, Any]],
) -> str:
    """``/cost``: the session's totals (WIRE-012: unknown cost stays unknown)."""
    cost = "unknown" if total_cost_usd is None else f"${total_cost_usd:.4f}"
    lines = [f"Total cost: {cost}", f"Total API duration: {api_seconds:.1f}s"]
    if not model_usage:
        lines.append("Usage: no model calls yet")
    for model, usage in model_usage.items():
        lines.append(
            f"Usage ({model}): {usage['inputTokens']} input, {usage['outputTokens']} output, "
            f"{usage['cacheReadInputTokens']} cache read, "
            f"{usage['cacheCreationInputTokens']} cache write tokens"
        )
    return "\n".join(lines)
