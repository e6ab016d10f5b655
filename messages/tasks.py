"""Background task table and its ordering decisions (DEC-TURN-3, DEC-TURN-5,
WIRE-004, the spec's hard-interrupt order).

``Bash`` with ``run_in_background`` starts finite background work. This core
owns the table of those tasks and decides, from the facts it is handed (time
comes in as an argument, ids from an injected factory), which records are due:

- ``system/task_started`` when a task is registered;
- ``system/task_progress`` for every running task whose last report is at
  least ``progress_interval`` seconds old (periodic while it runs), with the
  last output line as a bounded summary;
- ``system/task_notification`` exactly once when a task ends: ``stopped`` when
  a stop was requested (``stop_task``, shutdown), ``completed`` on exit 0,
  ``failed`` otherwise (a non-zero exit, a signal, its timeout).

It also decides how long the ordinary result of a turn must still wait
(:meth:`TaskBoard.result_hold`): finite background work holds the result of
its turn until it drains, for every turn, interrupted or not (DEC-TURN-5,
scenario 9: task progress, task notification, result, suggestion, idle).
Each task's timeout bounds the hold: the result waits at most until the
latest running task's deadline (the ``Bash`` ``timeout``, default 120 s,
at most 600 s) plus :data:`RESULT_HOLD_GRACE_SECONDS` for its kill to be
reported. ``idle`` waits for the task loop to drain too (WIRE-004: the
session state core counts the tasks, see
:mod:`agentx.messages.session_state`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal

from msgspec import Struct
from msgspec.structs import replace

from agentx.messages import task_records
from agentx.messages.frozen import FrozenDict
from agentx.messages.records import Records
from agentx.messages.task_records import TaskNotificationStatus

TaskStatus = Literal["running", "completed", "failed", "stopped"]

#: ``task_type`` of a background ``Bash`` command (Claude Code's SDK vocabulary).
LOCAL_BASH: Final = "local_bash"
#: Characters kept of a task's summary line.
MAX_SUMMARY_CHARS: Final = 200
#: Characters kept of a task's description.
MAX_DESCRIPTION_CHARS: Final = 200
#: DEC-TURN-5: how long past the latest running task's deadline the result
#: still waits for the task's timeout kill to be reported.
RESULT_HOLD_GRACE_SECONDS: Final = 5.0
#: Characters of unterminated output kept while looking for the last line.
_MAX_PARTIAL_CHARS: Final = 4096


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Task(Struct, frozen=True, kw_only=True):
    """One row of the table."""

    task_id: str
    description: str
    tool_use_id: str | None
    output_file: str
    started_at: float
    reported_at: float
    #: When the task's own timeout kills it.
    deadline: float
    status: TaskStatus = "running"
    stop_requested: bool = False
    #: The last complete non-blank output line, bounded.
    last_line: str = ""
    #: Output after the last newline (bounded); becomes a line at the end.
    partial: str = ""
    #: ``task_type`` (Claude Code's SDK vocabulary).
    task_type: str = LOCAL_BASH
    #: False: the task's owner writes its own ``system/task_*`` records (a
    #: subagent knows its tokens and tool uses); the board still decides its
    #: stop, its status and how long the result waits for it.
    announce: bool = True

    def summary(self) -> str:
        return _bounded((self.partial.strip() or self.last_line), MAX_SUMMARY_CHARS)


class UnknownTask(Struct, frozen=True, kw_only=True):
    """``stop_task`` for an id this session never started."""

    task_id: str

    def error(self) -> str:
        return f"no background task with id {self.task_id!r}"


class NotRunning(Struct, frozen=True, kw_only=True):
    """``stop_task`` for a task that already ended."""

    task_id: str
    status: TaskStatus

    def error(self) -> str:
        return f"background task {self.task_id!r} is not running ({self.status})"


class Stopping(Struct, frozen=True, kw_only=True):
    """``stop_task`` accepted: the shell kills the task; it ends ``stopped``."""

    task_id: str


StopAnswer = UnknownTask | NotRunning | Stopping


class TaskBoard:
    """The task table of one session; see the module docstring.

    Not thread-safe: the actor shell serialises every call under one lock
    and emits the returned records in order while holding it.
    """

    def __init__(
        self,
        *,
        session_id: Callable[[], str],
        new_uuid: Callable[[], str],
        progress_interval: float,
    ) -> None:
        """``session_id`` is read at emit time (``/clear`` renews the id)."""
        self._session_id = session_id
        self._uuid = new_uuid
        self._interval = progress_interval
        self._tasks: dict[str, Task] = {}

    @property
    def running(self) -> int:
        return sum(1 for task in self._tasks.values() if task.status == "running")

    def get(self, task_id: str) -> Task | None:
        return self._tasks.get(task_id)

    def start(
        self,
        *,
        task_id: str,
        description: str,
        tool_use_id: str | None,
        output_file: str,
        now: float,
        timeout: float,
        task_type: str = LOCAL_BASH,
        announce: bool = True,
    ) -> Records:
        """Register a running task that its timeout (seconds) ends at the
        latest; returns its ``system/task_started`` (none when its owner
        writes its records, ``announce`` False)."""
        if task_id in self._tasks:
            raise ValueError(f"task id {task_id!r} is already in use")
        task = Task(
            task_id=task_id,
            description=_bounded(description, MAX_DESCRIPTION_CHARS),
            tool_use_id=tool_use_id,
            output_file=output_file,
            started_at=now,
            reported_at=now,
            deadline=now + timeout,
            task_type=task_type,
            announce=announce,
        )
        self._tasks[task_id] = task
        return (self._started(task),) if announce else ()

    def output(self, task_id: str, text: str) -> None:
        """New output arrived: remember its last complete line (bounded)."""
        task = self._tasks[task_id]
        *lines, partial = (task.partial + text).split("\n")
        last = next((line.strip() for line in reversed(lines) if line.strip()), None)
        self._tasks[task_id] = replace(
            task,
            last_line=_bounded(last, MAX_SUMMARY_CHARS) if last is not None else task.last_line,
            partial=partial[-_MAX_PARTIAL_CHARS:],
        )

    def progress(self, now: float) -> Records:
        """``system/task_progress`` for each running task not reported for an interval."""
        due: list[FrozenDict] = []
        for task in tuple(self._tasks.values()):
            if (
                task.status == "running"
                and task.announce
                and now - task.reported_at >= self._interval
            ):
                self._tasks[task.task_id] = replace(task, reported_at=now)
                due.append(self._progress(task, now))
        return tuple(due)

    def request_stop(self, task_id: str) -> StopAnswer:
        """``stop_task`` (DEC-PROFILE-1): decide; the shell kills on :class:`Stopping`."""
        task = self._tasks.get(task_id)
        if task is None:
            return UnknownTask(task_id=task_id)
        if task.status != "running":
            return NotRunning(task_id=task_id, status=task.status)
        self._tasks[task_id] = replace(task, stop_requested=True)
        return Stopping(task_id=task_id)

    def ended(self, task_id: str, *, exit_code: int | None, now: float) -> Records:
        """The task's process (or its work) is gone: its one ``system/task_notification``.

        ``exit_code`` is the shell's status (negative: killed by that signal;
        None: it never ran to an exit, e.g. its timeout killed it).
        """
        task = self._tasks[task_id]
        if task.status != "running":
            return ()
        status: TaskNotificationStatus
        if task.stop_requested:
            status = "stopped"
        elif exit_code == 0:
            status = "completed"
        else:
            status = "failed"
        self._tasks[task_id] = replace(task, status=status)
        if not task.announce:
            return ()
        return (self._notification(task, status, exit_code, now),)

    def result_hold(self, now: float) -> float:
        """DEC-TURN-5: seconds the ordinary result must still wait for the
        running tasks' terminal events; 0.0 when it may be written now (no
        task runs, or the latest deadline plus the grace has passed)."""
        deadlines = [task.deadline for task in self._tasks.values() if task.status == "running"]
        if not deadlines:
            return 0.0
        return max(0.0, max(deadlines) + RESULT_HOLD_GRACE_SECONDS - now)

    # -- records ---------------------------------------------------------------

    def _usage(self, task: Task, now: float) -> FrozenDict:
        # A shell command spends no model tokens and calls no tools.
        return task_records.task_usage(duration_ms=max(0, int((now - task.started_at) * 1000)))

    def _started(self, task: Task) -> FrozenDict:
        return task_records.task_started(
            task_id=task.task_id,
            description=task.description,
            task_type=LOCAL_BASH,
            tool_use_id=task.tool_use_id,
            session_id=self._session_id(),
            uuid=self._uuid(),
        )

    def _progress(self, task: Task, now: float) -> FrozenDict:
        return task_records.task_progress(
            task_id=task.task_id,
            description=task.description,
            usage=self._usage(task, now),
            summary=task.summary(),
            tool_use_id=task.tool_use_id,
            session_id=self._session_id(),
            uuid=self._uuid(),
        )

    def _notification(
        self, task: Task, status: TaskNotificationStatus, exit_code: int | None, now: float
    ) -> FrozenDict:
        return task_records.task_notification(
            task_id=task.task_id,
            status=status,
            output_file=task.output_file,
            summary=_terminal_summary(task, status, exit_code),
            usage=self._usage(task, now),
            tool_use_id=task.tool_use_id,
            session_id=self._session_id(),
            uuid=self._uuid(),
        )


def _terminal_summary(task: Task, status: TaskNotificationStatus, exit_code: int | None) -> str:
    """Claude Code's shape: ``Background command "<description>" <outcome>``."""
    if status == "stopped":
        outcome = "was stopped"
    elif status == "completed":
        outcome = "completed (exit code 0)"
    elif exit_code is None:
        outcome = "failed (timed out)"
    elif exit_code < 0:
        outcome = f"failed (killed by signal {-exit_code})"
    else:
        outcome = f"failed (exit code {exit_code})"
    line = task.summary()
    text = f'Background command "{task.description}" {outcome}'
    return _bounded(f"{text}: {line}" if line else text, MAX_SUMMARY_CHARS + MAX_DESCRIPTION_CHARS)


__all__ = [
    "LOCAL_BASH",
    "RESULT_HOLD_GRACE_SECONDS",
    "NotRunning",
    "StopAnswer",
    "Stopping",
    "Task",
    "TaskBoard",
    "TaskStatus",
    "UnknownTask",
]
