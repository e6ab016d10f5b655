"""The inbound half of the published record schema (WIRE-021).

Every record definition is built from the decoder's own member tables and
grammars (:mod:`agentx.messages.inbound`) and the permission catalog's
vocabularies (:mod:`agentx.messages.permission_rules`), so a member added to
the decoder shows up here. :data:`REQUESTS` holds the ``request`` object of
each control subtype the dispatcher installs, with the fields its check
accepts; a test keeps it equal to
:func:`agentx.messages.dispatch.installed_subtypes`. A definition is closed
(``additionalProperties: false``) exactly where the decoder is closed: the
``user`` record and its message and blocks, ``attachment_import``, and the
inner ``control_response`` union. The envelopes whose other members the
decoder ignores (``control_request``, ``control_response``, ``keep_alive``,
``update_environment_variables``) and the prior-context
``assistant``/``system`` records stay open.

What JSON Schema cannot say, and the decoder checks anyway: duplicate member
names and the JSON layer (WIRE-001, WIRE-014: a schema sees a parsed value),
the 8,388,608-byte line bound of ``attachment_import`` (WIRE-018), that a
number like ``1.0`` is not an integer (JSON Schema's data model equates it
with ``1``), chunk ``data`` being canonical base64 within the chunk bounds
(checked by the upload core, not the decoder), and a decision's ``toolUseID``
equalling the request's ``tool_use_id`` (WIRE-PERM-042).
"""

from __future__ import annotations

import re
from typing import Any

from agentx.messages.closed import closed_schema
from agentx.messages.inbound import ATTACHMENT_ID, RFC4122, SHA256, STORAGE_ID, UPLOAD_ID
from agentx.messages.inbound_control import (
    ERROR_MEMBERS,
    ERROR_REQUIRED,
    SUCCESS_MEMBERS,
    SUCCESS_REQUIRED,
)
from agentx.messages.inbound_import import IMPORT_FORMS
from agentx.messages.inbound_user import (
    ATTACHMENT_KINDS,
    ATTACHMENT_REF_MEMBERS,
    MESSAGE_MEMBERS,
    MESSAGE_REQUIRED,
    PRIORITIES,
    TEXT_BLOCK_MEMBERS,
    TEXT_BLOCK_TYPES,
    USER_ALIASES,
    USER_MEMBERS,
    USER_OPTIONAL_TYPES,
    USER_REQUIRED,
)
from agentx.messages.mcp_config import MAX_SERVERS
from agentx.messages.permission_rules import BEHAVIORS, MODES

#: The namespace of every inbound definition in the document's ``$defs``.
PREFIX = "inbound."

_STR: dict[str, Any] = {"type": "string"}
_OBJ: dict[str, Any] = {"type": "object"}
_JSON_TYPE = {str: "string", bool: "boolean"}


def _ref(name: str) -> dict[str, str]:
    """A reference to the inbound definition ``name`` (without the prefix)."""
    return {"$ref": f"#/$defs/{PREFIX}{name}"}


def _grammar(grammar: re.Pattern[str]) -> dict[str, Any]:
    """A string matching the decoder's grammar in full. The end is a lookahead
    for no further character: ``$`` would let Python's ``re`` (which
    ``jsonschema`` uses) accept a trailing newline that ``fullmatch`` refuses."""
    return {"type": "string", "pattern": f"^(?:{grammar.pattern})(?![\\s\\S])"}


def _open_record(type_: str, **members: Any) -> dict[str, Any]:
    """An envelope the decoder routes by ``type`` and reads only ``members`` of."""
    return {
        "type": "object",
        "properties": {"type": {"const": type_}, **members},
        "required": ["type", *members],
    }


# --- user (WIRE-017, WIRE-021, DEC-ALIAS-1, DEC-COMPAT-2) -------------------

_CANONICAL_TO_ALIAS = {canonical: alias for alias, canonical in USER_ALIASES.items()}
#: Member schemas; an optional member that is JSON null counts as absent.
_USER_MEMBER_SCHEMAS: dict[str, Any] = {
    "type": {"const": "user"},
    "message": _ref("user.message"),
    "parent_tool_use_id": {"type": ["string", "null"]},
    "priority": {"enum": [*sorted(PRIORITIES), None]},
    "tool_use_result": {},
    **{name: {"type": [_JSON_TYPE[kind], "null"]} for name, kind in USER_OPTIONAL_TYPES},
}


def _effective(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The member ``name`` after DEC-ALIAS-1 renaming is present and matches
    ``schema``: the canonical spelling, or its alias when that is absent."""
    canonical = {"required": [name], "properties": {name: schema}}
    alias = _CANONICAL_TO_ALIAS.get(name)
    if alias is None:
        return canonical
    return {
        "anyOf": [
            canonical,
            {"not": {"required": [name]}, "required": [alias], "properties": {alias: schema}},
        ]
    }


def _user() -> dict[str, Any]:
    """An alias is an accepted spelling of its canonical member: it must match
    the canonical schema unless the canonical member is present, which wins and
    drops the alias whatever its value (DEC-ALIAS-1)."""
    record = closed_schema(
        {name: _USER_MEMBER_SCHEMAS[name] for name in sorted(USER_MEMBERS)}
        | {alias: {} for alias in sorted(USER_ALIASES)},
        (USER_REQUIRED - _CANONICAL_TO_ALIAS.keys()) | {"type"},
    )
    conditions = [
        *(
            {
                "anyOf": [
                    {"required": [canonical]},
                    {"properties": {alias: _USER_MEMBER_SCHEMAS[canonical]}},
                ]
            }
            for alias, canonical in sorted(USER_ALIASES.items())
        ),
        *(
            {"anyOf": [{"required": [name]}, {"required": [_CANONICAL_TO_ALIAS[name]]}]}
            for name in sorted(USER_REQUIRED & _CANONICAL_TO_ALIAS.keys())
        ),
        {  # the replay form requires UUID and session ID (spec "Input records")
            "if": _effective("isReplay", {"const": True}),
            "then": {"allOf": [_effective("uuid", _STR), _effective("session_id", _STR)]},
        },
    ]
    return record | {"allOf": conditions, "description": "WIRE-017, WIRE-021, DEC-ALIAS-1"}


def _message_form(
    members: frozenset[str], required: frozenset[str], content: dict[str, Any]
) -> dict[str, Any]:
    schemas = {"role": {"const": "user"}, "content_version": {"const": 1}, "content": content}
    return closed_schema({name: schemas[name] for name in sorted(members)}, required)


def _message() -> dict[str, Any]:
    """The WIRE-017 union: a string, ``{role?, content: string | text blocks}``,
    or ``{role?, content_version: 1, content: [text | attachment_ref, ...]}``."""
    text_blocks = {"type": "array", "minItems": 1, "items": _ref("user.text_block")}
    versioned_blocks = {
        "type": "array",
        "minItems": 1,
        "items": {"oneOf": [_ref("user.text_block"), _ref("user.attachment_ref")]},
    }
    legacy = MESSAGE_MEMBERS - {"content_version"}
    return {
        "oneOf": [
            _STR,
            _message_form(legacy, MESSAGE_REQUIRED, {"oneOf": [_STR, text_blocks]}),
            _message_form(
                MESSAGE_MEMBERS, MESSAGE_REQUIRED | {"content_version"}, versioned_blocks
            ),
        ],
        "description": "WIRE-017: content_version 1 is mandatory when any attachment_ref appears",
    }


_POSITIVE = {"type": "integer", "minimum": 1}
_ATTACHMENT_MEMBER_SCHEMAS: dict[str, Any] = {
    "type": {"const": "attachment_ref"},
    "attachment_id": _grammar(ATTACHMENT_ID),
    "kind": {"enum": sorted(ATTACHMENT_KINDS)},
    "name": _STR,
    "mime_type": _STR,
    "size_bytes": _POSITIVE,
    "sha256": _grammar(SHA256),
    "storage_id": _grammar(STORAGE_ID),
}


# --- attachment_import (WIRE-018) -------------------------------------------

_IMPORT_MEMBER_SCHEMAS: dict[str, Any] = {
    "type": {"const": "attachment_import"},
    "version": {"const": 1},
    "upload_id": _grammar(UPLOAD_ID),
    "prompt_uuid": _grammar(RFC4122),
    "attachment_id": _grammar(ATTACHMENT_ID),
    "name": _STR,
    "size_bytes": _POSITIVE,
    "mime_type": _STR,
    "sha256": _grammar(SHA256),
    "sequence": {"type": "integer", "minimum": 0},
    "data": {"type": "string", "description": "strict padded base64, checked by the upload"},
}


def _attachment_import() -> dict[str, Any]:
    """The four closed request forms; every shown member is required."""
    return _open_record("attachment_import") | {
        "oneOf": [
            closed_schema(
                {
                    name: {"const": operation}
                    if name == "operation"
                    else _IMPORT_MEMBER_SCHEMAS[name]
                    for name in sorted(members)
                },
                members,
            )
            for operation, members in IMPORT_FORMS.items()
        ],
        "description": "WIRE-018; a line over 8,388,608 bytes is fatal",
    }


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
    "cancel_async_message": _request("cancel_async_message", {"message_uuid": _STR}),
    "get_settings": _request("get_settings"),
    "apply_flag_settings": _request("apply_flag_settings", {"settings": _OBJ}),
    "stop_task": _request("stop_task", {"task_id": _STR}),
    "mcp_set_servers": _request(
        "mcp_set_servers", {"servers": {"type": "object", "maxProperties": MAX_SERVERS}}
    ),
    "mcp_reconnect": _request("mcp_reconnect", {"serverName": _STR}),
    "mcp_toggle": _request("mcp_toggle", {"serverName": _STR, "enabled": {"type": "boolean"}}),
}


def _control_request() -> dict[str, Any]:
    """A request of an installed subtype carries its fields; any other string
    subtype is a well-formed envelope answered with the correlated
    unsupported-control error (DECISIONS section 1)."""
    other = {
        "type": "object",
        "properties": {"subtype": {"type": "string", "not": {"enum": sorted(REQUESTS)}}},
        "required": ["subtype"],
    }
    request = {"oneOf": [*(_ref(f"control_request.{name}") for name in REQUESTS), other]}
    return _open_record("control_request", request_id=_STR, request=request) | {
        "description": "WIRE-009, DEC-PROFILE-1"
    }


# --- control_response (WIRE-PERM-040..044) ----------------------------------

_RESPONSE_MEMBER_SCHEMAS: dict[str, Any] = {
    "request_id": _STR,
    "response": {
        "type": ["object", "null"],
        "description": "validated by the waiter's schema (WIRE-009); "
        "a can_use_tool answer is #/$defs/inbound.can_use_tool_decision",
    },
    "error": _STR,
    "pending_permission_requests": {"type": ["array", "null"], "items": _OBJ},
}


def _response(subtype: str, members: frozenset[str], required: frozenset[str]) -> dict[str, Any]:
    return closed_schema(
        {
            name: {"const": subtype} if name == "subtype" else _RESPONSE_MEMBER_SCHEMAS[name]
            for name in sorted(members)
        },
        required | {"request_id"},
    )


def _control_response() -> dict[str, Any]:
    return _open_record(
        "control_response",
        response={
            "oneOf": [
                _response("success", SUCCESS_MEMBERS, SUCCESS_REQUIRED),
                _response("error", ERROR_MEMBERS, ERROR_REQUIRED),
            ]
        },
    ) | {"description": "WIRE-PERM-040: the closed outer success | error union"}


_TOOL_USE_ID = {"type": "string", "description": "equal to the request's tool_use_id"}


def _decision() -> dict[str, Any]:
    """WIRE-PERM-041..043: the success payload answering ``can_use_tool``;
    anything else resolves as a denial (WIRE-PERM-044)."""
    allow = {
        "behavior": {"const": "allow"},
        "updatedInput": {"type": ["object", "null"]},
        "updatedPermissions": {"type": ["array", "null"], "items": _ref("permission_update")},
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


def _permission_update() -> dict[str, Any]:
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


# --- the rest ------------------------------------------------------------------

_ENV_VARIABLES = {
    "type": "object",
    "propertyNames": {"minLength": 1, "not": {"pattern": r"[=\u0000]"}},
    "additionalProperties": {"type": "string", "not": {"pattern": r"\u0000"}},
}

#: Every inbound record definition, in the order of the ``inbound`` union.
_RECORDS: dict[str, dict[str, Any]] = {
    "user": _user(),
    "control_request": _control_request(),
    "control_response": _control_response(),
    "attachment_import": _attachment_import(),
    "keep_alive": _open_record("keep_alive") | {"description": "ignored semantically"},
    "update_environment_variables": _open_record(
        "update_environment_variables", variables=_ENV_VARIABLES
    ),
    "assistant": _open_record("assistant") | {"description": "prior context, never executed"},
    "system": _open_record("system") | {"description": "prior context, never executed"},
}
#: The definitions the records refer to.
_PARTS: dict[str, dict[str, Any]] = {
    "user.message": _message(),
    "user.text_block": closed_schema(
        {"type": {"enum": sorted(TEXT_BLOCK_TYPES)}, "text": _STR}, TEXT_BLOCK_MEMBERS
    ),
    "user.attachment_ref": closed_schema(
        {name: _ATTACHMENT_MEMBER_SCHEMAS[name] for name in sorted(ATTACHMENT_REF_MEMBERS)},
        ATTACHMENT_REF_MEMBERS,
    ),
    **{f"control_request.{name}": schema for name, schema in REQUESTS.items()},
    "can_use_tool_decision": _decision(),
    "permission_update": _permission_update(),
}

#: Every inbound definition under its ``$defs`` name.
DEFINITIONS: dict[str, dict[str, Any]] = {
    f"{PREFIX}{name}": schema for name, schema in (_RECORDS | _PARTS).items()
}
#: Any one inbound record: exactly one record definition matches.
UNION: dict[str, Any] = {"oneOf": [_ref(name) for name in _RECORDS]}
