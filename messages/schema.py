"""The published record schema (WIRE-021): one JSON Schema document
(draft 2020-12) for every record agentx reads or writes, closed where the spec
is closed (``additionalProperties: false``), with the protocol's version
numbers in it. ``agentx schema`` prints it; the end-to-end suite validates
every stdout record it sees against it, so the schema cannot drift from the
records the code emits without a failing test.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from agentx.messages import schema_inbound
from agentx.messages.attachment_limits import input_capabilities
from agentx.messages.closed import closed_schema
from agentx.messages.frozen import thaw

SCHEMA_ID = "https://agentx.invalid/schema/sdk-wire-protocol.json"
#: Which side writes a record: agentx (``outbound``) or the driving program.
Direction = Literal["outbound", "inbound"]
PROTOCOL_VERSIONS = {"content_version": 1, "attachment_import": 1, "discovery": 1, "auth_json": 2}

_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
_BOOL = {"type": "boolean"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_STR_OR_NULL = {"type": ["string", "null"]}
_OBJ = {"type": "object"}
_SESSION = {"uuid": _STR, "session_id": _STR}


def _record(
    required: dict[str, Any], optional: dict[str, Any] | None = None, **consts: str
) -> dict[str, Any]:
    """A closed object: every member named, ``consts`` pin discriminators."""
    properties = {name: {"const": value} for name, value in consts.items()}
    properties |= required | (optional or {})
    return closed_schema(properties, [*consts, *required])


_USAGE = _record(
    {
        "input_tokens": _INT,
        "output_tokens": _INT,
        "cache_creation_input_tokens": _INT,
        "cache_read_input_tokens": _INT,
    }
)
_MANIFEST = _record(
    {
        "attachment_id": _STR,
        "kind": {"enum": ["image", "document"]},
        "name": _STR,
        "mime_type": _STR,
        "size_bytes": _INT,
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "storage_id": {"type": "string", "pattern": "^blob_sha256_[0-9a-f]{64}$"},
    },
    type="attachment_ref",
)
_REASONING = _record(
    {"supported": _BOOL, "efforts": {"type": "array", "items": _STR}, "defaultEffort": _STR_OR_NULL}
)
_STATES = {"enum": ["idle", "running", "requires_action"]}
_RESULT_SUBTYPES = [
    "success",
    "error_during_execution",
    "error_max_turns",
    "error_max_budget_usd",
    "error_max_structured_output_retries",
]
_ERROR_CATEGORIES = [
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "invalid_request",
    "server_error",
    "unknown",
    "max_output_tokens",
]
_HOOK_ID = {"hook_id": _STR, "hook_name": _STR, "hook_event": _STR}
_TASK_USAGE = _record({"total_tokens": _INT, "tool_uses": _INT, "duration_ms": _INT})

OUTBOUND: dict[str, dict[str, Any]] = {
    "system_init": _record(
        {
            "apiKeySource": {"enum": ["user", "temporary"]},
            "agentx_version": _STR,
            "cwd": _STR,
            "tools": {"type": "array", "items": _STR},
            "mcp_servers": {"type": "array", "items": _record({"name": _STR, "status": _STR})},
            "provider": _STR,
            "provider_type": _STR,
            "model": _STR,
            "reasoning_capabilities": _REASONING,
            "permissionMode": _STR,
            "slash_commands": {"type": "array", "items": _STR},
            "output_style": _STR,
            "skills": {"type": "array"},
            "plugins": {"type": "array"},
            "control_profile": {"enum": ["standalone", "extended", "sdk"]},
            **_SESSION,
        },
        # Exactly the advertised object (WIRE-023): the value is a const.
        # DEC-AUTH-4: provider_notice only when the offline echo provider answers.
        {
            "input_capabilities": {"const": thaw(input_capabilities())},
            "provider_notice": _STR,
            "fallback_model": _STR,
            # DEC-PERM-BASH-5: what the Bash sandbox enforces in this session.
            "sandbox": _record(
                {
                    "enabled": _BOOL,
                    "tier": {"enum": ["namespaces", "landlock", "none"]},
                    "network": {"enum": ["off", "unrestricted"]},
                    "reason": _STR_OR_NULL,
                }
            ),
        },
        type="system",
        subtype="init",
    ),
    "session_state_changed": _record(
        {"state": _STATES, **_SESSION}, type="system", subtype="session_state_changed"
    ),
    "api_retry": _record(
        {
            "attempt": _INT,
            "max_retries": _INT,
            "retry_delay_ms": _INT,
            "error_status": {"type": ["integer", "null"]},
            "error": {"enum": _ERROR_CATEGORIES},
            **_SESSION,
        },
        type="system",
        subtype="api_retry",
    ),
    "model_fallback": _record(
        {"from_model": _STR, "to_model": _STR, "reason": _STR, **_SESSION},
        type="system",
        subtype="model_fallback",
    ),
    "status": _record(
        {"status": {"enum": ["compacting", None]}, **_SESSION}, type="system", subtype="status"
    ),
    "compact_boundary": _record(
        {
            "compact_metadata": _record(
                {"trigger": {"enum": ["manual", "auto"]}, "pre_tokens": _INT},
                {
                    "preserved_segment": _record(
                        {"head_uuid": _STR, "anchor_uuid": _STR, "tail_uuid": _STR}
                    )
                },
            ),
            **_SESSION,
        },
        type="system",
        subtype="compact_boundary",
    ),
    "local_command_output": _record(
        {"content": _STR, **_SESSION}, type="system", subtype="local_command_output"
    ),
    "informational": _record(
        {
            "content": _STR,
            "level": {"enum": ["info", "notice", "suggestion", "warning"]},
            **_SESSION,
        },
        type="system",
        subtype="informational",
    ),
    "hook_started": _record({**_HOOK_ID, **_SESSION}, type="system", subtype="hook_started"),
    "hook_progress": _record(
        {**_HOOK_ID, "stdout": _STR, "stderr": _STR, "output": _STR, **_SESSION},
        type="system",
        subtype="hook_progress",
    ),
    "hook_response": _record(
        {
            **_HOOK_ID,
            "stdout": _STR,
            "stderr": _STR,
            "output": _STR,
            "outcome": {"enum": ["success", "error", "cancelled"]},
            **_SESSION,
        },
        {"exit_code": {"type": "integer"}},
        type="system",
        subtype="hook_response",
    ),
    "assistant": _record(
        {
            "message": _record(
                {
                    "id": _STR,
                    "type": {"const": "message"},
                    "role": {"const": "assistant"},
                    "model": _STR,
                    "content": {"type": "array", "items": _OBJ},
                    "stop_reason": _STR_OR_NULL,
                    "stop_sequence": {"type": "null"},
                    "usage": _USAGE,
                }
            ),
            "parent_tool_use_id": _STR_OR_NULL,
            **_SESSION,
        },
        {"error": {"enum": _ERROR_CATEGORIES}},
        type="assistant",
    ),
    "user": _record(
        {"message": _OBJ, "parent_tool_use_id": _STR_OR_NULL, **_SESSION},
        {
            "isReplay": {"const": True},
            "isSynthetic": {"const": True},
            "tool_use_result": {},
            "priority": {"enum": ["now", "next", "later"]},
            "timestamp": _STR,
        },
        type="user",
    ),
    "result": _record(
        {
            "subtype": {"enum": _RESULT_SUBTYPES},
            "is_error": _BOOL,
            "duration_ms": _INT,
            "duration_api_ms": _INT,
            "num_turns": _INT,
            "stop_reason": _STR_OR_NULL,
            "total_cost_usd": _NUM_OR_NULL,
            "usage": _USAGE,
            "modelUsage": {
                "type": "object",
                "additionalProperties": _record(
                    {
                        "inputTokens": _INT,
                        "outputTokens": _INT,
                        "cacheReadInputTokens": _INT,
                        "cacheCreationInputTokens": _INT,
                        "costUSD": _NUM_OR_NULL,
                    }
                ),
            },
            "permission_denials": {
                "type": "array",
                "items": _record({"tool_name": _STR, "tool_use_id": _STR, "tool_input": _OBJ}),
            },
            **_SESSION,
        },
        {
            "result": _STR,
            "errors": {"type": "array", "items": _STR},
            "prompt_uuid": _STR,
            "structured_output": _OBJ,
        },
        type="result",
    ),
    "stream_event": _record(
        {"event": _OBJ, "parent_tool_use_id": _STR_OR_NULL, **_SESSION}, type="stream_event"
    ),
    "tool_use_summary": _record(
        {"summary": _STR, "preceding_tool_use_ids": {"type": "array", "items": _STR}, **_SESSION},
        type="tool_use_summary",
    ),
    "tool_progress": _record(
        {
            "tool_use_id": _STR,
            "tool_name": _STR,
            "parent_tool_use_id": _STR_OR_NULL,
            "elapsed_time_seconds": {"type": "number", "minimum": 0},
            **_SESSION,
        },
        type="tool_progress",
    ),
    "rate_limit_event": _record({"rate_limit_info": _OBJ, **_SESSION}, type="rate_limit_event"),
    # DEC-STORE-1 ``--session-mirror``: the SDKs' session_store frame.
    "transcript_mirror": _record(
        {"filePath": _STR, "entries": {"type": "array", "items": _OBJ}}, type="transcript_mirror"
    ),
    # DEC-TURN-3: a background Bash command (local_bash) or a subagent (local_agent).
    "task_started": _record(
        {
            "task_id": _STR,
            "description": _STR,
            "task_type": {"enum": ["local_bash", "local_agent"]},
            **_SESSION,
        },
        {
            "tool_use_id": _STR,
            "subagent_type": _STR,
            "is_backgrounded": {"type": "boolean"},
            "spawn_depth": _INT,
            "prompt": _STR,
        },
        type="system",
        subtype="task_started",
    ),
    "task_progress": _record(
        {"task_id": _STR, "description": _STR, "usage": _TASK_USAGE, **_SESSION},
        {"tool_use_id": _STR, "summary": _STR, "subagent_type": _STR, "last_tool_name": _STR},
        type="system",
        subtype="task_progress",
    ),
    "task_notification": _record(
        {
            "task_id": _STR,
            "status": {"enum": ["completed", "failed", "stopped"]},
            "output_file": _STR,
            "summary": _STR,
            "usage": _TASK_USAGE,
            **_SESSION,
        },
        {"tool_use_id": _STR},
        type="system",
        subtype="task_notification",
    ),
    "prompt_suggestion": _record({"suggestion": _STR, **_SESSION}, type="prompt_suggestion"),
    "post_turn_summary": _record(
        {
            "summarizes_uuid": _STR,
            "status_category": {
                "enum": ["blocked", "waiting", "completed", "review_ready", "failed"]
            },
            "status_detail": _STR,
            "is_noteworthy": _BOOL,
            "title": _STR,
            "description": _STR,
            "recent_action": _STR,
            "needs_action": _STR,
            "artifact_urls": {"type": "array", "items": _STR},
            **_SESSION,
        },
        type="system",
        subtype="post_turn_summary",
    ),
    "control_request": _record(
        {"request_id": _STR, "request": {"type": "object", "required": ["subtype"]}},
        type="control_request",
    ),
    "control_response": _record(
        {
            "response": {
                "oneOf": [
                    _record({"request_id": _STR}, {"response": {}}, subtype="success"),
                    _record(
                        {"request_id": _STR, "error": _STR},
                        {"pending_permission_requests": {"type": "array"}},
                        subtype="error",
                    ),
                ]
            }
        },
        type="control_response",
    ),
    "control_cancel_request": _record({"request_id": _STR}, type="control_cancel_request"),
    "attachment_import_result": _record(
        {
            "version": {"const": 1},
            "upload_id": _STR,
            "attachment_id": _STR,
            "status": {"enum": ["accepted", "committed", "aborted", "expired", "failed"]},
            "terminal": _BOOL,
            "prompt_uuid": _STR,
            **_SESSION,
        },
        {"reason": _STR, "attachment": _MANIFEST},
        type="attachment_import_result",
    ),
    "attachment_import_rejected": _record(
        {
            "version": {"const": 1},
            "operation": _STR,
            "upload_id": _STR,
            "status": {"const": "rejected"},
            "terminal": {"const": False},
            "reason": _STR,
            **_SESSION,
        },
        {"attachment_id": _STR, "prompt_uuid": _STR},
        type="attachment_import_rejected",
    ),
}


def document(direction: Direction | None = None) -> dict[str, Any]:
    """The whole schema: a record of either direction validates against it.

    ``$defs`` holds every record definition, namespaced ``outbound.`` and
    ``inbound.``, plus the unions ``outbound`` and ``inbound`` (each a
    ``oneOf``). The top level is their ``anyOf``, not a ``oneOf``: some records
    are valid in both directions (a control_response, a user record, the
    assistant/system records the input side accepts as prior context).
    ``direction`` narrows the top level to one union; the end-to-end suite
    validates stdout with ``document("outbound")``. Each call returns a fresh
    document: the caller may change it without changing the next one.
    """
    defs: dict[str, Any] = {f"outbound.{name}": schema for name, schema in OUTBOUND.items()}
    defs |= schema_inbound.DEFINITIONS
    defs["outbound"] = {"oneOf": [{"$ref": f"#/$defs/outbound.{name}"} for name in OUTBOUND]}
    defs["inbound"] = schema_inbound.UNION
    top: dict[str, Any] = (
        {"anyOf": [{"$ref": "#/$defs/outbound"}, {"$ref": "#/$defs/inbound"}]}
        if direction is None
        else {"$ref": f"#/$defs/{direction}"}
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "agentx record (Structured SDK Wire Protocol)",
        "x-protocol-versions": PROTOCOL_VERSIONS,
        "$defs": copy.deepcopy(defs),
        **top,
    }
