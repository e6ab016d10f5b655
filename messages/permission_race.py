"""The permission race for one tool-use id (spec "Permission race" steps 1-7).

WIRE-PERM-001: the first *decisive* result by completion order wins; a hook's
pass-through is not decisive and leaves the host to answer. WIRE-PERM-002:
every error (host error, invalid host answer, hook error or timeout,
interrupt, EOF) is a denial, never an implicit allow. Step 5: once the host
has answered, a late hook cannot replace the outcome. Step 6: the tool use is
settled exactly once; every input after that yields no effects.

Step 7 (back to ``running`` only when no prompt remains) belongs to the
session: feed :class:`PublishRequiresAction` and :class:`Settle` into
``agentx.messages.session_state.SessionStateCore.permission_opened`` /
``permission_closed``; this core emits each exactly once per tool use.

Sans-IO: inputs are method calls, outputs are effect tuples for the caller
(the permission arbiter) to carry out in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto
from typing import Literal

from agentx.messages.permission_wire import (
    INVALID_RESPONSE_DENIAL,
    PermissionAllow,
    PermissionDeny,
    PermissionResult,
)

HOOK_ERROR_MESSAGE = "permission hook failed"
HOOK_TIMEOUT_MESSAGE = "permission hook timed out"
INTERRUPTED_MESSAGE = "permission request cancelled"
STREAM_CLOSED_MESSAGE = "permission stream closed"
#: A permission request that could not be sent at all (the arbiter's denial).
HOST_ERROR_MESSAGE = "permission request failed"

Decider = Literal["host", "hook", "interrupt", "eof"]


# --- inputs from the hook ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class HookPassThrough:
    """DEC-HOOK-3: the hook made no decision; the host decides."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HookFailed:
    """DEC-HOOK-3: the hook errored or timed out; this denies (WIRE-PERM-002)."""

    reason: Literal["error", "timeout"]


#: A decisive hook answer is a PermissionResult (allow, allow with updated input, deny).
HookResult = PermissionAllow | PermissionDeny | HookPassThrough | HookFailed


# --- effects --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishRequiresAction:
    """Step 1: the session has one more pending prompt."""

    tool_use_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StartHostRequest:
    """Step 1: send the ``can_use_tool`` request to the host."""

    tool_use_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StartHook:
    """Step 2: run the permission hook concurrently."""

    tool_use_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelHostRequest:
    """Step 3: the hook won; abort the host request (WIRE-007 cancel record)."""

    tool_use_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelHook:
    """The hook lost or is moot; stop it (DEC-HOOK-4 reports it ``cancelled``)."""

    tool_use_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Settle:
    """Step 6: the tool use's one and only permission outcome."""

    tool_use_id: str
    result: PermissionResult
    decided_by: Decider


RaceEffect = (
    PublishRequiresAction | StartHostRequest | StartHook | CancelHostRequest | CancelHook | Settle
)


class RaceStateError(RuntimeError):
    """An input arrived before :meth:`PermissionRace.start`."""


class _Phase(Enum):
    NEW = auto()
    RACING = auto()
    SETTLED = auto()


class PermissionRace:
    """One tool use's race between the host's answer and the permission hook."""

    def __init__(self, *, tool_use_id: str, with_hook: bool) -> None:
        self._tool_use_id = tool_use_id
        self._with_hook = with_hook
        self._phase = _Phase.NEW
        self._hook_running = False
        self._outcome: Settle | None = None

    @property
    def outcome(self) -> Settle | None:
        """The settlement, once decided."""
        return self._outcome

    def start(self) -> tuple[RaceEffect, ...]:
        """Steps 1-2: publish requires_action, start the host request and the hook."""
        if self._phase is not _Phase.NEW:
            return ()
        self._phase = _Phase.RACING
        tid = self._tool_use_id
        effects: list[RaceEffect] = [PublishRequiresAction(tool_use_id=tid)]
        effects.append(StartHostRequest(tool_use_id=tid))
        if self._with_hook:
            self._hook_running = True
            effects.append(StartHook(tool_use_id=tid))
        return tuple(effects)

    def host_answer(self, result: PermissionResult) -> tuple[RaceEffect, ...]:
        """Step 5: the host's parsed decision (an invalid answer is already a denial)."""
        return self._decide(result, "host", cancel_host=False)

    def host_error(self) -> tuple[RaceEffect, ...]:
        """The host answered with an error response or broke the closed
        response union: deny with ``invalid permission response``
        (WIRE-PERM-002, WIRE-PERM-044)."""
        return self._decide(INVALID_RESPONSE_DENIAL, "host", cancel_host=False)

    def hook_result(self, result: HookResult) -> tuple[RaceEffect, ...]:
        """Steps 3-4: a decisive hook answer wins if first; pass-through keeps waiting."""
        self._require_started()
        self._hook_running = False
        if isinstance(result, HookPassThrough):
            return ()
        if isinstance(result, HookFailed):
            message = HOOK_TIMEOUT_MESSAGE if result.reason == "timeout" else HOOK_ERROR_MESSAGE
            return self._decide(PermissionDeny(message=message), "hook", cancel_host=True)
        return self._decide(result, "hook", cancel_host=True)

    def abort(self) -> tuple[RaceEffect, ...]:
        """The turn was interrupted: the prompt is cancelled as a denial."""
        return self._decide(PermissionDeny(message=INTERRUPTED_MESSAGE), "interrupt", True)

    def eof(self) -> tuple[RaceEffect, ...]:
        """Input closed: the host can no longer answer, so deny (WIRE-008, DEC-EOF-1).

        No cancel record is sent: the broker already rejected the waiter.
        """
        return self._decide(PermissionDeny(message=STREAM_CLOSED_MESSAGE), "eof", False)

    def _require_started(self) -> None:
        if self._phase is _Phase.NEW:
            raise RaceStateError("the permission race has not started")

    def _decide(
        self, result: PermissionResult, decided_by: Decider, cancel_host: bool
    ) -> tuple[RaceEffect, ...]:
        self._require_started()
        if self._phase is _Phase.SETTLED:
            return ()
        self._phase = _Phase.SETTLED
        tid = self._tool_use_id
        effects: list[RaceEffect] = []
        if cancel_host:
            effects.append(CancelHostRequest(tool_use_id=tid))
        if self._hook_running:
            self._hook_running = False
            effects.append(CancelHook(tool_use_id=tid))
        self._outcome = Settle(tool_use_id=tid, result=result, decided_by=decided_by)
        effects.append(self._outcome)
        return tuple(effects)


class HookVote:
    """Several matching hooks seen by the race as one (DEC-HOOK-1/3).

    The first decisive answer or failure settles the vote (wall-clock order,
    WIRE-PERM-001); pass-through only once every hook passed through.
    """

    def __init__(self, count: int) -> None:
        if count < 1:
            raise ValueError("a hook vote needs at least one hook")
        self._waiting = count
        self._settled = False

    def add(self, result: HookResult) -> HookResult | None:
        """Record one hook's result; returns the combined result once known."""
        if self._settled:
            return None
        self._waiting -= 1
        if isinstance(result, HookPassThrough) and self._waiting > 0:
            return None
        self._settled = True
        return result
