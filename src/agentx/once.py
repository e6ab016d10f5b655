"""A value built on first use, once, whichever thread asks first (DEC-CLI-3).

Start-up keeps what a session may never need off its path: the built-in
tools, the subagent runner, the blob store, the sdk profile's MCP manager,
the hook runner. Each is built by the first caller that needs it, on any
thread; :class:`Once` is that cell. :meth:`Once.peek` answers without
building (nothing started, nothing to stop or collect).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Once(Generic[T]):
    """``build()``'s value, built by the first :meth:`get` and kept. A build
    that raises keeps nothing: the next :meth:`get` tries again."""

    __slots__ = ("_build", "_lock", "_value")

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._value: T | None = None

    def get(self) -> T:
        value = self._value
        if value is None:
            with self._lock:
                value = self._value
                if value is None:
                    value = self._value = self._build()
        return value

    def peek(self) -> T | None:
        """The value if some :meth:`get` built it, else None (nothing built)."""
        return self._value
