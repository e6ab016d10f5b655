"""The one ordered shutdown of a session (DECISIONS section 8).

Every ending (input drained, fatal input, output failure, internal failure,
signal) runs the same steps under one overall deadline,
:data:`SHUTDOWN_SECONDS`; each wait takes what is left of it, and a party
that does not finish in time is reported and left behind (a daemon thread)
while the exit status already decided stands. Nothing sleeps and nothing
polls: every wait ends the moment what it waits for is done.

The order follows who calls whom (``actors/__init__.py``):

1. the input: routing halts, so nothing new reaches any party; the upload
   timer stops;
2. the dispatcher stops; the runner is told to stop (the active turn is
   cancelled and still writes its ``result``; nothing queued runs) while, at
   the same time, the background tasks are killed and every ``on_shutdown``
   step runs (child process groups), each on its own thread;
3. the runner stops once its worker ended, then the arbiter, the upload
   manager (open lifecycles abort, their temp files go) and the MCP manager
   stop together (each may still ask the broker), then the broker;
4. the writer drains what it accepted and stops (its flush syncs the
   transcript first); the internal-event log and the transcript close.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

import pykka

from agentx.actors import turn_runner
from agentx.actors.host_output import Output, Session
from agentx.actors.host_steps import Control, Input, Supervisor
from agentx.actors.host_turns import Turns
from agentx.actors.supervision import EXIT_OK, EXIT_OUTPUT_FAILED, Failed
from agentx.actors.turn_output import flush_events
from agentx.diagnostics import logger

if TYPE_CHECKING:
    from agentx.hooks.session import SessionHooks

#: The one deadline of the whole shutdown.
SHUTDOWN_SECONDS: Final = 10.0
#: The part of it SessionEnd hooks may take (DECISIONS section 3).
SESSION_END_SECONDS: Final = 5.0


class Deadline:
    def __init__(self, seconds: float) -> None:
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        return max(0.0, self._end - time.monotonic())


class Shutdown:
    """The steps above, over whatever the start steps got to."""

    def __init__(
        self,
        session: Session,
        *,
        output: Output | None,
        control: Control | None,
        turns: Turns | None,
        supervisor: Supervisor | None,
        input_: Input | None,
        on_shutdown: tuple[Callable[[], None], ...] = (),
        seconds: float = SHUTDOWN_SECONDS,
    ) -> None:
        self._s = session
        self._output = output
        self._control = control
        self._turns = turns
        self._supervisor = supervisor
        self._input = input_
        self._on_shutdown = on_shutdown
        self._deadline = Deadline(seconds)

    def run(self) -> int:
        """Carry out every step; the exit status."""
        healthy = True
        try:
            self._stop_input()
            steps = self._side_steps()
            self._stop_turns()
            self._stop_control()
            self._join(steps)
            healthy = self._stop_output()
        except Exception as exc:
            self._s.supervision.report(Failed("the shutdown", exc))
        finally:
            flush_events(self._s.events, close=True)
            if self._s.parts.transcript is not None:
                self._s.parts.transcript.close()
        code = self._s.supervision.code  # a failure while stopping is status 4
        # DECISIONS section 8: a latched output failure is status 3 even when
        # the input side had already finished cleanly.
        return EXIT_OUTPUT_FAILED if not healthy and code == EXIT_OK else code

    # -- 1. input ---------------------------------------------------------------

    def _stop_input(self) -> None:
        if self._input is None:
            return
        self._input.timer.stop()
        if not self._input.reader.stop(self._deadline.left()):
            logger.error("the reader did not stop in time")

    # -- 2. the turn, the tasks, the children ---------------------------------

    def _side_steps(self) -> list[threading.Thread]:
        """Every ``on_shutdown`` step in order, then the background tasks'
        end (each reports ``stopped``), on a thread of their own started as
        the runner is asked to stop (a cancelled turn's result may wait for
        its tasks to end)."""
        steps: list[Callable[[], None]] = list(self._on_shutdown)
        if self._turns is not None and self._turns.hooks is not None:
            # DECISIONS section 3: SessionEnd before the children are stopped (its
            # hooks are children too), bounded by SESSION_END_SECONDS.
            steps.insert(0, functools.partial(_session_end, self._turns.hooks))
        if self._turns is not None:
            steps.append(self._turns.tasks.shutdown)
        if self._supervisor is not None:
            self._await(self._supervisor.ref)
        if self._turns is not None:
            with contextlib.suppress(pykka.ActorDeadError):
                self._turns.runner.tell(turn_runner.Shutdown())
        thread = threading.Thread(
            target=_in_order(steps), name="agentx-shutdown-steps", daemon=True
        )
        thread.start()
        return [thread]

    def _join(self, threads: Iterable[threading.Thread]) -> None:
        for thread in threads:
            thread.join(self._deadline.left())
            if thread.is_alive():
                logger.error("a shutdown step did not finish in time")

    def _stop_turns(self) -> None:
        if self._turns is not None:
            self._await(self._turns.runner)

    # -- 3. control -------------------------------------------------------------

    def _stop_control(self) -> None:
        control = self._control
        if control is None:
            return
        refs: list[pykka.ActorRef[Any]] = [control.arbiter, control.uploads.ref]
        # A deferred manager that never started has nothing to stop (DEC-CLI-3).
        if control.mcp is not None and control.mcp.ref is not None:
            refs.append(control.mcp.ref)
        self._await(*refs)
        self._await(control.broker.actor_ref)

    # -- 4. output --------------------------------------------------------------

    def _stop_output(self) -> bool:
        """Drain the writer; False when the output had failed."""
        if self._output is None:
            return True
        try:
            healthy = self._output.sink.drain(timeout=self._deadline.left())
        except pykka.Timeout:
            logger.error("the writer did not drain in time")
            healthy = False
        except pykka.ActorDeadError:
            healthy = False
        self._await(self._output.writer)
        return healthy

    def _await(self, *refs: pykka.ActorRef[Any]) -> None:
        """Stop ``refs`` together; each gets what is left of the deadline."""
        stopping = [(ref, ref.stop(block=False)) for ref in refs]
        for ref, future in stopping:
            try:
                future.get(timeout=self._deadline.left())
            except pykka.Timeout:
                logger.error("{} did not stop in time", ref.actor_class.__name__)


def _in_order(steps: Iterable[Callable[[], None]]) -> Callable[[], None]:
    """The steps one after the other; a failing step is logged and the
    others still run."""

    def run() -> None:
        for step in steps:
            try:
                step()
            except Exception as exc:
                logger.error("a shutdown step failed: {}", type(exc).__name__)
                logger.opt(exception=exc).debug("the failure's traceback")

    return run


def _session_end(hooks: SessionHooks) -> None:
    """DECISIONS section 3: SessionEnd (reason ``other``) on every ending; hooks still
    running after SESSION_END_SECONDS are stopped. It writes no hook records:
    the session's last record is its final ``idle`` (WIRE-004)."""
    end = time.monotonic() + SESSION_END_SECONDS
    hooks.fire(
        "SessionEnd", {"reason": "other"}, cancelled=lambda: time.monotonic() >= end, quiet=True
    )
