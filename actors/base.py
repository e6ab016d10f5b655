"""Shared actor plumbing: the inbox and the supervision every agentx actor uses.

pykka's ThreadingActor defaults to ``queue.Queue``, whose per-message locking
costs several times a ``queue.SimpleQueue`` on this hardware; pykka lets an
actor choose its inbox (only ``put``/``get``/``empty`` are used).

Supervision (DECISIONS section 8): a message an actor was *told* that raises
stops the actor and calls ``on_failure``; here that becomes one
:class:`~agentx.actors.supervision.Failed` report to the session's
:class:`~agentx.actors.supervision.ExitLatch`, after the actor's own
:meth:`Actor.contain` released what it holds. A failing ``on_start`` or
``on_stop`` is reported the same way (pykka calls no ``on_failure`` for those).
An *asked* message that raises is the asker's: pykka hands the exception to
its future, and every agentx asker either ``.get()``s it or owns the failure.

Deadlines (DECISIONS section 8: no state waits without a deadline). An asker
that blocks on another actor's answer waits through :func:`answer_within`,
at most :data:`ASK_SECONDS` unless the asker was given another bound. An
answer that does not come in time is the asked actor's internal failure: one
:class:`~agentx.actors.supervision.Failed` report naming it (exit 4, one ERROR
line), and the asker gets :class:`AskExpired` and fails closed (a permission
ask that could not be delivered denies, a control request is answered with an
error).
"""

from __future__ import annotations

import queue
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeVar

import pykka

from agentx.actors.supervision import ExitLatch, Failed, failure_line
from agentx.diagnostics import logger

if TYPE_CHECKING:
    from pykka._actor import ActorInbox

T = TypeVar("T")

#: The longest a blocking ask of one actor may wait for its answer
#: (DECISIONS section 8: no state waits without a deadline; who may block on
#: whom is the picture in :mod:`agentx.actors`). Every party asked this way
#: answers from its own state or after handing records to the writer, so an
#: honest answer takes milliseconds; the bound is generous because media
#: admission of a large commit may run ahead of an ask in the upload
#: manager's inbox.
ASK_SECONDS: Final = 60.0


class AskExpired(Exception):
    """An asked actor did not answer within its deadline (DECISIONS section 8).

    The expiry was already reported to the session's supervision; whoever
    catches this fails closed and need not report it again.
    """

    def __init__(self, where: str, seconds: float) -> None:
        super().__init__(where, seconds)
        self.where = where
        self.seconds = seconds

    def __str__(self) -> str:
        return f"{self.where} did not answer within {self.seconds:g} s"


def answer_within(
    future: pykka.Future[T], seconds: float, *, where: str, supervision: ExitLatch | None
) -> T:
    """The answer in ``future``, waited for at most ``seconds``.

    On expiry the asked actor ``where`` is reported as failed (one ERROR line;
    with ``supervision`` the session ends with exit 4) and :class:`AskExpired`
    is raised. An exception the asked actor raised propagates unchanged.
    """
    try:
        return future.get(timeout=seconds)
    except pykka.Timeout:
        error = AskExpired(where, seconds)
        report_expired(error, supervision)
        raise error from None


def report_expired(error: AskExpired, supervision: ExitLatch | None) -> None:
    """Report an expired deadline as ``error.where``'s internal failure."""
    if supervision is None:
        logger.error(failure_line(error.where, error))
        return
    supervision.report(Failed(error.where, error))


class Actor(pykka.ThreadingActor):
    """A ThreadingActor with a SimpleQueue inbox and a supervisor to report to.

    ``supervision`` is the session's exit latch; an actor started without one
    (the actor tests) logs its failure's one line and nothing else.

    Every actor runs on a daemon thread: the host's shutdown stops each one
    within its one deadline, and one that does not stop in time is reported
    and left behind; it never holds the process's exit (DECISIONS section 8:
    nothing waits without a deadline).
    """

    use_daemon_thread = True

    def __init__(self, *, supervision: ExitLatch | None = None) -> None:
        super().__init__()
        self._supervision = supervision
        self._reported = False

    @staticmethod
    def _create_actor_inbox() -> ActorInbox:
        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        return inbox

    def contain(self) -> None:
        """Release what this actor holds before its failure is reported (the
        turn runner cancels its turn so the result is written first)."""

    def on_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.report_failure(exception_value)

    def _handle_failure(
        self,
        exception_type: type[BaseException] | None,
        exception_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        # pykka's one hook for every failure on the actor thread: on_start,
        # on_stop, and a told message (whose on_failure follows and finds the
        # report made).
        super()._handle_failure(exception_type, exception_value, traceback)
        self.report_failure(exception_value)

    def report_failure(self, error: BaseException | None) -> None:
        """Contain, then report ``error`` to the supervisor, once per actor."""
        if self._reported:
            return
        self._reported = True
        try:
            self.contain()
        finally:
            self._report(error)

    def _report(self, error: BaseException | None) -> None:
        where = type(self).__name__
        failure = error if error is not None else RuntimeError("unknown failure")
        if self._supervision is None:
            logger.error(failure_line(where, failure))
            return
        self._supervision.report(Failed(where, failure))
