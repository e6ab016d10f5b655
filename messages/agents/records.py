"""What a subagent's run writes (DEC-TURN-3, Claude Code's stream-json).

- Its ``assistant`` and ``user`` (tool result) records, and its
  ``stream_event`` and ``tool_progress`` records, carry ``parent_tool_use_id``
  = the id of the ``Agent`` tool use that started it (:func:`tagged`). As
  Claude Code does, only its ``tool_use`` blocks and tool results are
  written by default; its text and thinking blocks (and its partial
  ``stream_event`` records) only with ``forwardSubagentText``.
- Its task records (:mod:`agentx.messages.task_records`, ``task_type``
  ``local_agent``): ``system/task_started`` when it starts,
  ``system/task_progress`` after each of its model calls that used tools,
  and one ``system/task_notification`` when it ends, with its usage.
- The ``Agent`` tool's result for the parent: the subagent's final text, then
  its id and a ``<usage>`` trailer (:func:`result_text`); for a background
  subagent a launch note (:func:`launched_text`), and its result later in a
  ``<task-notification>`` message (:func:`notification_text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agentx.messages import task_records
from agentx.messages.frozen import FrozenDict
from agentx.messages.records import Records
from agentx.messages.task_records import TaskNotificationStatus

#: ``task_type`` of a subagent (Claude Code's SDK vocabulary).
LOCAL_AGENT: Final = "local_agent"
#: Characters of the prompt a ``task_started`` record carries.
MAX_PROMPT_SHOWN: Final = 10_000
#: Characters of a task description kept.
MAX_DESCRIPTION: Final = 200

#: Records a subagent's run writes with its parent's tool-use id.
_TAGGED: Final = frozenset({"assistant", "user", "stream_event", "tool_progress"})


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tagged(records: Records, *, parent_tool_use_id: str, forward_text: bool) -> Records:
    """``records`` of a subagent's run as its parent's stream shows them."""
    shown: list[Mapping[str, Any]] = []
    for record in records:
        kind = record.get("type")
        if kind == "tool_use_summary":
            continue  # the parent's batch summary covers the Agent tool use
        if kind not in _TAGGED:
            shown.append(record)
            continue
        if kind == "stream_event" and not forward_text:
            continue
        fields: Mapping[str, Any] = record
        if kind == "assistant" and not forward_text:
            message = record["message"]
            kept = tuple(b for b in message["content"] if b.get("type") == "tool_use")
            if not kept:
                continue
            fields = FrozenDict(record, message=FrozenDict(message, content=kept))
        shown.append(FrozenDict(fields, parent_tool_use_id=parent_tool_use_id))
    return tuple(shown)


def task_started(
    *,
    task_id: str,
    description: str,
    subagent_type: str,
    prompt: str,
    background: bool,
    tool_use_id: str,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    record = task_records.task_started(
        task_id=task_id,
        description=_bounded(description, MAX_DESCRIPTION),
        task_type=LOCAL_AGENT,
        tool_use_id=tool_use_id,
        session_id=session_id,
        uuid=uuid,
    )
    return FrozenDict(
        record,
        subagent_type=subagent_type,
        is_backgrounded=background,
        spawn_depth=1,
        prompt=_bounded(prompt, MAX_PROMPT_SHOWN),
    )


def task_progress(
    *,
    task_id: str,
    description: str,
    subagent_type: str,
    usage: FrozenDict,
    last_tool_name: str | None,
    tool_use_id: str,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    record = task_records.task_progress(
        task_id=task_id,
        description=_bounded(description, MAX_DESCRIPTION),
        usage=usage,
        summary="",
        tool_use_id=tool_use_id,
        session_id=session_id,
        uuid=uuid,
    )
    # Claude Code sends a summary only with agentProgressSummaries (not taken).
    fields = {k: v for k, v in record.items() if k != "summary"}
    if last_tool_name is not None:
        fields["last_tool_name"] = last_tool_name
    return FrozenDict(fields, subagent_type=subagent_type)


def notification_summary(description: str, status: TaskNotificationStatus) -> str:
    outcome = {"completed": "completed", "failed": "failed", "stopped": "was stopped"}[status]
    return f'Agent "{_bounded(description, MAX_DESCRIPTION)}" {outcome}'


def task_notification(
    *,
    task_id: str,
    description: str,
    status: TaskNotificationStatus,
    output_file: str,
    usage: FrozenDict,
    tool_use_id: str,
    session_id: str,
    uuid: str,
) -> FrozenDict:
    return task_records.task_notification(
        task_id=task_id,
        status=status,
        output_file=output_file,
        summary=notification_summary(description, status),
        usage=usage,
        tool_use_id=tool_use_id,
        session_id=session_id,
        uuid=uuid,
    )


def result_text(
    final_text: str, *, agent_id: str, total_tokens: int, tool_uses: int, duration_ms: int
) -> str:
    """The ``Agent`` tool's result: the subagent's final text, its id and its usage."""
    trailer = (
        f"agentId: {agent_id}\n<usage>total_tokens: {total_tokens}\n"
        f"tool_uses: {tool_uses}\nduration_ms: {duration_ms}</usage>"
    )
    return f"{final_text}\n\n{trailer}" if final_text else trailer


def launched_text(agent_id: str, description: str) -> str:
    """The ``Agent`` tool's result for a background subagent."""
    return (
        f"Async agent launched: agentId: {agent_id} ({_bounded(description, MAX_DESCRIPTION)}). "
        "It works in the background; its result reaches you in a task notification "
        "before your turn ends. Do not wait or poll for it."
    )


def notification_text(
    *, agent_id: str, description: str, status: TaskNotificationStatus, result: str
) -> str:
    """A finished background subagent, as its parent's model reads it."""
    return (
        "<task-notification>\n"
        f"<task-id>{agent_id}</task-id>\n"
        f"<status>{status}</status>\n"
        f"<summary>{notification_summary(description, status)}</summary>\n"
        f"<result>{result}</result>\n"
        "</task-notification>"
    )


__all__ = [
    "LOCAL_AGENT",
    "launched_text",
    "notification_summary",
    "notification_text",
    "result_text",
    "tagged",
    "task_notification",
    "task_progress",
    "task_started",
]
