"""The background task records: ``system/task_started``, ``system/task_progress``
and the one terminal ``system/task_notification`` (DEC-TURN-3; Claude Code's
SDK vocabulary). The task board that decides when each is sent is
:mod:`agentx.messages.tasks`; ids are injected, never generated here.
"""

from __future__ import annotations

from typing import Any, Literal

from agentx.messages.frozen import FrozenDict

TaskNotificationStatus = Literal["completed", "failed", "stopped"]


def task_usage(*, duration_ms: int, total_tokens: int = 0, tool_uses: int = 0) -> FrozenDict:
    """``usage`` of the ``system/task_*`` records (Claude Code's ``TaskUsage``)."""
    return FrozenDict(total_tokens=total_tokens, tool_uses=tool_uses, duration_ms=duration_ms)


def _task_record(subtype: str, fields: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "system", "subtype": subtype, **fields}
    if tool_use_id is not None:
        record["tool_use_id"] = tool_use_id
    return record


def task_started(
    *,
    task_id: str,
    description: str,
    task_type: str,
    tool_use_id: str | None,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    """``system/task_started`` (DEC-TURN-3): task id, description, optional tool-use id, type."""
    record = _task_record(
        "task_started",
        {"task_id": task_id, "description": description, "task_type": task_type},
        tool_use_id,
    )
    return FrozenDict(record, uuid=uuid, session_id=session_id)


def task_progress(
    *,
    task_id: str,
    description: str,
    usage: FrozenDict,
    summary: str,
    tool_use_id: str | None,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    """``system/task_progress``: periodic while a background task runs."""
    record = _task_record(
        "task_progress",
        {"task_id": task_id, "description": description, "usage": usage, "summary": summary},
        tool_use_id,
    )
    return FrozenDict(record, uuid=uuid, session_id=session_id)


def task_notification(
    *,
    task_id: str,
    status: TaskNotificationStatus,
    output_file: str,
    summary: str,
    usage: FrozenDict,
    tool_use_id: str | None,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    """``system/task_notification``: the one terminal event of a background task."""
    record = _task_record(
        "task_notification",
        {
            "task_id": task_id,
            "status": status,
            "output_file": output_file,
            "summary": summary,
            "usage": usage,
        },
        tool_use_id,
    )
    return FrozenDict(record, uuid=uuid, session_id=session_id)
