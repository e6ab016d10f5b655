"""Background tasks: the thread shell around :class:`~agentx.messages.tasks.TaskBoard`
(DEC-TURN-3, DEC-TURN-5, WIRE-004, DEC-PROFILE-1 ``stop_task``, the hard-interrupt order).

:class:`BackgroundTasks` is the ``Bash`` tool's launcher. Each task gets one
watcher thread that pumps its :class:`~agentx.turns.background.BackgroundCommand`
(output to the task's file), reports ``system/task_progress`` when the board
says one is due, and emits the one ``system/task_notification`` when the
process is gone. Every board call and the emission of the records it returns
happen under one condition lock, so the order the board decides is the order
the writer receives; the turn's result waits on the same lock
(:meth:`BackgroundTasks.hold_result`) until its finite tasks have ended, for
every turn (DEC-TURN-5, scenario 9), at most as long as their timeouts allow.

The board is built (and :mod:`agentx.messages.tasks` imported) by the first
call that needs it, under that lock: a session that starts no task never
loads it, and until then no task runs, so there is no result to hold and
nothing to stop (start-up, DEC-CLI-3).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agentx.diagnostics import logger
from agentx.messages.records import RecordSink
from agentx.tools.process import ChildProcesses
from agentx.turns.cancel import CancelScope

if TYPE_CHECKING:
    from agentx.messages.tasks import TaskBoard
    from agentx.turns.background import BackgroundCommand, TaskFacts, TaskTicket

#: ``system/task_progress`` cadence for a running task.
TASK_PROGRESS_SECONDS: Final = 1.0
#: The longest single wait of a watcher for output or exit.
_PUMP_SECONDS: Final = 0.25
#: How long shutdown waits for each killed task's watcher to report.
_JOIN_SECONDS: Final = 5.0


def remove_task_dir(tasks_dir: Path) -> None:
    """``--no-session-persistence`` keeps nothing on disk (README, DEC-STORE-1):
    the session's task directory goes at shutdown, and its parent with it
    when no other session's directory is left there."""
    import shutil  # noqa: PLC0415 - at shutdown, not at start (DEC-CLI-3)

    shutil.rmtree(tasks_dir, ignore_errors=True)
    with contextlib.suppress(OSError):  # another session's tasks are still there
        tasks_dir.parent.rmdir()


class BackgroundTasks:
    """The session's background tasks; see the module docstring.

    ``on_started``/``on_ended`` tell the turn output's ordering core
    (WIRE-004: ``idle`` waits for the task loop to drain); ``on_ended`` also
    receives the task's id and terminal status for the internal-event log.
    """

    def __init__(
        self,
        *,
        new_board: Callable[[], TaskBoard],
        emit: RecordSink,
        tasks_dir: Path,
        new_uuid: Callable[[], str],
        on_started: Callable[[], None],
        on_ended: Callable[[str, str], None],
        clock: Callable[[], float] = time.monotonic,
        children: ChildProcesses | None = None,
        ephemeral: bool = False,
    ) -> None:
        self._children = children or ChildProcesses()
        self._ephemeral = ephemeral
        self._new_board = new_board
        self._built: TaskBoard | None = None
        self._emit = emit
        self._dir = tasks_dir
        self._uuid = new_uuid
        self._on_started = on_started
        self._on_ended = on_ended
        self._clock = clock
        self._cond = threading.Condition()
        self._commands: dict[str, BackgroundCommand] = {}
        #: DEC-TURN-3: background work that is not a process (a subagent), by task id.
        self._work: dict[str, CancelScope] = {}
        self._watchers: list[threading.Thread] = []
        self._closed = False

    @property
    def _board(self) -> TaskBoard:
        """The task board, built on first use (module docstring); every
        caller holds ``self._cond``."""
        if self._built is None:
            self._built = self._new_board()
        return self._built

    # -- the launcher (the Bash tool, on the turn worker thread) -------------

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
        # DEC-CLI-3: the command shell loads with the first task, not at start.
        from agentx.turns.background import BackgroundCommand, TaskTicket  # noqa: PLC0415

        task_id = f"task_{self._uuid()[-12:]}"
        output_file = self._dir / f"{task_id}.output"
        with self._cond:
            if self._closed:
                raise OSError("the session is shutting down")
            now = self._clock()
            proc = BackgroundCommand(
                command,
                cwd=cwd,
                env=env,
                output_file=output_file,
                timeout_ms=timeout_ms,
                now=now,
                children=self._children,
                argv=argv,
            )
            self._commands[task_id] = proc
            self._emit(
                self._board.start(
                    task_id=task_id,
                    description=description,
                    tool_use_id=tool_use_id,
                    output_file=str(output_file),
                    now=now,
                    timeout=timeout_ms / 1000,
                )
            )
            self._on_started()
            watcher = threading.Thread(
                target=self._watch, args=(task_id, proc), name="agentx-task", daemon=True
            )
            self._watchers.append(watcher)
            watcher.start()
        return TaskTicket(task_id=task_id, output_file=str(output_file))

    def start_work(
        self,
        *,
        task_id: str,
        description: str,
        tool_use_id: str | None,
        task_type: str,
        timeout: float,
        work: Callable[[CancelScope], bool],
    ) -> None:
        """Background work that is not a process (a subagent, DEC-TURN-3):
        ``work(scope)`` runs on a thread of its own and writes its own task
        records; it returns whether it succeeded. ``stop_task``, shutdown and
        its ``timeout`` (seconds) cancel its scope; the turn's result waits
        for it as for a background command (DEC-TURN-5)."""
        with self._cond:
            if self._closed:
                raise OSError("the session is shutting down")
            scope = CancelScope()
            self._board.start(
                task_id=task_id,
                description=description,
                tool_use_id=tool_use_id,
                output_file="",
                now=self._clock(),
                timeout=timeout,
                task_type=task_type,
                announce=False,
            )
            self._work[task_id] = scope
            self._on_started()
            timer = threading.Timer(timeout, scope.cancel)
            timer.daemon = True
            thread = threading.Thread(
                target=self._run_work,
                args=(task_id, work, scope, timer),
                name="agentx-task",
                daemon=True,
            )
            self._watchers.append(thread)
            timer.start()
            thread.start()

    def _run_work(
        self,
        task_id: str,
        work: Callable[[CancelScope], bool],
        scope: CancelScope,
        timer: threading.Timer,
    ) -> None:
        ok = False
        try:
            ok = work(scope)
        except Exception:  # a defect still ends the task
            logger.exception("background task {} failed", task_id)
        finally:
            timer.cancel()
        with self._cond:
            self._board.ended(task_id, exit_code=0 if ok else 1, now=self._clock())
            self._work.pop(task_id, None)
            task = self._board.get(task_id)
            self._cond.notify_all()
        if task is not None:
            self._on_ended(task_id, task.status)

    # -- the watcher threads ---------------------------------------------------

    def _watch(self, task_id: str, proc: BackgroundCommand) -> None:
        try:
            while not proc.done:
                text = proc.pump(_PUMP_SECONDS, self._clock())
                with self._cond:
                    if text:
                        self._board.output(task_id, text)
                    due = self._board.progress(self._clock())
                    if due:
                        self._emit(due)
        except Exception:  # a defect must still end the task with its notification
            logger.exception("background task {} failed", task_id)
            proc.kill()
        with self._cond:
            records = self._board.ended(task_id, exit_code=proc.exit_code, now=self._clock())
            self._emit(records)
            self._commands.pop(task_id, None)
            task = self._board.get(task_id)
            self._cond.notify_all()
        if records and task is not None:
            self._on_ended(task_id, task.status)

    # -- control ---------------------------------------------------------------

    def stop(self, task_id: str) -> str | None:
        """``stop_task``: None when accepted (the task ends ``stopped``), else the error."""
        from agentx.messages.tasks import Stopping  # noqa: PLC0415 - with the board (DEC-CLI-3)

        with self._cond:
            answer = self._board.request_stop(task_id)
            if not isinstance(answer, Stopping):
                return answer.error()
            proc = self._commands.get(task_id)
            scope = self._work.get(task_id)
        if proc is not None:
            proc.kill()
        if scope is not None:
            scope.cancel()
        return None

    def described(self, task_id: str) -> TaskFacts | None:
        """The ``TaskStop`` tool's report of a task (generic over task kinds)."""
        from agentx.turns.background import TaskFacts  # noqa: PLC0415 - DEC-CLI-3

        with self._cond:
            task = self._board.get(task_id)
        if task is None:
            return None
        return TaskFacts(task_id=task_id, task_type=task.task_type, description=task.description)

    def hold_result(self) -> None:
        """Block until the board lets the ordinary result be written
        (DEC-TURN-5): every task ended, or the hold its timeouts bound ran out."""
        with self._cond:
            if self._built is None:  # no task ever started: nothing to wait for
                return
            while (wait := self._board.result_hold(self._clock())) > 0:
                self._cond.wait(wait)
            if self._board.running:
                logger.warning(
                    "{} background task(s) outlived their timeout; the result is written",
                    self._board.running,
                )

    def stop_all(self) -> None:
        """Shutdown's first step: no task starts any more and every running
        one will report ``stopped`` (the session's child registry then
        TERMs and KILLs their groups)."""
        with self._cond:
            self._closed = True
            for task_id in (*self._commands, *self._work):
                self._board.request_stop(task_id)
            scopes = tuple(self._work.values())
        for scope in scopes:
            scope.cancel()

    def shutdown(self) -> None:
        """Kill every running task; each still ends with its notification."""
        self.stop_all()
        with self._cond:
            for proc in self._commands.values():
                proc.kill()
            watchers = tuple(self._watchers)
        for watcher in watchers:
            watcher.join(_JOIN_SECONDS)
        if self._ephemeral:
            remove_task_dir(self._dir)
