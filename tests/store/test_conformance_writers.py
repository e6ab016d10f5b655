"""The store conformance suite, continued (DEC-STORE-1): one writer per
session and durability, the same tests on every backend (fixtures in
``conftest.py``)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import SessionBusy
from tests.store.conformance import SESSION_ID, Opener, seqs
from tests.unit.sessions.test_sessions import header_for, seq_entry

# -- one writer per session -------------------------------------------------------


def test_one_writer_per_session_across_stores(store: SessionStore, opener: Opener) -> None:
    other = opener()
    appender = store.appender(SESSION_ID)
    with pytest.raises(SessionBusy):
        other.appender(SESSION_ID)
    with pytest.raises(SessionBusy):
        other.open(SESSION_ID)
    assert other.read(SESSION_ID).header == header_for(), "readers are never refused"
    appender.close()
    other.open(SESSION_ID)
    second = other.appender(SESSION_ID)
    second.append([seq_entry(0)])
    second.close()
    assert seqs(store) == [0]


def test_one_writer_per_session_across_processes(store: SessionStore, url: str) -> None:
    appender = store.appender(SESSION_ID)
    try:
        probe = subprocess.run(
            [sys.executable, "-c", _PROBE, url, SESSION_ID],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        appender.close()
    assert probe.stdout.strip() == "SessionBusy", probe.stderr


_PROBE = """
import sys
from pathlib import Path
from agentx.sessions.store.select import open_store
store = open_store(sys.argv[1], Path("/nonexistent"))
try:
    store.open(sys.argv[2])
except Exception as error:
    print(type(error).__name__)
else:
    print("opened")
"""


# -- durability ------------------------------------------------------------------


def test_a_sigkilled_writer_leaves_every_acknowledged_entry(store: SessionStore, url: str) -> None:
    """A real writer appends and syncs in a loop, acknowledging each synced
    batch on a pipe, and is SIGKILLed mid-loop: every acknowledged entry
    reads back, the rest is a contiguous prefix, and a new writer continues."""
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, url, SESSION_ID],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    acknowledged = 0
    while acknowledged < 150:
        acknowledged = int(writer.stdout.readline())
    writer.kill()
    writer.wait(timeout=30)
    writer.stdout.close()
    stored = seqs(store)
    assert len(stored) >= acknowledged
    assert stored == list(range(len(stored)))
    store.open(SESSION_ID)
    store.append(SESSION_ID, [seq_entry(len(stored))])
    assert seqs(store) == list(range(len(stored) + 1))


_WRITER = """
import sys
from pathlib import Path
from agentx.sessions.store.select import open_store
appender = open_store(sys.argv[1], Path("/nonexistent")).appender(sys.argv[2])
seq = 0
while True:
    for _ in range(2):
        appender.append([{"seq": seq + i, "text": "x" * 300} for i in range(3)])
        seq += 3
    appender.sync()
    print(seq, flush=True)
"""


def test_concurrent_readers_each_see_a_prefix(store: SessionStore, opener: Opener) -> None:
    readers = 3
    batches = 60
    start = threading.Barrier(readers + 1)
    done = threading.Event()
    seen: list[list[int]] = [[] for _ in range(readers)]
    errors: list[BaseException] = []
    reader_store = opener()

    def read_loop(index: int) -> None:
        try:
            start.wait()
            while not done.is_set():
                stored = seqs(reader_store)
                assert stored == list(range(len(stored)))
                seen[index].append(len(stored))
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=read_loop, args=(i,)) for i in range(readers)]
    for thread in threads:
        thread.start()
    start.wait()
    appender = store.appender(SESSION_ID)
    for batch in range(batches):
        appender.append([seq_entry(2 * batch), seq_entry(2 * batch + 1)])
        appender.sync()
    appender.close()
    done.set()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    for counts in seen:
        assert counts == sorted(counts), "a reader never sees the transcript shrink"
    assert seqs(reader_store) == list(range(2 * batches))
