"""The verdicts of one event's hooks, combined (DEC-HOOK-3).

Hooks of one event run in parallel and answer in any order; the outcome
does not depend on that order. Rule 1: a block (exit 2, ``decision``
block/deny, ``permissionDecision`` deny) from any hook wins over every ask
and allow. Rule 2: otherwise an ask wins over an allow. Rule 3: a hook that
failed, timed out or was cancelled decides nothing: it never approves, and
it blocks only when its definition says ``onFailure: block``. Rule 4:
``updatedInput`` comes with the winning allow or ask, from the first hook in
definition order that gave one. Rule 5: contexts, system messages and
reasons are kept in definition order, each at most :data:`TEXT_LIMIT`
characters (a callback's answer is bounded only by the 8 MiB input line, and
these reach the model and the tool results on stdout, DEC-COMPAT-3);
``continue: false`` from any hook stops the turn. Rule 6: a ``PostToolUse``
replaced output comes from the first hook in definition order that gave
one, bounded like a context.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

from msgspec import Struct

from agentx.messages.frozen import FrozenDict

if TYPE_CHECKING:
    # DEC-CLI-3: the verdicts and the permission answers load with the first
    # hook that ran (on_failure, combine); a session whose events select no
    # hook gets NOTHING without them.
    from agentx.messages.hooks.config import OnFailure
    from agentx.messages.hooks.verdicts import Decision, Verdict
    from agentx.messages.permission_wire import PermissionResult


class EventOutcome(Struct, frozen=True, kw_only=True):
    """What one firing of an event decided."""

    decision: Decision | None = None
    #: The reasons of the hooks that gave the winning decision.
    reasons: tuple[str, ...] = ()
    updated_input: FrozenDict | None = None
    contexts: tuple[str, ...] = ()
    stop: bool = False
    stop_reason: str | None = None
    system_messages: tuple[str, ...] = ()
    #: One line per hook that failed (each is one WARN line).
    failures: tuple[str, ...] = ()
    #: ``PermissionRequest``: the deciding answer, a deny first.
    request: PermissionResult | None = None
    #: ``PostToolUse`` (rule 6): what the model sees instead of the tool's output.
    updated_output: str | None = None
    updated_mcp_output: str | None = None

    @property
    def reason(self) -> str | None:
        return "\n".join(self.reasons) or None

    @property
    def blocked(self) -> bool:
        return self.decision == "block"


NOTHING = EventOutcome()
#: The most characters one hook's context, reason or message keeps.
TEXT_LIMIT: Final = 64 * 1024


def bounded(text: str) -> str:
    """``text``, cut at :data:`TEXT_LIMIT` characters with a marker saying so."""
    if len(text) <= TEXT_LIMIT:
        return text
    return f"{text[:TEXT_LIMIT]}\n[hook output truncated: {len(text)} characters in total]"


def on_failure(verdict: Verdict, policy: OnFailure) -> Verdict:
    """Rule 3: a failed (never a cancelled) hook whose definition says
    ``onFailure: block`` blocks, naming its failure."""
    if verdict.failure is None or policy != "block":
        return verdict
    from agentx.messages.hooks.verdicts import Verdict  # noqa: PLC0415 - DEC-CLI-3
    from agentx.messages.permission_wire import PermissionDeny  # noqa: PLC0415 - DEC-CLI-3

    reason = f"hook failed: {verdict.failure}"
    return Verdict(
        failure=verdict.failure,
        timed_out=verdict.timed_out,
        decision="block",
        reason=reason,
        request=PermissionDeny(message=reason),
    )


def combine(verdicts: Sequence[Verdict]) -> EventOutcome:
    """Rules 1-5 over the verdicts, given in definition order."""
    if not verdicts:
        return NOTHING
    from agentx.messages.permission_wire import PermissionAllow, PermissionDeny  # noqa: PLC0415

    decisions = {v.decision for v in verdicts}
    decision: Decision | None = next((d for d in ("block", "ask", "allow") if d in decisions), None)
    winners = [v for v in verdicts if decision is not None and v.decision == decision]
    updated = None
    if decision in ("allow", "ask"):
        updated = next((v.updated_input for v in winners if v.updated_input is not None), None)
    stops = [v for v in verdicts if v.stop]
    denies = [v.request for v in verdicts if isinstance(v.request, PermissionDeny)]
    allows = [v.request for v in verdicts if isinstance(v.request, PermissionAllow)]
    return EventOutcome(
        decision=decision,
        reasons=tuple(bounded(v.reason) for v in winners if v.reason),
        updated_input=updated,
        contexts=tuple(bounded(v.context) for v in verdicts if v.context),
        stop=bool(stops),
        stop_reason=next((bounded(v.stop_reason) for v in stops if v.stop_reason), None),
        system_messages=tuple(bounded(v.system_message) for v in verdicts if v.system_message),
        failures=tuple(v.failure for v in verdicts if v.failure is not None),
        request=(denies or allows or [None])[0],
        updated_output=_first(v.updated_output for v in verdicts),
        updated_mcp_output=_first(v.updated_mcp_output for v in verdicts),
    )


def _first(texts: Iterable[str | None]) -> str | None:
    return next((bounded(t) for t in texts if t is not None), None)
