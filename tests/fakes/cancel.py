"""A thread-safe :class:`~agentx.providers.base.CancelToken` for tests."""

from __future__ import annotations

import threading
from collections.abc import Callable


class EventCancelToken:
    """Runs each registered callback once, on the cancelling thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._set = False
        self._callbacks: list[Callable[[], None]] = []

    def is_set(self) -> bool:
        with self._lock:
            return self._set

    def on_cancel(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self._set:
                self._callbacks.append(callback)
                return
        callback()

    def cancel(self) -> None:
        with self._lock:
            if self._set:
                return
            self._set = True
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()
