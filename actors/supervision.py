"""The root of the supervision tree: how a session ends (DECISIONS section 8).

Every way a session can end reaches one :class:`ExitLatch` as one message:

- :class:`RunnerDrained`: input closed and every accepted turn has its result
  (DEC-EOF-1): status 0, or 1 after a fatal input stream (WIRE-001, recorded
  first as :class:`InputFailed`);
- :class:`OutputFailed`: the writer latched a failure (WIRE-013/015): 3;
- :class:`Failed`: an actor's ``on_failure`` (:class:`agentx.actors.base.Actor`)
  or an uncaught exception in a thread agentx started (``threading.excepthook``,
  installed by :func:`supervise_threads`): 4, with one ERROR line naming where
  and the exception type (the traceback only at DEBUG, that is ``--verbose``);
- :class:`StoreFailed`: the session store failed a sync barrier
  (DEC-STORE-6): 4, with one ERROR line naming the store's error (its
  messages are credential-free); the results it held were dropped;
- :class:`Signalled`: SIGINT, SIGTERM or SIGHUP reached the CLI: 128+N.

The first ending decides the status; an internal failure after a clean end
(0 or 1) still turns it into 4, since a defect must never pass as a clean end.
The host's main thread waits in :meth:`ExitLatch.wait` and then runs the
ordered shutdown under one deadline (:mod:`agentx.actors.host`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from msgspec import Struct

from agentx.diagnostics import logger

EXIT_OK: Final = 0
EXIT_FATAL_INPUT: Final = 1
EXIT_OUTPUT_FAILED: Final = 3
EXIT_INTERNAL: Final = 4
#: Thread names that mark a thread agentx started (``threading.excepthook``).
THREAD_PREFIX: Final = "agentx-"


class InputFailed(Struct, frozen=True):
    """WIRE-001: the input ended on a fatal record; the drained status is 1."""


class RunnerDrained(Struct, frozen=True):
    """Every admitted turn after EOF has its result (DEC-EOF-1)."""


class OutputFailed(Struct, frozen=True):
    kind: str


class Failed(Struct, frozen=True):
    """An internal failure: ``where`` names the actor or thread."""

    where: str
    error: BaseException


class StoreFailed(Struct, frozen=True):
    """DEC-STORE-6: a sync barrier failed; ``reason`` is the store's
    credential-free error."""

    reason: str


class Signalled(Struct, frozen=True):
    signum: int


Ending = InputFailed | RunnerDrained | OutputFailed | Failed | StoreFailed | Signalled


def signal_status(signum: int) -> int:
    """DECISIONS section 8: 128+N (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
    return 128 + signum


def failure_line(where: str, error: BaseException) -> str:
    """The one diagnostic of an internal failure: where, and the exception's
    type only (its text may quote anything, credentials included)."""
    return f"internal failure in {where}: {type(error).__name__}"


class ExitLatch:
    """The first decided ending wins; ``wait`` blocks the host's main thread.

    Thread-safe: any thread may :meth:`report`, and so may a signal handler
    on the main thread (nothing here blocks for longer than a lock hold).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._code = EXIT_OK
        self._drained_code = EXIT_OK
        self._failed = False
        self._signalled = False

    def report(self, message: Ending) -> None:
        with self._lock:
            if isinstance(message, InputFailed):
                self._drained_code = EXIT_FATAL_INPUT
            elif isinstance(message, RunnerDrained):
                self._decide(self._drained_code)
            elif isinstance(message, OutputFailed):
                # The writer reports once; after a clean end the shutdown's
                # drain still turns the status into 3.
                logger.error("output failed ({}); exiting", message.kind)
                self._decide(EXIT_OUTPUT_FAILED)
            elif isinstance(message, Failed):
                self._fail(message)
            elif isinstance(message, StoreFailed):
                self._store_failed(message)
            else:
                self._signalled = True
                self._decide(signal_status(message.signum))

    def _fail(self, message: Failed) -> None:
        if self._failed:
            logger.opt(exception=message.error).debug(failure_line(message.where, message.error))
            return
        self._failed = True
        logger.error(failure_line(message.where, message.error))
        logger.opt(exception=message.error).debug("the failure's traceback")
        if self._event.is_set() and self._code in (EXIT_OK, EXIT_FATAL_INPUT):
            self._code = EXIT_INTERNAL
        self._decide(EXIT_INTERNAL)

    def _store_failed(self, message: StoreFailed) -> None:
        """DEC-STORE-6: like an internal failure (4, even after a clean end),
        with the store's own error on the one ERROR line."""
        logger.error(
            "session store: {}; the results waiting for it were dropped, not acknowledged; "
            "ending the session (resume it once the store is back)",
            message.reason,
        )
        if self._event.is_set() and self._code in (EXIT_OK, EXIT_FATAL_INPUT):
            self._code = EXIT_INTERNAL
        self._decide(EXIT_INTERNAL)

    def _decide(self, code: int) -> None:
        if not self._event.is_set():
            self._code = code
            self._event.set()

    def decide(self, code: int) -> None:
        with self._lock:
            self._decide(code)

    def first_signal(self, signum: int) -> bool:
        """A signal arrived: True for the first one (it ends the session like
        any ending), False when one already did (the caller exits at once)."""
        with self._lock:
            if self._signalled:
                return False
        self.report(Signalled(signum))
        return True

    def wait(self, timeout: float | None = None) -> int | None:
        return self._code if self._event.wait(timeout) else None

    @property
    def decided(self) -> bool:
        return self._event.is_set()

    @property
    def code(self) -> int:
        return self._code


# -- uncaught exceptions in agentx threads ---------------------------------------

_live_lock = threading.Lock()
_live: list[ExitLatch] = []
_previous_hook = threading.excepthook


def _excepthook(args: threading.ExceptHookArgs) -> None:
    thread = args.thread
    name = thread.name if thread is not None else ""
    with _live_lock:
        latches = tuple(_live)
    if not name.startswith(THREAD_PREFIX) or not latches or args.exc_value is None:
        _previous_hook(args)
        return
    # A thread does not know its session; every live one ends (in the CLI
    # there is exactly one; an embedding application runs one per Agent).
    for latch in latches:
        latch.report(Failed(name, args.exc_value))


@contextmanager
def supervise_threads(latch: ExitLatch) -> Iterator[ExitLatch]:
    """While entered, an uncaught exception in a thread named ``agentx-*``
    is a :class:`Failed` ending of ``latch``'s session."""
    global _previous_hook  # noqa: PLW0603 (the chained process hook)
    with _live_lock:
        _live.append(latch)
        if threading.excepthook is not _excepthook:
            _previous_hook = threading.excepthook
            threading.excepthook = _excepthook
    try:
        yield latch
    finally:
        with _live_lock:
            _live.remove(latch)
            if not _live and threading.excepthook is _excepthook:
                threading.excepthook = _previous_hook
