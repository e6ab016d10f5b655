"""``system/post_turn_summary`` built deterministically from one turn (WIRE-004;
spec "System and lifecycle events" row: summarized UUID, status
category, title/detail/description, recent action, needed action, noteworthy
flag and artifact URLs; field names are Claude Code's).

No model call: every member is derived from facts the turn runner observed.
Two moments produce one: the end of each turn (:func:`build`) and a
permission prompt opening mid-turn (:func:`build_blocked`, as Claude Code
reports a blocked session).

- ``status_category`` from the result: ``completed`` on success, ``blocked``
  when a limit stopped the turn (max turns, max budget) and while a
  permission prompt is pending (``needs_action`` then names it), ``waiting``
  after an interrupt (the user is the next actor), ``failed`` on any other
  error.
- ``title`` is the prompt's first non-blank line; ``description`` the prompt
  with whitespace collapsed; ``status_detail`` the result text's first line
  or the first error.
- ``recent_action`` is the turn's last tool-use summary (empty when no tool ran).
- ``is_noteworthy`` is true exactly when the result is an error.
- ``artifact_urls`` is always empty: agentx publishes no artifacts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from msgspec import Struct

from agentx.messages import outbound
from agentx.messages.frozen import FrozenDict
from agentx.messages.outbound import PostTurnStatus, ResultSubtype

MAX_TITLE_CHARS: Final = 80
MAX_TEXT_CHARS: Final = 300
#: The engine's error text for an interrupted turn (``agentx.turns.results.INTERRUPTED``).
INTERRUPTED: Final = "Interrupted by user"
_LIMIT_SUBTYPES: Final = frozenset({"error_max_turns", "error_max_budget_usd"})


class TurnFacts(Struct, frozen=True, kw_only=True):
    """What the turn runner observed of one finished turn."""

    prompt: str
    result_uuid: str
    subtype: ResultSubtype
    result_text: str
    errors: tuple[str, ...]
    #: The uuid of the turn's last ``assistant`` record, if any was written.
    last_assistant_uuid: str | None = None
    #: The turn's last ``tool_use_summary`` text, if a tool ran.
    last_tool_summary: str | None = None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_category(facts: TurnFacts) -> PostTurnStatus:
    if facts.subtype == "success":
        return "completed"
    if facts.subtype in _LIMIT_SUBTYPES:
        return "blocked"
    if INTERRUPTED in facts.errors:
        return "waiting"
    return "failed"


def build(facts: TurnFacts, *, session_id: str, new_uuid: Callable[[], str]) -> FrozenDict:
    """The summary record for ``facts`` (same facts, same members but ``uuid``)."""
    category = status_category(facts)
    is_error = facts.subtype != "success"
    detail = _first_line(facts.errors[0]) if is_error and facts.errors else ""
    if not is_error:
        detail = _first_line(facts.result_text)
    return outbound.post_turn_summary(
        summarizes_uuid=facts.last_assistant_uuid or facts.result_uuid,
        status_category=category,
        status_detail=_bounded(detail, MAX_TEXT_CHARS),
        is_noteworthy=is_error,
        title=_bounded(_first_line(facts.prompt), MAX_TITLE_CHARS),
        description=_bounded(" ".join(facts.prompt.split()), MAX_TEXT_CHARS),
        recent_action=_bounded(facts.last_tool_summary or "", MAX_TEXT_CHARS),
        needs_action="Raise the limit or start a new turn" if category == "blocked" else "",
        artifact_urls=(),
        session_id=session_id,
        uuid=new_uuid(),
    )


def build_blocked(
    *,
    prompt: str,
    summarizes_uuid: str,
    last_tool_summary: str | None,
    tool_name: str,
    pending_action: str,
    session_id: str,
    new_uuid: Callable[[], str],
) -> FrozenDict:
    """The summary of a turn blocked on a permission prompt: ``needs_action``
    names the prompt (its safe description, WIRE-PERM-003)."""
    return outbound.post_turn_summary(
        summarizes_uuid=summarizes_uuid,
        status_category="blocked",
        status_detail=_bounded(f"Waiting for permission to use {tool_name}", MAX_TEXT_CHARS),
        is_noteworthy=False,
        title=_bounded(_first_line(prompt), MAX_TITLE_CHARS),
        description=_bounded(" ".join(prompt.split()), MAX_TEXT_CHARS),
        recent_action=_bounded(last_tool_summary or "", MAX_TEXT_CHARS),
        needs_action=_bounded(f"Answer the permission prompt: {pending_action}", MAX_TEXT_CHARS),
        artifact_urls=(),
        session_id=session_id,
        uuid=new_uuid(),
    )


__all__ = ["TurnFacts", "build", "build_blocked", "status_category"]
