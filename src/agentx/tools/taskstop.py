"""``TaskStop``: the model stops one of the session's background tasks
(DEC-TURN-3, DEC-PROFILE-1 ``stop_task``).

Claude Code's input: ``task_id`` (``shell_id`` is its deprecated spelling;
the model may also call the tool by its old names ``KillShell`` and
``KillBash``, see :data:`ALIASES`). The stop goes through the same task
table decision as the SDKs' ``stop_task`` control request
(:meth:`agentx.messages.tasks.TaskBoard.request_stop`): an id this session
never started, or a task that already ended, is a tool error naming it; an
accepted stop kills the task's process group and the task ends ``stopped``
with its one ``system/task_notification``. The result is Claude Code's
output object as JSON (``message``, ``task_id``, ``task_type``, ``command``).
It changes no file and asks nobody: stopping is always allowed, as in
Claude Code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentx.providers.base import CancelToken
from agentx.tools.base import (
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_members,
    error,
    get_optional_str,
    invalid_input,
    output,
)
from agentx.tools.specs import TASK_STOP

#: Claude Code's earlier names for this tool; a ``tool_use`` by one of them runs it.
ALIASES: Final = ("KillShell", "KillBash")
#: The longest task id looked up (ids agentx makes are far shorter).
MAX_TASK_ID_CHARS: Final = 256


def task_id_of(input: Mapping[str, Any]) -> str:
    """The task to stop: ``task_id``, else the deprecated ``shell_id``."""
    check_members(input, TASK_STOP)
    task_id = get_optional_str(input, "task_id") or get_optional_str(input, "shell_id")
    if not task_id:
        raise ToolInputError("missing required parameter 'task_id'")
    if len(task_id) > MAX_TASK_ID_CHARS:
        raise ToolInputError(f"parameter 'task_id' is longer than {MAX_TASK_ID_CHARS} characters")
    return task_id


class TaskStopTool:
    name: Final = "TaskStop"
    spec: Final = TASK_STOP
    #: It changes no file and runs no program: plan mode lets it stop work too.
    read_only: Final = True

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"Stop background task {task_id_of(input)}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            task_id = task_id_of(input)
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        tasks = ctx.background
        if tasks is None:
            return error("TaskStop: this session runs no background tasks")
        refused = tasks.stop(task_id)
        if refused is not None:
            return error(f"TaskStop: {refused}")
        facts = tasks.described(task_id)
        task_type = facts.task_type if facts is not None else "unknown"
        command = facts.description if facts is not None else ""
        report = {
            "message": f"Successfully stopped task: {task_id} ({command})",
            "task_id": task_id,
            "task_type": task_type,
            "command": command,
        }
        return output(json.dumps(report, ensure_ascii=False))
