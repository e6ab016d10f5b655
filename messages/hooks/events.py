"""The hook event catalog (DEC-HOOK-1, DEC-HOOK-2).

Every event the pinned SDKs name (``HOOK_EVENTS`` of
``@anthropic-ai/claude-agent-sdk`` 0.3.334, a superset of the ``HookEvent``
literal of ``claude-agent-sdk`` 0.2.189) is accepted in settings and in
``initialize``. :data:`FIRED` are the events agentx has a moment for; the
others are accepted and never fire (a definition for one of them is kept,
as Claude Code keeps a definition for an event its session never reaches).

:func:`event_input` builds the object a hook receives: the common fields
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name``,
``permission_mode``) and the event's own fields, checked against
:data:`FIELDS` so no event leaves with a field missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, freeze

#: DEC-HOOK-1: every event name the pinned SDKs list, in their order.
HOOK_EVENTS: Final = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
    "PreSkillShellCommand",
)

#: DECISIONS section 3: the events agentx has a moment for (SubagentStart and
#: SubagentStop: each run of a subagent, :mod:`agentx.agents.runner`).
FIRED: Final = frozenset(
    {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Notification",
        "UserPromptSubmit",
        "SessionStart",
        "SessionEnd",
        "Stop",
        "StopFailure",
        "SubagentStart",
        "SubagentStop",
        "PreCompact",
        "PostCompact",
        "PermissionRequest",
        "PermissionDenied",
    }
)

#: DEC-HOOK-1: the input field a matcher is compared with; an event absent
#: here ignores matchers (every definition of it applies).
MATCHED_FIELD: Final = FrozenDict(
    PreToolUse="tool_name",
    PostToolUse="tool_name",
    PostToolUseFailure="tool_name",
    PermissionRequest="tool_name",
    PermissionDenied="tool_name",
    PreSkillShellCommand="tool_name",
    Notification="notification_type",
    SessionStart="source",
    SessionEnd="reason",
    PreCompact="trigger",
    PostCompact="trigger",
    Setup="trigger",
    SubagentStart="agent_type",
    SubagentStop="agent_type",
    StopFailure="error",
    ConfigChange="source",
    InstructionsLoaded="load_reason",
    Elicitation="mcp_server_name",
    ElicitationResult="mcp_server_name",
    FileChanged="file_path",
)

#: DEC-HOOK-2: each fired event's own required fields, beyond the common ones.
FIELDS: Final = FrozenDict(
    PreToolUse=("tool_name", "tool_input", "tool_use_id"),
    PostToolUse=("tool_name", "tool_input", "tool_response", "tool_use_id"),
    PostToolUseFailure=("tool_name", "tool_input", "tool_use_id", "error"),
    PostToolBatch=("tool_calls",),
    Notification=("message", "notification_type"),
    UserPromptSubmit=("prompt",),
    SessionStart=("source",),
    SessionEnd=("reason",),
    Stop=("stop_hook_active",),
    StopFailure=("error",),
    SubagentStart=("agent_id", "agent_type"),
    SubagentStop=("stop_hook_active", "agent_id", "agent_transcript_path", "agent_type"),
    PreCompact=("trigger", "custom_instructions"),
    PostCompact=("trigger", "compact_summary"),
    PermissionRequest=("tool_name", "tool_input", "tool_use_id"),
    PermissionDenied=("tool_name", "tool_input", "tool_use_id", "reason"),
)

#: Values of the matched field the pinned SDKs define, where they are closed.
SESSION_START_SOURCES: Final = ("startup", "resume", "clear", "compact")
#: ``ExitReason`` of the TypeScript SDK.
SESSION_END_REASONS: Final = ("clear", "resume", "logout", "prompt_input_exit", "other")
COMPACT_TRIGGERS: Final = ("manual", "auto")


class Common(Struct, frozen=True, kw_only=True):
    """The fields every hook input carries (DEC-HOOK-2)."""

    session_id: str
    transcript_path: str
    cwd: str
    permission_mode: str


class UnknownEvent(ValueError):
    """An event agentx does not fire, or fields that break its input."""


def event_input(event: str, common: Common, fields: Mapping[str, Any]) -> FrozenDict:
    """The object a hook of ``event`` receives (DEC-HOOK-2).

    Raises :class:`UnknownEvent` for an event agentx does not fire or when
    a required field is missing (a defect of the caller, never of the hook).
    """
    required = FIELDS.get(event)
    if required is None:
        raise UnknownEvent(f"agentx does not fire {event!r}")
    missing = [name for name in required if name not in fields]
    if missing:
        raise UnknownEvent(f"{event} input lacks {', '.join(missing)}")
    body: dict[str, Any] = {
        "session_id": common.session_id,
        "transcript_path": common.transcript_path,
        "cwd": common.cwd,
        "permission_mode": common.permission_mode,
        "hook_event_name": event,
    }
    body.update(fields)
    result: FrozenDict = freeze(body)
    return result


def matched_value(event: str, hook_input: Mapping[str, Any]) -> str | None:
    """The value a matcher of ``event`` is compared with (None: matchers ignored)."""
    name = MATCHED_FIELD.get(event)
    if name is None:
        return None
    value = hook_input.get(name)
    return value if isinstance(value, str) else ""
