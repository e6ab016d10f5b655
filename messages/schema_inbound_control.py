"""The control records of the published inbound schema: ``control_request``
with the ``request`` of every installed subtype (spec "Control operations",
DEC-PROFILE-1), ``control_response`` (WIRE-PERM-040..044), the
``can_use_tool`` decision and the WIRE-PERM-022 permission update.

:data:`REQUESTS` holds the ``request`` object of each control subtype the
dispatcher installs, with the fields its check accepts; a test keeps it equal
to :func:`agentx.messages.dispatch.installed_subtypes`.
"""

from __future__ import annotations

from typing import Any

from agentx.messages.closed import closed_schema
from agentx.messages.inbound_control import (
    ERROR_MEMBERS,
    ERROR_REQUIRED,
    SUCCESS_MEMBERS,
    SUCCESS_REQUIRED,
)
from agentx.messages.mcp.config import MAX_SERVERS
from agentx.messages.permission_rules import BEHAVIORS, MODES
from agentx.messages.schema_inbound_forms import OBJECT, STRING, open_record, ref

# --- control_request (spec "Control operations", DEC-PROFILE-1) -------------


def _request(
    subtype: str, required: dict[str, Any] | None = None, optional: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The closed ``request`` object of ``subtype`` with the fields the dispatcher checks."""
    required = required or {}
    return closed_schema(
        {"subtype": {"const": subtype}, **required, **(optional or {})},
        frozenset({"subtype", *required}),
    )


def _open_request(subtype: str) -> dict[str, Any]:
    """A ``request`` object whose fields are not checked (any payload)."""
    return {
        "type": "object",
        "properties": {"subtype": {"const": subtype}},
        "required": ["subtype"],
    }


#: The ``request`` object of every subtype agentx installs (standalone and
#: extended). A well-formed set_permission_mode, set_model or
#: set_max_thinking_tokens still gets its fixed correlated error.
REQUESTS: dict[str, dict[str, Any]] = {
    # DEC-COMPAT-1: hooks null is the compatibility spelling of "no hooks".
    "initialize": _request("initialize", optional={"hooks": {"type": "null"}}),
    "interrupt": _request("interrupt"),
    "get_context_usage": _request("get_context_usage"),
    "mcp_status": _request("mcp_status"),
    "set_permission_mode": _open_request("set_permission_mode"),
    "set_model": _request("set_model", optional={"model": {"type": ["string", "null"]}}),
    "set_max_thinking_tokens": _request(
        "set_max_thinking_tokens", optional={"max_thinking_tokens": {"type": ["integer", "null"]}}
    ),
    "cancel_async_message": _request("cancel_async_message", {"message_uuid": STRING}),
    "get_settings": _request("get_settings"),
    "apply_flag_settings": _request("apply_flag_settings", {"settings": OBJECT}),
    "stop_task": _request("stop_task", {"task_id": STRING}),
    "mcp_set_servers": _request(
        "mcp_set_servers", {"servers": {"type": "object", "maxProperties": MAX_SERVERS}}
    ),
    "mcp_reconnect": _request("mcp_reconnect", {"serverName": STRING}),
    "mcp_toggle": _request("mcp_toggle", {"serverName": STRING, "enabled": {"type": "boolean"}}),
}


#: DEC-PROFILE-2: the ``request`` objects of the subtypes only the ``sdk``
#: profile installs (described here; the union above is the extended list's).
SDK_REQUESTS: dict[str, dict[str, Any]] = {
    "rewind_files": _request(
        "rewind_files", {"user_message_id": STRING}, {"dry_run": {"type": ["boolean", "null"]}}
    ),
}


def control_request() -> dict[str, Any]:
    """A request of an installed subtype carries its fields; any other string
    subtype is a well-formed envelope answered with the correlated
    unsupported-control error (DECISIONS section 1)."""
    other = {
        "type": "object",
        "properties": {"subtype": {"type": "string", "not": {"enum": sorted(REQUESTS)}}},
        "required": ["subtype"],
    }
    request = {"oneOf": [*(ref(f"control_request.{name}") for name in REQUESTS), other]}
    return open_record("control_request", request_id=STRING, request=request) | {
        "description": "WIRE-009, DEC-PROFILE-1"
    }


# --- control_response (WIRE-PERM-040..044) ----------------------------------

_RESPONSE_MEMBER_SCHEMAS: dict[str, Any] = {
    "request_id": STRING,
    "response": {
        "type": ["object", "null"],
        "description": "validated by the waiter's schema (WIRE-009); "
        "a can_use_tool answer is #/$defs/inbound.can_use_tool_decision",
    },
    "error": STRING,
    "pending_permission_requests": {"type": ["array", "null"], "items": OBJECT},
}


def _response(subtype: str, members: frozenset[str], required: frozenset[str]) -> dict[str, Any]:
    return closed_schema(
        {
            name: {"const": subtype} if name == "subtype" else _RESPONSE_MEMBER_SCHEMAS[name]
            for name in sorted(members)
        },
        required | {"request_id"},
    )


def control_response() -> dict[str, Any]:
    return open_record(
        "control_response",
        response={
            "oneOf": [
                _response("success", SUCCESS_MEMBERS, SUCCESS_REQUIRED),
                _response("error", ERROR_MEMBERS, ERROR_REQUIRED),
            ]
        },
    ) | {"description": "WIRE-PERM-040: the closed outer success | error union"}


_TOOL_USE_ID = {"type": "string", "description": "equal to the request's tool_use_id"}


def decision() -> dict[str, Any]:
    """WIRE-PERM-041..043: the success payload answering ``can_use_tool``;
    anything else resolves as a denial (WIRE-PERM-044)."""
    allow = {
        "behavior": {"const": "allow"},
        "updatedInput": {"type": ["object", "null"]},
        "updatedPermissions": {"type": ["array", "null"], "items": ref("permission_update")},
        "toolUseID": _TOOL_USE_ID,
    }
    deny = {
        "behavior": {"const": "deny"},
        "message": {"type": ["string", "null"]},
        "interrupt": {"type": "boolean"},
        "toolUseID": _TOOL_USE_ID,
    }
    behavior = frozenset({"behavior"})
    return {"oneOf": [closed_schema(allow, behavior), closed_schema(deny, behavior)]}


def permission_update() -> dict[str, Any]:
    """WIRE-PERM-022: only destination ``session`` is applied."""
    rule = closed_schema(
        {
            # the rule tool-name grammar of permission_rules (DEC-SET-2)
            "toolName": {
                "type": "string",
                "pattern": r"^[A-Za-z_][A-Za-z0-9_-]*(?:__\*)?(?![\s\S])",
            },
            "ruleContent": {"type": ["string", "null"], "pattern": r"\S"},
        },
        frozenset({"toolName"}),
    )
    add_rules = {
        "type": {"const": "addRules"},
        "rules": {"type": "array", "minItems": 1, "items": rule},
        "behavior": {"enum": list(BEHAVIORS)},
        "destination": {"const": "session"},
    }
    set_mode = {
        "type": {"const": "setMode"},
        "mode": {"enum": list(MODES)},
        "destination": {"const": "session"},
    }
    return {
        "oneOf": [
            closed_schema(add_rules, frozenset(add_rules)),
            closed_schema(set_mode, frozenset(set_mode)),
        ]
    }
