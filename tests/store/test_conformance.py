"""The store conformance suite (DEC-STORE-1): the same tests on every backend.

Each test gets a store URL (``file:///...`` for the local files, a fresh
database of the real PostgreSQL cluster for ``postgresql://``) and opens
stores with :func:`agentx.sessions.store.open_store`, as agentx does; a
second store on the same URL stands for another process or machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.frozen import thaw
from agentx.messages.guard import CredentialValidator
from agentx.providers.base import Message, TextBlock
from agentx.sessions.history import History, TranscriptWriteFailed
from agentx.sessions.setup import StoredTranscript
from agentx.sessions.store import SessionStore, open_store
from agentx.sessions.store.files import (
    InvalidSessionId,
    SessionBusy,
    SessionError,
    SessionExists,
    SessionHeader,
    SessionNotFound,
    Transcript,
    TranscriptRefused,
    check_binding,
)
from agentx.sessions.transcript import from_entries
from tests.unit.sessions.test_history import _compact
from tests.unit.sessions.test_sessions import REALISTIC, ROUTE, header_for, seq_entry

SESSION_ID = "0b7c3e52-6f0a-4d0e-9a51-3c2f8e1d4a77"
OTHER_ID = "5d1f9a80-2c44-4b7e-8f3e-91a0c6b2d915"
NOWHERE = Path("/nonexistent-agentx-home")

Opener = Callable[[], SessionStore]


@pytest.fixture(params=["files", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "files":
        return f"file://{tmp_path}/sessions"
    pg_url: str = request.getfixturevalue("pg_url")
    return pg_url


@pytest.fixture
def opener(url: str) -> Iterator[Opener]:
    opened: list[SessionStore] = []

    def make() -> SessionStore:
        store = open_store(url, NOWHERE)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> SessionStore:
    created = opener()
    created.create(header_for())
    return created


def _seqs(store: SessionStore, session_id: str = SESSION_ID) -> list[int]:
    return [entry["seq"] for entry in store.read(session_id).entries]


# -- create, header -----------------------------------------------------------


def test_create_then_read_is_the_header_and_no_entries(store: SessionStore) -> None:
    assert store.read(SESSION_ID) == Transcript(header=header_for(), entries=(), torn=False)


def test_create_twice_is_refused_and_keeps_the_first(store: SessionStore, opener: Opener) -> None:
    store.append(SESSION_ID, [seq_entry(0)])
    with pytest.raises(SessionExists):
        opener().create(header_for())
    assert _seqs(store) == [0]


def test_unknown_session_is_not_found(store: SessionStore) -> None:
    for operation in (store.read, store.open):
        with pytest.raises(SessionNotFound):
            operation(OTHER_ID)
    with pytest.raises(SessionNotFound):
        store.append(OTHER_ID, [seq_entry(0)])


def test_header_keeps_its_offset_and_cwd(opener: Opener) -> None:
    store = opener()
    header = SessionHeader(
        session_id=OTHER_ID,
        provider_id="p",
        provider_type="scripted",
        model="echo",
        route_binding="",
        created_at=datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5))),
        cwd="/work/ünï\u2028code",
    )
    store.create(header)
    read = opener().read(OTHER_ID).header
    assert read == header
    assert read.created_at.utcoffset() == timedelta(hours=-5)


# -- append and read back -------------------------------------------------------


@pytest.mark.parametrize("entry", [e for _, e in REALISTIC], ids=[i for i, _ in REALISTIC])
def test_append_reads_back_exactly(store: SessionStore, opener: Opener, entry: Any) -> None:
    store.append(SESSION_ID, [entry])
    transcript = opener().read(SESSION_ID)
    assert not transcript.torn
    assert [thaw(e) for e in transcript.entries] == [entry]


def test_many_appends_keep_order(store: SessionStore) -> None:
    seq = 0
    appender = store.appender(SESSION_ID)
    for batch_size in [1, 3, 2, 5, 1] * 40:
        appender.append([seq_entry(seq + i) for i in range(batch_size)])
        seq += batch_size
        if seq % 7 == 0:
            appender.sync()
    appender.sync()
    appender.close()
    assert _seqs(store) == list(range(seq))


@pytest.mark.parametrize(
    "entry",
    [{"x": float("nan")}, {"x": "\ud800"}, {1: "a", "1": "b"}, ["not", "an", "object"]],
    ids=["nan", "lone-surrogate", "colliding-names", "not-object"],
)
def test_an_entry_that_would_not_read_back_is_refused_whole(
    store: SessionStore, entry: Any
) -> None:
    appender = store.appender(SESSION_ID)
    appender.append([seq_entry(0)])
    with pytest.raises(ValueError):
        appender.append([seq_entry(1), entry])
    appender.append([seq_entry(1)])
    appender.sync()
    appender.close()
    assert _seqs(store) == [0, 1]


def test_a_batch_the_guard_refuses_writes_nothing(store: SessionStore) -> None:
    """DEC-AUTH-6: nothing the output guard refused is persisted."""
    guard = CredentialValidator(frozenset({"sk-live-secret-123"}))
    appender = store.appender(SESSION_ID, admit=guard.check)
    appender.append([seq_entry(0)])
    with pytest.raises(TranscriptRefused):
        appender.append([seq_entry(1), {"text": "key sk-live-secret-123"}])
    appender.sync()
    appender.close()
    assert _seqs(store) == [0]


def test_after_close_appends_raise_and_syncs_do_nothing(store: SessionStore) -> None:
    appender = store.appender(SESSION_ID)
    appender.append([seq_entry(0)])
    appender.close()
    with pytest.raises(SessionError):
        appender.append([seq_entry(1)])
    appender.sync()
    assert _seqs(store) == [0]


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
    assert _seqs(store) == [0]


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
from agentx.sessions.store import open_store
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
    seqs = _seqs(store)
    assert len(seqs) >= acknowledged
    assert seqs == list(range(len(seqs)))
    store.open(SESSION_ID)
    store.append(SESSION_ID, [seq_entry(len(seqs))])
    assert _seqs(store) == list(range(len(seqs) + 1))


_WRITER = """
import sys
from pathlib import Path
from agentx.sessions.store import open_store
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
                seqs = _seqs(reader_store)
                assert seqs == list(range(len(seqs)))
                seen[index].append(len(seqs))
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
    assert _seqs(reader_store) == list(range(2 * batches))


# -- resume binding, --continue, list ----------------------------------------------


@pytest.mark.parametrize(
    ("changed", "mismatch"),
    [
        ({}, None),
        ({"provider_id": "sol-west"}, "provider_id"),
        ({"model": "gpt-5.6-mini"}, "model"),
        ({"route_binding": "0" * 64}, "route_binding"),
    ],
    ids=["match", "id", "model", "route"],
)
def test_resume_binding_fails_closed(
    store: SessionStore, changed: dict[str, str], mismatch: str | None
) -> None:
    offered = {
        "provider_id": "sol-east",
        "provider_type": "azure_openai",
        "model": "gpt-5.6-sol",
        "route_binding": ROUTE,
        **changed,
    }
    assert check_binding(store.open(SESSION_ID).header, **offered) == mismatch


def _header(session_id: str, cwd: str | None, minute: int) -> SessionHeader:
    return SessionHeader(
        session_id=session_id,
        provider_id="p",
        provider_type="scripted",
        model="m",
        route_binding="r",
        created_at=datetime(2026, 12, 3, 9, minute, tzinfo=UTC),
        cwd=cwd,
    )


def _aged(url: str, session_id: str, seconds: int) -> None:
    """Let ``seconds`` pass for a file-store session: its transcript's mtime
    (the files' change clock, coarser than two appends in a row) goes back.
    PostgreSQL orders changes by a sequence and needs nothing."""
    if url.startswith("file://"):
        path = Path(url.removeprefix("file://")) / session_id / "transcript.jsonl"
        then = time.time() - seconds
        os.utime(path, (then, then))


def test_newest_is_the_session_of_the_cwd_that_changed_last(opener: Opener, url: str) -> None:
    store = opener()
    first, second, elsewhere = (str(uuid.uuid4()) for _ in range(3))
    store.create(_header(first, "/w", 1))
    store.create(_header(second, "/w", 2))
    store.create(_header(elsewhere, "/other", 3))
    _aged(url, first, 20)
    _aged(url, second, 10)
    assert store.newest("/w") == second
    store.append(first, [seq_entry(0)])
    assert opener().newest("/w") == first
    assert store.newest("/nowhere") is None


def test_headers_lists_every_session_oldest_first(opener: Opener) -> None:
    store = opener()
    ids = [str(uuid.uuid4()) for _ in range(3)]
    for minute, session_id in zip((5, 1, 3), ids, strict=True):
        store.create(_header(session_id, None, minute))
    assert [h.session_id for h in opener().headers()] == [ids[1], ids[2], ids[0]]


@pytest.mark.parametrize(
    "session_id",
    ["../" + SESSION_ID, "", SESSION_ID.upper(), SESSION_ID + "\x00", "'; DROP TABLE x; --"],
    ids=["traversal", "empty", "uppercase", "nul", "sql"],
)
def test_a_session_id_that_is_not_a_canonical_uuid_is_refused(
    opener: Opener, session_id: str
) -> None:
    store = opener()
    with pytest.raises(InvalidSessionId):
        store.create(header_for(session_id))
    for operation in (store.read, store.open):
        with pytest.raises(InvalidSessionId):
            operation(session_id)
    with pytest.raises(InvalidSessionId):
        store.appender(session_id)


# -- the history over the store (WIRE-005 relinking, /clear) -------------------------


def _user(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=text),))


def test_compaction_and_clear_read_back_as_they_were_in_memory(store: SessionStore) -> None:
    transcript = StoredTranscript(store, header_for(), cwd="/w")
    counter = iter(range(1, 1000))
    history = History(
        new_uuid=lambda: str(uuid.UUID(int=next(counter), version=4)), transcript=transcript
    )
    for n in range(6):
        history.append(_user(f"prompt {n}"))
        history.append(Message(role="assistant", content=(TextBlock(text=f"reply {n}"),)))
        history.flush()
    _compact(history, str(uuid.uuid4()))
    history.append(_user("after"))
    history.flush()
    transcript.sync()
    resumed = from_entries(store.read(SESSION_ID).entries, read_blob=lambda _: b"")
    assert [r.message for r in resumed] == list(history.messages())

    history.append(_user("pending at /clear"))
    history.clear(OTHER_ID)
    history.append(_user("in the new session"))
    history.flush()
    transcript.close()
    cleared = store.read(OTHER_ID)
    assert cleared.header.cwd == "/w"
    assert (
        check_binding(
            cleared.header,
            provider_id="sol-east",
            provider_type="azure_openai",
            model="gpt-5.6-sol",
            route_binding=ROUTE,
        )
        is None
    )
    assert [thaw(e)["content"][0]["text"] for e in cleared.entries] == ["in the new session"]
    old = from_entries(store.read(SESSION_ID).entries, read_blob=lambda _: b"")
    assert old[-1].message == _user("pending at /clear")


def test_a_failed_flush_is_never_persisted(store: SessionStore) -> None:
    """DEC-STORE-1: a turn reported failed is never persisted afterwards."""
    guard = CredentialValidator(frozenset({"sk-live-secret-123"}))
    transcript = StoredTranscript(store, header_for(), cwd="/w", admit=guard.check)
    history = History(new_uuid=lambda: str(uuid.uuid4()), transcript=transcript)
    history.append(_user("kept"))
    history.flush()
    history.append(_user("leaks sk-live-secret-123"))
    with pytest.raises(TranscriptWriteFailed):
        history.flush()
    history.append(_user("next turn"))
    history.flush()
    transcript.close()
    texts = [thaw(e)["content"][0]["text"] for e in store.read(SESSION_ID).entries]
    assert texts == ["kept", "next turn"]
