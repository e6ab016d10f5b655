"""One hook's answer as a verdict (DEC-HOOK-3, DEC-HOOK-4).

A command hook answers with its exit status and output, a callback hook with
the JSON object of its ``hook_callback`` response; both become a
:class:`Verdict`, read the way Claude Code reads them:

- exit 2: a block, with stderr as the reason (stdout is not read);
- any other non-zero exit: a failure (reported; never approves anything);
- exit 0 with empty stdout: no opinion; with stdout that starts with ``{``:
  the JSON object below (anything else there is a failure); with other text:
  context for the model on ``UserPromptSubmit`` and ``SessionStart``, ignored
  elsewhere, and a failure on ``PermissionRequest`` (DEC-HOOK-3 as before);
- the JSON object: ``continue`` (false stops the turn, ``stopReason`` says
  why), ``suppressOutput``, ``systemMessage``, ``decision`` with ``reason``
  and ``hookSpecificOutput`` (``permissionDecision`` allow/deny/ask with
  ``permissionDecisionReason``, ``updatedInput``, ``additionalContext``,
  ``PermissionRequest``'s ``decision.behavior``, ``PostToolUse``'s
  ``updatedToolOutput`` and ``updatedMCPToolOutput``). Both spellings are read:
  Claude Code's, and agentx's own from DEC-HOOK-3 (``{"decision": "allow",
  "updatedInput": ...}``, ``{"decision": "deny", "reason": ...}``,
  ``{"decision": "passthrough"}``). Members agentx does not know are ignored,
  as Claude Code ignores them; a known member of the wrong type is a failure.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, Literal

from msgspec import Struct

from agentx.messages.frozen import FrozenDict
from agentx.messages.permission_wire import (
    PermissionAllow,
    PermissionDeny,
    PermissionResult,
    parse_permission_response,
)
from agentx.messages.strict_json import StrictJSONError, loads_strict

#: Events whose plain (non-JSON) stdout is context for the model.
PLAIN_TEXT_CONTEXT: Final = frozenset({"UserPromptSubmit", "SessionStart"})
#: Events whose plain stdout is a failure (DEC-HOOK-3 kept its strict reading).
STRICT_STDOUT: Final = frozenset({"PermissionRequest"})
_DECISIONS: Final = FrozenDict(
    approve="allow",
    allow="allow",
    block="block",
    deny="block",
    ask="ask",
    passthrough=None,
)
_PERMISSION_DECISIONS: Final = FrozenDict(allow="allow", deny="block", ask="ask", defer=None)

Decision = Literal["allow", "ask", "block"]


class Verdict(Struct, frozen=True, kw_only=True):
    """What one hook said. A verdict with ``failure`` set decides nothing
    (unless its definition says ``onFailure: block``, see the aggregate)."""

    #: Why the hook failed (error exit, timeout, bad output, no answer).
    failure: str | None = None
    timed_out: bool = False
    #: Stopped because its event no longer needed it (reported ``cancelled``).
    cancelled: bool = False
    #: ``block`` is exit 2, ``decision`` block/deny or ``permissionDecision`` deny.
    decision: Decision | None = None
    #: The block reason, or ``permissionDecisionReason``.
    reason: str | None = None
    updated_input: FrozenDict | None = None
    #: ``additionalContext``, or plain stdout where that is context.
    context: str | None = None
    #: ``continue: false``.
    stop: bool = False
    stop_reason: str | None = None
    system_message: str | None = None
    suppress_output: bool = False
    #: ``PermissionRequest``'s decision (either spelling).
    request: PermissionResult | None = None
    #: ``PostToolUse``: ``updatedToolOutput`` (any tool) and
    #: ``updatedMCPToolOutput`` (MCP tools only) as the text the model sees
    #: (a string as it is, any other JSON value as compact JSON).
    updated_output: str | None = None
    updated_mcp_output: str | None = None


def failed(reason: str, *, timed_out: bool = False) -> Verdict:
    return Verdict(failure=reason, timed_out=timed_out)


CANCELLED: Final = Verdict(cancelled=True)


def command_verdict(
    event: str, exit_code: int, stdout: bytes, stderr: bytes, *, tool_use_id: str = ""
) -> Verdict:
    """A finished command hook's verdict (DEC-HOOK-3)."""
    if exit_code == 2:
        reason = stderr.decode("utf-8", errors="replace").strip()
        if event == "PermissionRequest":
            reason = reason or "denied by hook"
            return Verdict(decision="block", reason=reason, request=PermissionDeny(message=reason))
        return Verdict(decision="block", reason=reason or f"blocked by a {event} hook")
    if exit_code != 0:
        return failed(f"hook exited with status {exit_code}")
    text = stdout.decode("utf-8", errors="replace").strip()
    if not text:
        return Verdict()
    if not text.startswith("{"):
        if event in STRICT_STDOUT:
            return failed("hook stdout is not a JSON object")
        return Verdict(context=text) if event in PLAIN_TEXT_CONTEXT else Verdict()
    try:
        body = loads_strict(stdout)
    except StrictJSONError as exc:
        return failed(f"hook stdout: {exc.reason}")
    if not isinstance(body, FrozenDict):
        return failed("hook stdout is not a JSON object")
    return json_verdict(event, body, tool_use_id=tool_use_id)


class _Invalid(ValueError):
    pass


def _typed(body: Mapping[str, Any], name: str, kind: type, what: str) -> Any:
    value = body.get(name)
    if value is None:
        return None
    fits = isinstance(value, bool) if kind is bool else isinstance(value, kind)
    if not fits or (kind is not bool and isinstance(value, bool)):
        raise _Invalid(f"{name} must be {what}")
    return value


def json_verdict(event: str, body: Mapping[str, Any], *, tool_use_id: str = "") -> Verdict:
    """The verdict of a hook's JSON object (DEC-HOOK-3); a callback's answer
    is read here too (DEC-PROFILE-2)."""
    try:
        return _read(event, body, tool_use_id)
    except _Invalid as exc:
        return failed(f"hook output: {exc}")


def _read(event: str, body: Mapping[str, Any], tool_use_id: str) -> Verdict:
    keep_going = _typed(body, "continue", bool, "a boolean")
    suppress = _typed(body, "suppressOutput", bool, "a boolean")
    stop_reason = _typed(body, "stopReason", str, "a string")
    system_message = _typed(body, "systemMessage", str, "a string")
    reason = _typed(body, "reason", str, "a string")
    raw_decision = _typed(body, "decision", str, "a string")
    if raw_decision is not None and raw_decision not in _DECISIONS:
        raise _Invalid(f"decision {raw_decision!r} is not known")
    decision: Decision | None = _DECISIONS.get(raw_decision) if raw_decision else None
    specific = _typed(body, "hookSpecificOutput", Mapping, "an object") or FrozenDict()
    named = _typed(specific, "hookEventName", str, "a string")
    if named is not None and named != event:
        raise _Invalid(f"hookSpecificOutput is for {named}, not {event}")
    updated = _updated_input(body, specific)
    context = _typed(specific, "additionalContext", str, "a string")
    request: PermissionResult | None = None
    if event == "PreToolUse":
        chosen = _typed(specific, "permissionDecision", str, "a string")
        if chosen is not None:
            if chosen not in _PERMISSION_DECISIONS:
                raise _Invalid(f"permissionDecision {chosen!r} is not known")
            decision = _PERMISSION_DECISIONS[chosen]
            reason = _typed(specific, "permissionDecisionReason", str, "a string") or reason
    elif event == "PermissionRequest":
        request = _request(specific, decision, updated, reason, tool_use_id)
        if request is not None:
            decision = "allow" if isinstance(request, PermissionAllow) else "block"
        elif decision == "ask":
            raise _Invalid("decision 'ask' is not known for PermissionRequest")
    if decision == "ask" and event != "PreToolUse":
        raise _Invalid(f"decision 'ask' is not known for {event}")
    outputs: tuple[str | None, str | None] = (None, None)
    if event == "PostToolUse":
        outputs = (
            _output_text(specific.get("updatedToolOutput")),
            _output_text(specific.get("updatedMCPToolOutput")),
        )
    return Verdict(
        decision=decision,
        reason=reason,
        updated_input=updated if decision in ("allow", "ask") else None,
        context=context,
        stop=keep_going is False,
        stop_reason=stop_reason,
        system_message=system_message,
        suppress_output=bool(suppress),
        request=request,
        updated_output=outputs[0],
        updated_mcp_output=outputs[1],
    )


def _output_text(value: object) -> str | None:
    """A replaced tool output as the model's text: a string as it is, any
    other JSON value as compact JSON (agentx's tool results are text)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _updated_input(body: Mapping[str, Any], specific: Mapping[str, Any]) -> FrozenDict | None:
    """``hookSpecificOutput.updatedInput`` (Claude Code) or a top-level
    ``updatedInput`` (agentx's DEC-HOOK-3 spelling); two different ones are
    a failure."""
    ours = _typed(body, "updatedInput", Mapping, "an object")
    theirs = _typed(specific, "updatedInput", Mapping, "an object")
    if ours is not None and theirs is not None and ours != theirs:
        raise _Invalid("updatedInput is given twice, differently")
    chosen = theirs if theirs is not None else ours
    return None if chosen is None else FrozenDict(chosen)


def _request(
    specific: Mapping[str, Any],
    decision: Decision | None,
    updated: FrozenDict | None,
    reason: str | None,
    tool_use_id: str,
) -> PermissionResult | None:
    """PermissionRequest's decision: ``hookSpecificOutput.decision`` as a
    WIRE-PERM-041 object (an invalid one denies, WIRE-PERM-044), or the
    top-level DEC-HOOK-3 spelling; two that disagree are a failure."""
    raw = specific.get("decision")
    theirs = None if raw is None else parse_permission_response(raw, tool_use_id)
    ours: PermissionResult | None = None
    if decision == "allow":
        ours = PermissionAllow(updated_input=updated)
    elif decision == "block":
        ours = PermissionDeny(message=reason or "denied by hook")
    if theirs is not None and ours is not None and type(theirs) is not type(ours):
        raise _Invalid("decision and hookSpecificOutput.decision disagree")
    return theirs if theirs is not None else ours
