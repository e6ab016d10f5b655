"""The permission race for one tool-use id (spec "Permission race" steps 1-7).

WIRE-PERM-001: the first *decisive* result by completion order wins; a hook's
pass-through is not decisive and leaves the host to answer. WIRE-PERM-002:
every error (host error, invalid host answer, hook error or timeout,
interrupt, EOF) is a denial, never an implicit allow. Step 5: once the host
has answered, a late hook cannot replace the outcome. Step 6: the tool use is
settled exactly once; every input after that yields no effects. DEC-EOF-2:
with no host to answer (no control channel, or after input EOF) the hooks
alone decide (:class:`PermissionRace` Rule 1).

Step 7 (back to ``running`` only when no prompt remains) belongs to the
session: feed :class:`PublishRequiresAction` and :class:`Settle` into
``agentx.messages.session_state.SessionStateCore.permission_opened`` /
``permission_closed``; this core emits each exactly once per tool use.

Sans-IO: inputs are method calls, outputs are effect tuples for the caller
(the permission arbiter) to carry out in order.
"""

from __future__ import annotations

from enum import Enum, auto
from typing import Literal

from msgspec import Struct

from agentx.messages.permission_wire import (
    INVALID_RESPONSE_DENIAL,
    PermissionAllow,
    PermissionDeny,
    PermissionResult,
)

HOOK_ERROR_MESSAGE = "permission hook failed"
HOOK_TIMEOUT_MESSAGE = "permission hook timed out"
INTERRUPTED_MESSAGE = "permission request cancelled"
#: DEC-EOF-2: no host can answer and no hook decided.
NO_CHANNEL_MESSAGE = "no permission channel is open"
#: A permission request that could not be sent at all (the arbiter's denial).
HOST_ERROR_MESSAGE = "permission request failed"

Decider = Literal["host", "hook", "interrupt", "no_channel"]


# --- inputs from the hook ----------------------------------------------------------


class HookPassThrough(Struct, frozen=True, kw_only=True):
    """DEC-HOOK-3: the hook made no decision; the host decides (if it can)."""


class HookFailed(Struct, frozen=True, kw_only=True):
    """DEC-HOOK-3: the hook errored or timed out; this denies (WIRE-PERM-002)."""

    reason: Literal["error", "timeout"]


#: A decisive hook answer is a PermissionResult (allow, allow with updated input, deny).
HookResult = PermissionAllow | PermissionDeny | HookPassThrough | HookFailed


# --- effects --------------------------------------------------------------------------


class PublishRequiresAction(Struct, frozen=True, kw_only=True):
    """Step 1: the session has one more pending prompt."""

    tool_use_id: str


class StartHostRequest(Struct, frozen=True, kw_only=True):
    """Step 1: send the ``can_use_tool`` request to the host."""

    tool_use_id: str


class StartHook(Struct, frozen=True, kw_only=True):
    """Step 2: run the permission hook concurrently."""

    tool_use_id: str


class CancelHostRequest(Struct, frozen=True, kw_only=True):
    """Step 3: the hook won; abort the host request (WIRE-007 cancel record)."""

    tool_use_id: str


class CancelHook(Struct, frozen=True, kw_only=True):
    """The hook lost or is moot; stop it (DEC-HOOK-4 reports it ``cancelled``)."""

    tool_use_id: str


class Settle(Struct, frozen=True, kw_only=True):
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
    #: Decided, but a cancelled hook has not reported yet (DEC-EOF-2, WIRE-004).
    DECIDED = auto()
    SETTLED = auto()


class PermissionRace:
    """One tool use's race between the host's answer and its permission hooks.

    Rule 1 (who may answer): the host may answer while its leg is open: the
    race starts with ``host_open`` (False when there is no control channel,
    text-mode ``-p``) and :meth:`host_closed` shuts the leg (input EOF, the
    broker refused or rejected the request). With the leg closed the hooks
    alone decide (DEC-EOF-2): a decisive hook result applies; pass-through
    of every hook, a hook error or no hook at all denies with
    :data:`NO_CHANNEL_MESSAGE`.

    Rule 2 (WIRE-PERM-001): with the leg open, the first decisive result wins;
    pass-through of every hook leaves the host to answer.

    Rule 3 (hook events before the outcome): several matching hooks are one
    vote (DEC-HOOK-1/3): the first decisive answer or failure settles it. A
    decision cancels the hooks still running, and :class:`Settle` waits until
    each of them has reported its result, so every ``system/hook_response``
    is written before the asking turn goes on, and so before its ``result``
    and the final ``idle`` (WIRE-004, DEC-EOF-2). :meth:`shutdown` settles at
    once (the arbiter is stopping).

    | host leg | hooks waiting | input                  | outcome                      |
    |----------|---------------|------------------------|------------------------------|
    | open     | any           | host answer / error    | that answer (error: deny)    |
    | open     | any           | decisive hook result   | the hook's; host cancelled   |
    | open     | 0 after it    | pass-through           | none yet: the host decides   |
    | closed   | 0             | (start or host_closed) | deny, no channel             |
    | closed   | 0 after it    | pass-through           | deny, no channel             |
    | closed   | any           | hook error / timeout   | deny, hook failed, no channel|
    | any      | any           | abort                  | deny, cancelled              |
    """

    def __init__(self, *, tool_use_id: str, hooks: int = 0, host_open: bool = True) -> None:
        if hooks < 0:
            raise ValueError("a hook count cannot be negative")
        self._tool_use_id = tool_use_id
        self._hooks = hooks
        self._hooks_waiting = 0
        self._host_open = host_open
        self._host_asked = False
        self._phase = _Phase.NEW
        self._outcome: Settle | None = None

    @property
    def outcome(self) -> Settle | None:
        """The decision, once made (it may still wait for cancelled hooks)."""
        return self._outcome

    def start(self) -> tuple[RaceEffect, ...]:
        """Steps 1-2: publish requires_action, ask the host if its leg is
        open and start the hooks; with neither, deny at once (Rule 1)."""
        if self._phase is not _Phase.NEW:
            return ()
        self._phase = _Phase.RACING
        tid = self._tool_use_id
        effects: list[RaceEffect] = [PublishRequiresAction(tool_use_id=tid)]
        if self._host_open:
            self._host_asked = True
            effects.append(StartHostRequest(tool_use_id=tid))
        if self._hooks:
            self._hooks_waiting = self._hooks
            effects.append(StartHook(tool_use_id=tid))
        elif not self._host_open:
            effects.extend(self._no_channel())
        return tuple(effects)

    def host_answer(self, result: PermissionResult) -> tuple[RaceEffect, ...]:
        """Step 5: the host's parsed decision (an invalid answer is already a
        denial); none counts once the host's leg is closed (Rule 1)."""
        if not self._host_open:
            return ()
        return self._decide(result, "host", cancel_host=False)

    def host_error(self) -> tuple[RaceEffect, ...]:
        """The host answered with an error response or broke the closed
        response union: deny with ``invalid permission response``
        (WIRE-PERM-002, WIRE-PERM-044)."""
        if not self._host_open:
            return ()
        return self._decide(INVALID_RESPONSE_DENIAL, "host", cancel_host=False)

    def host_closed(self) -> tuple[RaceEffect, ...]:
        """The host can no longer answer (input EOF, WIRE-008, DEC-EOF-1/2):
        the hooks still running decide; with none left, deny (Rule 1).

        No cancel record is sent: the broker already rejected the waiter.
        """
        self._require_started()
        if self._phase is not _Phase.RACING or not self._host_open:
            return ()
        self._host_open = False
        if self._hooks_waiting:
            return ()
        return self._no_channel()

    def hook_result(self, result: HookResult) -> tuple[RaceEffect, ...]:
        """Steps 3-4: one hook's result (Rules 1-3)."""
        self._require_started()
        if not self._hooks_waiting:
            return ()
        self._hooks_waiting -= 1
        if self._phase is _Phase.DECIDED:
            return self._release() if not self._hooks_waiting else ()
        if self._phase is not _Phase.RACING:
            return ()
        if isinstance(result, HookPassThrough):
            if self._hooks_waiting or self._host_open:
                return ()
            return self._no_channel()
        if isinstance(result, HookFailed):
            message = HOOK_TIMEOUT_MESSAGE if result.reason == "timeout" else HOOK_ERROR_MESSAGE
            if not self._host_open:
                message = f"{message}; {NO_CHANNEL_MESSAGE}"
            return self._decide(PermissionDeny(message=message), "hook", cancel_host=True)
        return self._decide(result, "hook", cancel_host=True)

    def abort(self) -> tuple[RaceEffect, ...]:
        """The turn was interrupted: the prompt is cancelled as a denial."""
        return self._decide(PermissionDeny(message=INTERRUPTED_MESSAGE), "interrupt", True)

    def shutdown(self) -> tuple[RaceEffect, ...]:
        """The arbiter is stopping: settle now, without waiting for hooks."""
        self._require_started()
        if self._phase is _Phase.DECIDED:
            return self._release()
        effects = self._decide(
            PermissionDeny(message=NO_CHANNEL_MESSAGE), "no_channel", False, hold=False
        )
        self._hooks_waiting = 0
        return effects

    def _require_started(self) -> None:
        if self._phase is _Phase.NEW:
            raise RaceStateError("the permission race has not started")

    def _no_channel(self) -> tuple[RaceEffect, ...]:
        return self._decide(PermissionDeny(message=NO_CHANNEL_MESSAGE), "no_channel", False)

    def _release(self) -> tuple[RaceEffect, ...]:
        assert self._outcome is not None
        self._phase = _Phase.SETTLED
        return (self._outcome,)

    def _decide(
        self, result: PermissionResult, decided_by: Decider, cancel_host: bool, hold: bool = True
    ) -> tuple[RaceEffect, ...]:
        self._require_started()
        if self._phase is not _Phase.RACING:
            return ()
        tid = self._tool_use_id
        effects: list[RaceEffect] = []
        if cancel_host and self._host_open and self._host_asked:
            effects.append(CancelHostRequest(tool_use_id=tid))
        self._outcome = Settle(tool_use_id=tid, result=result, decided_by=decided_by)
        if self._hooks_waiting:
            effects.append(CancelHook(tool_use_id=tid))
            if hold:
                self._phase = _Phase.DECIDED
                return tuple(effects)
        self._phase = _Phase.SETTLED
        effects.append(self._outcome)
        return tuple(effects)


#: Tools whose asks ``--permission-mode acceptEdits`` answers (DEC-PERM-MODE).
_EDIT_TOOLS = frozenset({"Write", "Edit", "NotebookEdit"})


def no_channel_hint(tool_name: str, tool_use_id: str) -> str:
    """DEC-EOF-2: the one stderr line for a tool call denied because no
    permission channel is open: which call, and the flags that would allow it.
    Names the tool and its id only, never the input (it may hold anything)."""
    if tool_name == "AskUserQuestion":  # no mode nor rule answers for the user
        return (
            f"{tool_name} call {tool_use_id} was denied: only the user can answer it and no "
            "permission channel is open; answer permission prompts (can_use_tool) over "
            "--input-format stream-json --output-format stream-json"
        )
    mode = "acceptEdits" if tool_name in _EDIT_TOOLS else "bypassPermissions"
    return (
        f"{tool_name} call {tool_use_id} was denied: it needs permission and no "
        f'permission channel is open; allow it with --allowedTools "{tool_name}" or '
        f"--permission-mode {mode}, or a PermissionRequest hook, or answer permission "
        "prompts over --input-format stream-json --output-format stream-json"
    )
