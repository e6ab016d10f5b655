"""A cancellation scope: the concrete :class:`~agentx.providers.base.CancelToken`.

An interrupt (WIRE-010) cancels the active turn's scope; provider clients
register a callback that closes their open HTTP response so a blocked read
returns at once, and interruptible sleeps use :meth:`CancelScope.wait`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from agentx.diagnostics import logger


class CancelScope:
    """Thread-safe, one-shot cancellation with callbacks."""

    __slots__ = ("_callbacks", "_event", "_lock")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        return self._event.wait(timeout)

    def on_cancel(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        _run(callback)

    def cancel(self) -> None:
        """Fire once; later calls do nothing. Callbacks run outside the lock."""
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _run(callback)


def _run(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # a cancel callback must not break the canceller
        logger.warning("a cancellation callback failed")
