"""The decisions of a subagent's loop (DEC-TURN-3, DEC-CLI-5 ``--max-turns``
and ``--max-budget-usd``, DECISIONS section 3 ``SubagentStop``).

- A subagent's model calls are bounded by its definition's ``maxTurns``,
  else by the session's ``--max-turns`` (each run of a subagent counts its
  own calls; the parent turn's ``num_turns`` counts the parent's calls only,
  as Claude Code's result does).
- ``--max-budget-usd`` is the whole turn's: the parent's spend so far plus
  the subagent's is checked after each of the subagent's model calls, and
  again by the parent after the ``Agent`` tool returns.
- A background subagent (``run_in_background``, or a definition's
  ``background``) runs on a thread of its own, is stopped after
  :data:`BACKGROUND_SECONDS`, and its spend is checked alone against the
  budget; its result, usage and cost join the parent's turn when its
  notification reaches the parent's model: when the parent would end its
  turn, it waits for its running background subagents and goes on with
  their notifications as its next message (bounded by ``--max-turns``; an
  interrupt stops them instead). The turn's result waits for them as for a
  background command (DEC-TURN-5).
- A ``SubagentStop`` hook that blocks (or adds context) makes the subagent go
  on with the feedback as its next message, at most
  :data:`MAX_STOP_CONTINUATIONS` times per run and never past its bound on
  model calls.
"""

from __future__ import annotations

from typing import Final

#: How often ``SubagentStop`` hooks may make one run of a subagent go on.
MAX_STOP_CONTINUATIONS: Final = 8
#: DEC-TURN-5: a background subagent is finite work: it is stopped after this
#: many seconds (the longest a background Bash command may run).
BACKGROUND_SECONDS: Final = 600.0
#: Background subagents of one session running at once, at most (each has a
#: thread and makes model calls); one more is answered with an error.
MAX_BACKGROUND: Final = 8


def may_start_background(running: int) -> bool:
    """Whether another background subagent may start beside ``running`` ones."""
    return running < MAX_BACKGROUND


def turn_limit(definition_max: int | None, session_max: int | None) -> int | None:
    """The run's bound on model calls (None: unbounded, as the session's)."""
    return definition_max if definition_max is not None else session_max


def at_turn_limit(calls: int, limit: int | None) -> bool:
    return limit is not None and calls >= limit


def over_budget(budget: float | None, parent_cost: float | None, own_cost: float | None) -> bool:
    """Whether the turn's spend (parent plus subagent) passed ``--max-budget-usd``;
    an unknown cost never counts as over (WIRE-012: it is unknown, not zero)."""
    if budget is None or parent_cost is None or own_cost is None:
        return False
    return parent_cost + own_cost > budget


def stop_continues(*, notes: int, continued: int, calls: int, limit: int | None) -> bool:
    """Whether ``SubagentStop`` feedback makes the run go on once more."""
    return notes > 0 and continued < MAX_STOP_CONTINUATIONS and not at_turn_limit(calls, limit)


__all__ = [
    "BACKGROUND_SECONDS",
    "MAX_BACKGROUND",
    "MAX_STOP_CONTINUATIONS",
    "at_turn_limit",
    "may_start_background",
    "over_budget",
    "stop_continues",
    "turn_limit",
]
