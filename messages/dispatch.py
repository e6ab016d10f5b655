"""The inbound control dispatcher's decisions (spec "Control operations",
DEC-PROFILE-1, DEC-PROFILE-2, DEC-COMPAT-1, DEC-COMPAT-4, WIRE-025).

Sans-IO: :func:`dispatch` maps one decoded ``control_request`` to an
:class:`Action`. Fixed answers (the restart errors, the generic unsupported
error, field validation) are decided here; the supervisor shell carries out
the actions that need other actors. A profile adds rows; it never changes
a standalone row except where DEC-PROFILE-2 says the ``sdk`` profile
answers differently (``initialize`` with fields, ``set_model``,
``set_permission_mode``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from msgspec import Struct

from agentx.messages import outbound
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_control import (
    ControlRequest,
    InvalidControlRequest,
    UncorrelatableControl,
)
from agentx.messages.initialize import meaningful
from agentx.messages.permission_rules import MODES, is_mode
from agentx.messages.profiles import Profile

#: Spec "Control operations": the standalone dispatcher's complete list.
STANDALONE_SUBTYPES = frozenset(
    {
        "initialize",
        "interrupt",
        "get_context_usage",
        "mcp_status",
        "set_model",
        "set_permission_mode",
        "set_max_thinking_tokens",
    }
)
#: DEC-PROFILE-1: explicitly versioned members the extended profile installs.
EXTENDED_SUBTYPES = frozenset(
    {
        "cancel_async_message",
        "get_settings",
        "apply_flag_settings",
        "stop_task",
        # DEC-PROFILE-1: the MCP operations join the profile with the MCP client.
        "mcp_set_servers",
        "mcp_reconnect",
        "mcp_toggle",
    }
)

#: DEC-PROFILE-2: the ``sdk`` profile answers these standalone subtypes itself
#: (live, instead of the restart errors) and takes ``initialize`` fields.
SDK_LIVE_SUBTYPES = frozenset({"set_model", "set_permission_mode"})
#: DEC-PROFILE-2: the SDKs' controls only the ``sdk`` profile installs.
SDK_SUBTYPES = frozenset({"rewind_files"})

SET_PERMISSION_MODE_ERROR = (
    "live permission-mode mutation is unavailable; start a new session with --permission-mode"
)
SET_MODEL_ERROR = "provider and model are process-fixed; restart with --provider <id>"
SET_MAX_THINKING_TOKENS_ERROR = (
    "provider-declared reasoning effort is not a mutable thinking-token budget"
)


class Reply(Struct, frozen=True, kw_only=True):
    """Answer at once with this correlated record; the shell also writes
    ``warning``, when there is one, to stderr (DEC-COMPAT-4)."""

    record: FrozenDict
    warning: str | None = None


class Perform(Struct, frozen=True, kw_only=True):
    """Carry out ``subtype`` with validated ``fields``; the shell answers."""

    request_id: str
    subtype: str
    fields: FrozenDict


class Drop(Struct, frozen=True, kw_only=True):
    """Nothing to answer: the record has no request id to correlate with
    (DECISIONS section 1). The shell writes ``diagnostic`` to stderr."""

    diagnostic: str


Action = Reply | Perform | Drop
#: Every control record the reader can route to the dispatcher.
ControlRecord = ControlRequest | InvalidControlRequest | UncorrelatableControl


_EXTENDED_PROFILE_SUBTYPES = STANDALONE_SUBTYPES | EXTENDED_SUBTYPES
_SDK_PROFILE_SUBTYPES = _EXTENDED_PROFILE_SUBTYPES | SDK_SUBTYPES


def installed_subtypes(profile: Profile) -> frozenset[str]:
    if profile == "sdk":
        return _SDK_PROFILE_SUBTYPES
    if profile == "extended":
        return _EXTENDED_PROFILE_SUBTYPES
    return STANDALONE_SUBTYPES


def dispatch(request: ControlRecord, *, profile: Profile) -> Action:
    """Decide what one inbound control record gets (never silently accepted):
    a request whose request is invalid gets its correlated error, one with
    no request id is dropped with a diagnostic, a valid one is checked."""
    if isinstance(request, InvalidControlRequest):
        return Reply(record=outbound.control_response_error(request.request_id, request.error))
    if isinstance(request, UncorrelatableControl):
        return Drop(diagnostic=f"line {request.line}: control record dropped: {request.reason}")
    rid, subtype, payload = request.request_id, request.subtype, request.payload
    if subtype not in installed_subtypes(profile):
        return Reply(record=outbound.unsupported_control(rid, subtype))
    if subtype == "initialize":
        payload = meaningful(payload)
        if profile == "sdk":
            # DEC-PROFILE-2: the fields are planned against the host's handlers.
            return Perform(request_id=rid, subtype=subtype, fields=payload)
    if profile == "sdk" and subtype in SDK_LIVE_SUBTYPES:
        error = _SDK_CHECKS[subtype](payload)
        if error is not None:
            return Reply(record=outbound.control_response_error(rid, error))
        return Perform(request_id=rid, subtype=subtype, fields=payload)
    check = _CHECKS.get(subtype, _no_fields)
    error = check(payload)
    if error is not None:
        warning = _prompt_warning(payload) if subtype == "initialize" else None
        return Reply(record=outbound.control_response_error(rid, error), warning=warning)
    fixed = _FIXED_ERRORS.get(subtype)
    if fixed is not None:
        return Reply(record=outbound.control_response_error(rid, fixed))
    return Perform(request_id=rid, subtype=subtype, fields=payload)


_FIXED_ERRORS = {
    "set_permission_mode": SET_PERMISSION_MODE_ERROR,
    "set_model": SET_MODEL_ERROR,
    "set_max_thinking_tokens": SET_MAX_THINKING_TOKENS_ERROR,
}


def _no_fields(payload: Mapping[str, Any]) -> str | None:
    if payload:
        return f"{_first(payload)!s} is not a field of this request"
    return None


#: DEC-COMPAT-4: the initialize members that carry a system prompt.
_PROMPT_MEMBERS = ("systemPrompt", "appendSystemPrompt")
PROMPT_NOT_APPLIED = (
    "initialize: the system prompt the client sent ({members}) was not applied; agentx "
    "takes it from its command line: pass --system-prompt or --append-system-prompt "
    "(the SDK's extraArgs)"
)


def _initialize(payload: Mapping[str, Any]) -> str | None:
    """Fieldless once :func:`~agentx.messages.initialize.means_nothing` members are dropped."""
    if not payload:
        return None
    prompt = [k for k in _PROMPT_MEMBERS if k in payload]
    if prompt:
        return (
            f"initialize cannot set {prompt[0]}; start agentx with "
            "--system-prompt or --append-system-prompt"
        )
    return f"initialize takes no fields; {next(iter(payload))!r} is rejected"


def _prompt_warning(payload: Mapping[str, Any]) -> str | None:
    """DEC-COMPAT-4: one stderr WARN when a non-empty prompt was not applied."""
    members = [k for k in _PROMPT_MEMBERS if k in payload]
    if not members:
        return None
    return PROMPT_NOT_APPLIED.format(members=", ".join(members))


def _any_payload(payload: Mapping[str, Any]) -> str | None:
    return None


def _set_model(payload: Mapping[str, Any]) -> str | None:
    if set(payload) - {"model"}:
        return f"{_first(set(payload) - {'model'})!r} is not a field of set_model"
    if payload.get("model") is not None and not isinstance(payload.get("model"), str):
        return "set_model model must be a string or null"
    return None


def _sdk_set_permission_mode(payload: Mapping[str, Any]) -> str | None:
    """DEC-PROFILE-2: ``{"mode": <a permission mode>}``."""
    if set(payload) != {"mode"} or not is_mode(payload["mode"]):
        return "set_permission_mode takes exactly a mode, one of " + ", ".join(MODES)
    return None


def _set_max_thinking_tokens(payload: Mapping[str, Any]) -> str | None:
    if set(payload) - {"max_thinking_tokens"}:
        return "set_max_thinking_tokens takes only max_thinking_tokens"
    value = payload.get("max_thinking_tokens")
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        return "max_thinking_tokens must be an integer or null"
    return None


def _cancel_async_message(payload: Mapping[str, Any]) -> str | None:
    if set(payload) != {"message_uuid"} or not isinstance(payload["message_uuid"], str):
        return "cancel_async_message takes exactly a string message_uuid"
    return None


def _stop_task(payload: Mapping[str, Any]) -> str | None:
    if set(payload) != {"task_id"} or not isinstance(payload["task_id"], str):
        return "stop_task takes exactly a string task_id"
    return None


def _rewind_files(payload: Mapping[str, Any]) -> str | None:
    from agentx.messages.checkpoints import rewind_request_problem  # noqa: PLC0415

    return rewind_request_problem(payload)


def _apply_flag_settings(payload: Mapping[str, Any]) -> str | None:
    if set(payload) != {"settings"} or not isinstance(payload["settings"], Mapping):
        return "apply_flag_settings takes exactly a settings object"
    return None


def _mcp_set_servers(payload: Mapping[str, Any]) -> str | None:
    """A complete dynamic map; each entry is checked by the MCP core, whose
    per-server errors go into the response instead of failing it."""
    if set(payload) != {"servers"} or not isinstance(payload["servers"], Mapping):
        return "mcp_set_servers takes exactly a servers object"
    from agentx.messages.mcp.config import MAX_SERVERS  # noqa: PLC0415 - DEC-CLI-3: the first use

    if len(payload["servers"]) > MAX_SERVERS:
        return f"mcp_set_servers may name at most {MAX_SERVERS} servers"
    return None


def _mcp_reconnect(payload: Mapping[str, Any]) -> str | None:
    if set(payload) != {"serverName"} or not isinstance(payload["serverName"], str):
        return "mcp_reconnect takes exactly a string serverName"
    return None


def _mcp_toggle(payload: Mapping[str, Any]) -> str | None:
    if (
        set(payload) != {"serverName", "enabled"}
        or not isinstance(payload["serverName"], str)
        or not isinstance(payload["enabled"], bool)
    ):
        return "mcp_toggle takes exactly a string serverName and a boolean enabled"
    return None


def _first(keys: Any) -> str:
    return str(sorted(keys)[0])


_CHECKS = {
    "initialize": _initialize,
    "set_permission_mode": _any_payload,
    "set_model": _set_model,
    "set_max_thinking_tokens": _set_max_thinking_tokens,
    "cancel_async_message": _cancel_async_message,
    "stop_task": _stop_task,
    "rewind_files": _rewind_files,
    "apply_flag_settings": _apply_flag_settings,
    "mcp_set_servers": _mcp_set_servers,
    "mcp_reconnect": _mcp_reconnect,
    "mcp_toggle": _mcp_toggle,
}
#: DEC-PROFILE-2: the ``sdk`` profile's checks of its live subtypes.
_SDK_CHECKS = {
    "set_model": _set_model,
    "set_permission_mode": _sdk_set_permission_mode,
}
