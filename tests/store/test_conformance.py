"""The store conformance suite (DEC-STORE-1): the same tests on every backend.

Each test gets a store URL (``file:///...`` for the local files, a fresh
database of the real PostgreSQL cluster for ``postgresql://``) and opens
stores with :func:`agentx.sessions.store.select.open_store`, as agentx does; a
second store on the same URL stands for another process or machine.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.frozen import thaw
from agentx.messages.guard import CredentialValidator
from agentx.providers.base import Message, TextBlock
from agentx.sessions.history import History, TranscriptWriteFailed
from agentx.sessions.setup import StoredTranscript
from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import (
    InvalidSessionId,
    SessionError,
    SessionExists,
    SessionNotFound,
    TranscriptRefused,
)
from agentx.sessions.store.header import SessionHeader, check_binding
from agentx.sessions.store.jsonl import Transcript
from agentx.sessions.transcript import from_entries
from tests.store.conformance import OTHER_ID, SESSION_ID, Opener, seqs
from tests.unit.sessions.test_history import _compact
from tests.unit.sessions.test_sessions import REALISTIC, ROUTE, header_for, seq_entry

# -- create, header -----------------------------------------------------------


def test_create_then_read_is_the_header_and_no_entries(store: SessionStore) -> None:
    assert store.read(SESSION_ID) == Transcript(header=header_for(), entries=(), torn=False)


def test_create_twice_is_refused_and_keeps_the_first(store: SessionStore, opener: Opener) -> None:
    store.append(SESSION_ID, [seq_entry(0)])
    with pytest.raises(SessionExists):
        opener().create(header_for())
    assert seqs(store) == [0]


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
    assert seqs(store) == list(range(seq))


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
    assert seqs(store) == [0, 1]


def test_a_batch_the_guard_refuses_writes_nothing(store: SessionStore) -> None:
    """DEC-AUTH-6: nothing the output guard refused is persisted."""
    guard = CredentialValidator(frozenset({"sk-live-secret-123"}))
    appender = store.appender(SESSION_ID, admit=guard.check_spelled)
    appender.append([seq_entry(0)])
    with pytest.raises(TranscriptRefused):
        appender.append([seq_entry(1), {"text": "key sk-live-secret-123"}])
    appender.sync()
    appender.close()
    assert seqs(store) == [0]


def test_after_close_appends_raise_and_syncs_do_nothing(store: SessionStore) -> None:
    appender = store.appender(SESSION_ID)
    appender.append([seq_entry(0)])
    appender.close()
    with pytest.raises(SessionError):
        appender.append([seq_entry(1)])
    appender.sync()
    assert seqs(store) == [0]


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
    transcript = StoredTranscript(store, header_for(), cwd="/w", admit=guard.check_spelled)
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
