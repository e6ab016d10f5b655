"""The threads behind the embedding API (:mod:`agentx.embed`).

DESIGN.md: threads start only in ``actors/``. An embedded session runs its
:class:`~agentx.actors.host.Host` on one thread and routes its output on
another, so the application's thread only ever blocks on queues.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future


def run_in_thread(target: Callable[[], int], *, name: str) -> Future[int]:
    """Run ``target`` on a daemon thread; its return value settles the future."""
    done: Future[int] = Future()

    def body() -> None:
        try:
            done.set_result(target())
        except BaseException as exc:  # the embedding caller sees it on result()
            done.set_exception(exc)

    threading.Thread(target=body, name=name, daemon=True).start()
    return done


def start_daemon(target: Callable[[], None], *, name: str) -> threading.Thread:
    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread
