"""The inbound half of the published record schema (WIRE-021).

Every record definition is built from the decoder's own member tables and
grammars (:mod:`agentx.messages.inbound`) and the permission catalog's
vocabularies (:mod:`agentx.messages.permission_rules`), so a member added to
the decoder shows up here. The control records are built in
:mod:`agentx.messages.schema_inbound_control`, the shared building blocks are
:mod:`agentx.messages.schema_inbound_forms`. A definition is closed
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

from typing import Any

from agentx.messages.closed import closed_schema
from agentx.messages.inbound import ATTACHMENT_ID, RFC4122, SHA256, STORAGE_ID, UPLOAD_ID
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
from agentx.messages.schema_inbound_control import (
    REQUESTS,
    SDK_REQUESTS,
    control_request,
    control_response,
    decision,
    permission_update,
)
from agentx.messages.schema_inbound_forms import (
    JSON_TYPE,
    PREFIX,
    STRING,
    grammar,
    open_record,
    ref,
)

# --- user (WIRE-017, WIRE-021, DEC-ALIAS-1, DEC-COMPAT-2) -------------------

_CANONICAL_TO_ALIAS = {canonical: alias for alias, canonical in USER_ALIASES.items()}
#: Member schemas; an optional member that is JSON null counts as absent.
_USER_MEMBER_SCHEMAS: dict[str, Any] = {
    "type": {"const": "user"},
    "message": ref("user.message"),
    "parent_tool_use_id": {"type": ["string", "null"]},
    "priority": {"enum": [*sorted(PRIORITIES), None]},
    "tool_use_result": {},
    **{name: {"type": [JSON_TYPE[kind], "null"]} for name, kind in USER_OPTIONAL_TYPES},
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
            "then": {"allOf": [_effective("uuid", STRING), _effective("session_id", STRING)]},
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
    text_blocks = {"type": "array", "minItems": 1, "items": ref("user.text_block")}
    versioned_blocks = {
        "type": "array",
        "minItems": 1,
        "items": {"oneOf": [ref("user.text_block"), ref("user.attachment_ref")]},
    }
    legacy = MESSAGE_MEMBERS - {"content_version"}
    return {
        "oneOf": [
            STRING,
            _message_form(legacy, MESSAGE_REQUIRED, {"oneOf": [STRING, text_blocks]}),
            _message_form(
                MESSAGE_MEMBERS, MESSAGE_REQUIRED | {"content_version"}, versioned_blocks
            ),
        ],
        "description": "WIRE-017: content_version 1 is mandatory when any attachment_ref appears",
    }


_POSITIVE = {"type": "integer", "minimum": 1}
_ATTACHMENT_MEMBER_SCHEMAS: dict[str, Any] = {
    "type": {"const": "attachment_ref"},
    "attachment_id": grammar(ATTACHMENT_ID),
    "kind": {"enum": sorted(ATTACHMENT_KINDS)},
    "name": STRING,
    "mime_type": STRING,
    "size_bytes": _POSITIVE,
    "sha256": grammar(SHA256),
    "storage_id": grammar(STORAGE_ID),
}


# --- attachment_import (WIRE-018) -------------------------------------------

_IMPORT_MEMBER_SCHEMAS: dict[str, Any] = {
    "type": {"const": "attachment_import"},
    "version": {"const": 1},
    "upload_id": grammar(UPLOAD_ID),
    "prompt_uuid": grammar(RFC4122),
    "attachment_id": grammar(ATTACHMENT_ID),
    "name": STRING,
    "size_bytes": _POSITIVE,
    "mime_type": STRING,
    "sha256": grammar(SHA256),
    "sequence": {"type": "integer", "minimum": 0},
    "data": {"type": "string", "description": "strict padded base64, checked by the upload"},
}


def _attachment_import() -> dict[str, Any]:
    """The four closed request forms; every shown member is required."""
    return open_record("attachment_import") | {
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


# --- the rest ------------------------------------------------------------------

_ENV_VARIABLES = {
    "type": "object",
    "propertyNames": {"minLength": 1, "not": {"pattern": r"[=\u0000]"}},
    "additionalProperties": {"type": "string", "not": {"pattern": r"\u0000"}},
}

#: Every inbound record definition, in the order of the ``inbound`` union.
_RECORDS: dict[str, dict[str, Any]] = {
    "user": _user(),
    "control_request": control_request(),
    "control_response": control_response(),
    "attachment_import": _attachment_import(),
    "keep_alive": open_record("keep_alive") | {"description": "ignored semantically"},
    "update_environment_variables": open_record(
        "update_environment_variables", variables=_ENV_VARIABLES
    ),
    "assistant": open_record("assistant") | {"description": "prior context, never executed"},
    "system": open_record("system") | {"description": "prior context, never executed"},
}
#: The definitions the records refer to.
_PARTS: dict[str, dict[str, Any]] = {
    "user.message": _message(),
    "user.text_block": closed_schema(
        {"type": {"enum": sorted(TEXT_BLOCK_TYPES)}, "text": STRING}, TEXT_BLOCK_MEMBERS
    ),
    "user.attachment_ref": closed_schema(
        {name: _ATTACHMENT_MEMBER_SCHEMAS[name] for name in sorted(ATTACHMENT_REF_MEMBERS)},
        ATTACHMENT_REF_MEMBERS,
    ),
    **{f"control_request.{name}": schema for name, schema in REQUESTS.items()},
    **{f"control_request.{name}": schema for name, schema in SDK_REQUESTS.items()},
    "can_use_tool_decision": decision(),
    "permission_update": permission_update(),
}

#: Every inbound definition under its ``$defs`` name.
DEFINITIONS: dict[str, dict[str, Any]] = {
    f"{PREFIX}{name}": schema for name, schema in (_RECORDS | _PARTS).items()
}
#: Any one inbound record: exactly one record definition matches.
UNION: dict[str, Any] = {"oneOf": [ref(name) for name in _RECORDS]}
