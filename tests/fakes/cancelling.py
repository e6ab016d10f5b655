"""Measure how fast a provider stream honours a cancel (WIRE-010).

``drain_cancelled`` consumes a stream on the calling thread while a helper
thread waits for ``trigger`` (e.g. the server's ``hanging`` event or a log
line), cancels the token and records the time. No sleeps: both sides
synchronise on events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from agentx.providers.base import Cancelled, StreamItem
from tests.fakes.cancel import EventCancelToken


@dataclass(frozen=True, slots=True, kw_only=True)
class CancelOutcome:
    items: tuple[StreamItem, ...]
    raised_cancelled: bool
    latency: float


def drain_cancelled(
    stream: Iterable[StreamItem],
    token: EventCancelToken,
    trigger: threading.Event,
    *,
    after: Callable[[StreamItem], bool] | None = None,
    timeout: float = 10.0,
) -> CancelOutcome:
    """Consume ``stream``; cancel ``token`` from another thread once ``trigger`` is set.

    With ``after``, the cancel also waits until the consumer has received an
    item matching it (so "mid-stream" really is mid-stream).
    """
    cancelled_at: list[float] = []
    seen = threading.Event()
    if after is None:
        seen.set()

    def canceller() -> None:
        if trigger.wait(timeout) and seen.wait(timeout):
            cancelled_at.append(time.monotonic())
            token.cancel()

    thread = threading.Thread(target=canceller, daemon=True)
    thread.start()
    items: list[StreamItem] = []
    raised = False
    try:
        for item in stream:
            items.append(item)
            if after is not None and after(item):
                seen.set()
    except Cancelled:
        raised = True
    finished = time.monotonic()
    thread.join()
    latency = finished - cancelled_at[0] if cancelled_at else float("inf")
    return CancelOutcome(items=tuple(items), raised_cancelled=raised, latency=latency)
