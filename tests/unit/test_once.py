"""agentx.once.Once: built by the first get, once, whichever thread asks first (DEC-CLI-3)."""

from __future__ import annotations

import threading

import pytest

from agentx.once import Once


def test_nothing_is_built_until_asked_and_then_once_across_threads() -> None:
    built: list[int] = []
    release = threading.Event()

    def build() -> object:
        release.wait(10)
        built.append(1)
        return object()

    cell: Once[object] = Once(build)
    assert cell.peek() is None and built == []
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(cell.get())) for _ in range(4)]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(10)
    assert built == [1]
    assert len(seen) == 4 and all(value is seen[0] for value in seen)
    assert cell.peek() is seen[0]


def test_a_build_that_raises_keeps_nothing_and_is_tried_again() -> None:
    attempts: list[int] = []

    def build() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise OSError("not yet")
        return "built"

    cell = Once(build)
    with pytest.raises(OSError):
        cell.get()
    assert cell.peek() is None
    assert cell.get() == "built" and len(attempts) == 2
