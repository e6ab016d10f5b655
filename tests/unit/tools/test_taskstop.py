"""``TaskStop`` (DEC-PROFILE-1 ``stop_task``, DEC-TURN-3): input, aliases
and the same task-table decisions as ``stop_task``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.tasks import NotRunning, Stopping, TaskBoard
from agentx.tools.base import ToolContext
from agentx.tools.registry import BUILTIN_TOOLS
from agentx.tools.taskstop import ALIASES, MAX_TASK_ID_CHARS, TaskStopTool
from agentx.turns.background import TaskFacts, TaskTicket
from agentx.turns.cancel import CancelScope


class _Table:
    """A launcher over the real task board (no process): stop decides there."""

    def __init__(self) -> None:
        self.board = TaskBoard(session_id=lambda: "s", new_uuid=lambda: "u", progress_interval=1)
        self.board.start(
            task_id="task_1",
            description="sleep 60",
            tool_use_id=None,
            output_file="f",
            now=0.0,
            timeout=10.0,
        )
        self.stopped: list[str] = []

    def start(
        self,
        *,
        command: str,
        description: str,
        tool_use_id: str | None,
        cwd: Path,
        env: Mapping[str, str],
        timeout_ms: int,
        argv: Sequence[str] | None = None,
    ) -> TaskTicket:
        raise OSError("not here")

    def stop(self, task_id: str) -> str | None:
        answer = self.board.request_stop(task_id)
        if isinstance(answer, Stopping):
            self.stopped.append(task_id)
            self.board.ended(task_id, exit_code=-15, now=1.0)
            return None
        return answer.error()

    def described(self, task_id: str) -> TaskFacts | None:
        task = self.board.get(task_id)
        if task is None:
            return None
        return TaskFacts(task_id=task_id, task_type="local_bash", description=task.description)


def _run(table: _Table | None, **tool_input: Any) -> Any:
    ctx = ToolContext(cwd=Path("/"), env={}, background=table)
    return TaskStopTool().run(tool_input, ctx, CancelScope())


@pytest.mark.parametrize("member", ["task_id", "shell_id"])
def test_stops_a_running_task(member: str) -> None:
    table = _Table()
    result = _run(table, **{member: "task_1"})
    assert not result.is_error
    assert json.loads(result.content) == {
        "message": "Successfully stopped task: task_1 (sleep 60)",
        "task_id": "task_1",
        "task_type": "local_bash",
        "command": "sleep 60",
    }
    assert table.stopped == ["task_1"]
    again = _run(table, task_id="task_1")  # the same decision stop_task gets
    assert (
        again.is_error and NotRunning(task_id="task_1", status="stopped").error() in again.content
    )


@pytest.mark.parametrize(
    ("tool_input", "problem"),
    [
        ({"task_id": "nope"}, "no background task with id 'nope'"),
        ({}, "missing required parameter 'task_id'"),
        ({"task_id": ""}, "missing required parameter 'task_id'"),
        ({"task_id": 5}, "must be a string"),
        ({"task_id": "t", "pid": 1}, "unexpected parameter 'pid'"),
        ({"task_id": "x" * (MAX_TASK_ID_CHARS + 1)}, "longer than"),
    ],
)
def test_refusals(tool_input: dict[str, Any], problem: str) -> None:
    table = _Table()
    result = _run(table, **tool_input)
    assert result.is_error and problem in result.content
    assert table.stopped == []


def test_id_at_the_bound_is_looked_up() -> None:
    result = _run(_Table(), task_id="x" * MAX_TASK_ID_CHARS)
    assert result.is_error and "no background task" in result.content


def test_without_background_tasks() -> None:
    assert "runs no background tasks" in _run(None, task_id="task_1").content


def test_registry_knows_the_aliases_without_loading() -> None:
    (entry,) = [tool for tool in BUILTIN_TOOLS if tool.name == "TaskStop"]
    assert entry.aliases == ALIASES  # type: ignore[attr-defined]
    assert entry.read_only is True
