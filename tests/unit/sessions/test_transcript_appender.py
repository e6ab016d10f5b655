"""Group commit of the session transcript (DEC-STORE-1: "durable before its result").

:class:`agentx.sessions.store.file_appender.TranscriptAppender` writes each batch through to the
operating system at once and makes everything appended so far durable with
one ``fsync`` on :meth:`~agentx.sessions.store.file_appender.TranscriptAppender.sync`; the host
calls that from the writer before output bytes leave. A FIFO stands in for a
disk whose ``fsync`` fails: ``fsync`` on a pipe is a real ``EINVAL``.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from loguru import logger

from agentx.sessions.setup import StoredTranscript
from agentx.sessions.store.errors import SessionBusy, SessionCorrupt, SessionError, SessionNotFound
from agentx.sessions.store.file_appender import TranscriptAppender
from agentx.sessions.store.files import TRANSCRIPT_FILE_NAME, SessionStore
from tests.unit.sessions.session_helpers import CWD, session_header


def _store(tmp_path: Path) -> tuple[SessionStore, str]:
    store = SessionStore(tmp_path / "sessions")
    session_id = str(uuid.uuid4())
    store.create(session_header(session_id))
    return store, session_id


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _fifo_appender(tmp_path: Path) -> TranscriptAppender:
    path = tmp_path / "transcript.fifo"
    os.mkfifo(path)
    return TranscriptAppender(path, str(uuid.uuid4()))


def test_appends_are_written_through_before_any_sync(tmp_path: Path) -> None:
    store, session_id = _store(tmp_path)
    appender = store.appender(session_id)
    try:
        appender.append([{"n": 1}])
        appender.append([{"n": 2}, {"n": 3}])
        # Another reader (a resuming process) sees them at once.
        assert [e["n"] for e in store.read(session_id).entries] == [1, 2, 3]
        appender.sync()
    finally:
        appender.close()
    assert [e["n"] for e in store.read(session_id).entries] == [1, 2, 3]


def test_a_sync_with_nothing_appended_does_not_touch_the_disk(tmp_path: Path) -> None:
    appender = _fifo_appender(tmp_path)
    try:
        appender.sync()  # fsync on the pipe would raise EINVAL
        appender.append([{"n": 1}])
        with pytest.raises(OSError):
            appender.sync()
    finally:
        appender.close()


def test_a_failed_sync_fails_every_later_append_and_writes_nothing(tmp_path: Path) -> None:
    appender = _fifo_appender(tmp_path)
    reader = os.open(tmp_path / "transcript.fifo", os.O_RDONLY | os.O_NONBLOCK)
    try:
        appender.append([{"n": 1}])
        assert os.read(reader, 100) == b'{"n":1}\n'
        with pytest.raises(OSError):
            appender.sync()
        with pytest.raises(SessionError, match="transcript sync failed"):
            appender.append([{"n": 2}])
        with pytest.raises(BlockingIOError):
            os.read(reader, 100)  # nothing more was written
        # DEC-STORE-6: a later fsync may report success for pages the kernel
        # dropped, so a failed appender's barrier keeps failing.
        with pytest.raises(SessionError, match="transcript sync failed"):
            appender.sync()
    finally:
        appender.close()
        os.close(reader)


def test_after_close_appends_raise_and_syncs_do_nothing(tmp_path: Path) -> None:
    store, session_id = _store(tmp_path)
    appender = store.appender(session_id)
    appender.append([{"n": 1}])
    appender.close()
    appender.close()
    appender.sync()
    with pytest.raises(SessionError, match="closed"):
        appender.append([{"n": 2}])
    assert [e["n"] for e in store.read(session_id).entries] == [1]


def test_an_empty_batch_writes_nothing(tmp_path: Path) -> None:
    appender = _fifo_appender(tmp_path)
    try:
        appender.append([])
        appender.sync()  # not dirty: the pipe's fsync is never reached
    finally:
        appender.close()


def test_opening_a_torn_transcript_is_refused_without_leaking_the_descriptor(
    tmp_path: Path,
) -> None:
    store, session_id = _store(tmp_path)
    path = tmp_path / "sessions" / session_id / TRANSCRIPT_FILE_NAME
    path.write_bytes(b'{"n":1}\n{"n":')
    before = _open_fds()
    with pytest.raises(SessionCorrupt):
        store.appender(session_id)
    assert _open_fds() == before


def test_an_unknown_session_has_no_appender(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    with pytest.raises(SessionNotFound):
        store.appender(str(uuid.uuid4()))


def test_stored_transcript_keeps_one_descriptor_and_closes_it(tmp_path: Path) -> None:
    store, session_id = _store(tmp_path)
    before = _open_fds()
    transcript = StoredTranscript(store, session_header(session_id), cwd=CWD)
    assert _open_fds() == before + 1  # opened (and locked) at once
    for n in range(5):
        transcript.append([{"n": n}])
        transcript.sync()
    assert _open_fds() == before + 1
    transcript.close()
    assert _open_fds() == before
    assert [e["n"] for e in store.read(session_id).entries] == list(range(5))


def _fifo_transcript(tmp_path: Path) -> tuple[StoredTranscript, int]:
    """A stored transcript whose file is a pipe (``fsync`` fails: EINVAL),
    and a reader of the pipe."""
    store, session_id = _store(tmp_path)
    directory = tmp_path / "sessions" / session_id
    (directory / TRANSCRIPT_FILE_NAME).unlink()
    os.mkfifo(directory / TRANSCRIPT_FILE_NAME)
    reader = os.open(directory / TRANSCRIPT_FILE_NAME, os.O_RDONLY | os.O_NONBLOCK)
    return StoredTranscript(store, session_header(session_id), cwd=CWD), reader


def test_a_failed_barrier_is_latched_reported_once_and_fails_every_append(
    tmp_path: Path,
) -> None:
    """DEC-STORE-6: the barrier never raises; once it failed it answers False
    for good (the writer drops what it holds), the failure reaches the
    callback once with the store's error, every later append raises, and
    closing adds no second ERROR line."""
    transcript, reader = _fifo_transcript(tmp_path)
    reasons: list[str] = []
    transcript.on_failed(reasons.append)
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="ERROR")
    try:
        assert transcript.sync() is True  # nothing appended: nothing to fail
        transcript.append([{"n": 1}])
        assert transcript.sync() is False
        assert transcript.sync() is False
        with pytest.raises(SessionError, match="session store failed"):
            transcript.append([{"n": 2}])
    finally:
        transcript.close()
        logger.remove(sink)
        os.close(reader)
    (reason,) = reasons
    assert reason.startswith("the transcript could not be made durable: ")
    assert reason.endswith(f"{TRANSCRIPT_FILE_NAME}: Invalid argument (EINVAL)")
    assert lines == []


def test_without_a_callback_a_failed_barrier_is_one_error_line(tmp_path: Path) -> None:
    transcript, reader = _fifo_transcript(tmp_path)
    lines: list[str] = []
    sink = logger.add(lambda m: lines.append(m.record["message"]), level="ERROR")
    try:
        transcript.append([{"n": 1}])
        assert transcript.sync() is False
        assert transcript.sync() is False
    finally:
        transcript.close()
        logger.remove(sink)
        os.close(reader)
    assert len(lines) == 1
    assert "could not be made durable: " in lines[0] and "Invalid argument" in lines[0]


def test_start_new_after_a_failed_barrier_fails_and_creates_nothing(tmp_path: Path) -> None:
    """``/clear`` syncs the old transcript first: when that fails its turn
    fails, and no new session is made."""
    transcript, reader = _fifo_transcript(tmp_path)
    transcript.on_failed(lambda reason: None)
    new_id = str(uuid.uuid4())
    try:
        transcript.append([{"n": 1}])
        with pytest.raises(SessionError, match="could not be made durable"):
            transcript.start_new(new_id)
    finally:
        transcript.close()
        os.close(reader)
    assert not (tmp_path / "sessions" / new_id).exists()


def test_start_new_syncs_and_closes_the_old_transcript(tmp_path: Path) -> None:
    """``/clear``: the old session keeps what was appended and is released,
    the new one gets the later appends, and one descriptor stays open."""
    store, session_id = _store(tmp_path)
    before = _open_fds()
    transcript = StoredTranscript(store, session_header(session_id), cwd=CWD)
    transcript.append([{"n": 1}])
    new_id = str(uuid.uuid4())
    transcript.start_new(new_id)
    assert _open_fds() == before + 1
    store.appender(session_id).close()  # the old session is free again
    transcript.append([{"n": 2}])
    transcript.close()
    assert _open_fds() == before
    assert [e["n"] for e in store.read(session_id).entries] == [1]
    assert [e["n"] for e in store.read(new_id).entries] == [2]


def test_a_second_writer_is_refused_while_the_first_holds_the_session(tmp_path: Path) -> None:
    """Two appenders would interleave their lines: the second one, and an
    open() that would cut a torn tail, get SessionBusy until the first closes."""
    store, session_id = _store(tmp_path)
    first = store.appender(session_id)
    before = _open_fds()
    with pytest.raises(SessionBusy):
        store.appender(session_id)
    with pytest.raises(SessionBusy):
        store.open(session_id)
    with pytest.raises(SessionBusy):
        store.append(session_id, [{"n": 1}])
    assert _open_fds() == before
    assert store.read(session_id).entries == ()  # readers are never refused
    first.close()
    store.open(session_id)
    second = store.appender(session_id)
    second.close()


def test_an_appender_dropped_without_close_releases_the_session(tmp_path: Path) -> None:
    store, session_id = _store(tmp_path)
    before = _open_fds()
    dropped = store.appender(session_id)
    assert _open_fds() == before + 1
    del dropped
    assert _open_fds() == before
    store.appender(session_id).close()
