"""The session history against a real session store (DEC-STORE-1, DEC-TURN-1;
WIRE-005; DEC-CLI-5): what is in memory after appends, compactions and
``/clear`` is exactly what a resume reads back; a failed write changes
nothing; ``--continue`` finds the newest session of a cwd."""

from __future__ import annotations

import errno
import itertools
import os
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx.messages.compaction import CompactBoundary, plan
from agentx.messages.frozen import FrozenDict
from agentx.messages.guard import CredentialValidator
from agentx.providers.base import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    text_chars,
)
from agentx.sessions.history import History, TranscriptWriteFailed
from agentx.sessions.setup import StoredTranscript
from agentx.sessions.store.files import SessionStore
from agentx.sessions.transcript import Recorded, from_entries
from tests.unit.sessions.session_helpers import CWD, session_header


def _ids() -> itertools.count[int]:
    return itertools.count(1)


def _new_session(root: Path) -> tuple[SessionStore, StoredTranscript, str]:
    store = SessionStore(root)
    session_id = str(uuid.uuid4())
    header = session_header(session_id)
    store.create(header)
    return store, StoredTranscript(store, header, cwd=CWD), session_id


def _history(transcript: StoredTranscript | None) -> History:
    counter = _ids()
    return History(
        new_uuid=lambda: str(uuid.UUID(int=next(counter), version=4)), transcript=transcript
    )


def _resumed(store: SessionStore, session_id: str) -> list[Recorded]:
    return from_entries(store.read(session_id).entries, read_blob=lambda _: b"")


def _in_memory(history: History) -> list[tuple[str, Message]]:
    pairs = zip(history.items(), history.messages(), strict=True)
    return [(item.id, message) for item, message in pairs]


def _as_pairs(records: list[Recorded]) -> list[tuple[str, Message]]:
    return [(r.uuid, r.message) for r in records]


def _user(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=text),))


def _compact(history: History, summary_id: str) -> None:
    items = history.items()
    chosen = plan(items)
    assert chosen is not None
    summary = Recorded(uuid=summary_id, message=_user(f"summary {summary_id}"))
    boundary = CompactBoundary(
        trigger="manual",
        pre_tokens=1,
        preserved_segment=chosen.segment(items, anchor_uuid=summary.uuid),
    )
    history.compact(chosen, summary=summary, boundary=boundary, uuid=str(uuid.uuid4()))


_steps = st.lists(st.sampled_from(["prompt", "reply", "tool", "flush", "compact"]), max_size=25)


@settings(max_examples=60, deadline=None)
@given(_steps)
def test_resume_reads_back_exactly_the_history_in_memory(steps: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        store, transcript, session_id = _new_session(Path(directory))
        history = _history(transcript)
        for n, step in enumerate(steps):
            if step == "prompt":
                history.append(_user(f"prompt {n}"))
            elif step == "reply":
                history.append(Message(role="assistant", content=(TextBlock(text=f"r{n}"),)))
            elif step == "tool":
                use = ToolUseBlock(id=f"t{n}", name="Echo", input=FrozenDict())
                history.append(Message(role="assistant", content=(use,)))
                result = ToolResultBlock(tool_use_id=f"t{n}", content="ok")
                history.append(Message(role="user", content=(result,)))
            elif step == "flush":
                history.flush()
            elif len(history):
                _compact(history, str(uuid.uuid4()))
            # The running count the context estimate reads is never stale.
            assert history.text_chars == sum(map(text_chars, history.messages()))
        history.flush()
        assert _as_pairs(_resumed(store, session_id)) == _in_memory(history)


class RefusingOnce:
    """The real transcript behind a disk that refuses the first write."""

    def __init__(self, inner: StoredTranscript) -> None:
        self.inner = inner
        self.refuse = True

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        if self.refuse:
            self.refuse = False
            raise OSError(errno.ENOSPC, "No space left on device")
        self.inner.append(entries)

    def sync(self) -> bool:
        return self.inner.sync()

    def start_new(self, session_id: str) -> None:
        self.inner.start_new(session_id)

    def close(self) -> None:
        self.inner.close()


def test_a_failed_flush_drops_the_turn_for_good(tmp_path: Path) -> None:
    """DEC-STORE-1: a turn whose write failed is never persisted afterwards,
    and the live history forgets it too, so a resume sees what memory holds
    (before, the next flush wrote the failed turn once space was back)."""
    store, transcript, session_id = _new_session(tmp_path)
    history = _history(RefusingOnce(transcript))
    history.restore([Recorded(uuid=str(uuid.uuid4()), message=_user("resumed"))])
    history.append(_user("doomed"))
    history.append(Message(role="assistant", content=(TextBlock(text="doomed reply"),)))
    before = history.view()
    with pytest.raises(TranscriptWriteFailed, match=r"^transcript write failed: No space left"):
        history.flush()
    assert history.messages() == (_user("resumed"),)
    assert history.text_chars == text_chars(_user("resumed"))
    assert len(history.items()) == 1
    assert len(before) == 3  # a view handed out earlier keeps its snapshot
    history.append(_user("later"))
    history.flush()
    assert [r.message for r in _resumed(store, session_id)] == [_user("later")]
    assert history.messages() == (_user("resumed"), _user("later"))


def test_a_refused_flush_names_the_guard_rule_and_writes_nothing(tmp_path: Path) -> None:
    """DEC-AUTH-6: a batch holding a configured credential is never written."""
    store = SessionStore(tmp_path)
    session_id = str(uuid.uuid4())
    header = session_header(session_id)
    store.create(header)
    guard = CredentialValidator(["sk-hist-0451"])
    history = _history(StoredTranscript(store, header, cwd=CWD, admit=guard.check_spelled))
    history.append(_user("fine"))
    history.flush()
    history.append(_user("the key is sk-hist-0451"))
    with pytest.raises(TranscriptWriteFailed, match=r"refused.*DEC-AUTH-6"):
        history.flush()
    assert [r.message for r in _resumed(store, session_id)] == [_user("fine")]
    assert b"sk-hist-0451" not in (tmp_path / session_id / "transcript.jsonl").read_bytes()


def test_a_failed_compaction_write_changes_nothing(tmp_path: Path) -> None:
    store, transcript, session_id = _new_session(tmp_path)
    history = _history(RefusingOnce(transcript))
    for text in ("one", "two"):
        history.append(_user(text))
        history.append(Message(role="assistant", content=(TextBlock(text=f"re {text}"),)))
    before = _in_memory(history)
    with pytest.raises(TranscriptWriteFailed, match="No space left on device"):
        _compact(history, "s")
    assert _in_memory(history) == before
    history.flush()  # nothing was lost: every message is still unwritten
    assert _as_pairs(_resumed(store, session_id)) == before


def test_compaction_keeps_the_preserved_segment_after_the_summary(tmp_path: Path) -> None:
    store, transcript, session_id = _new_session(tmp_path)
    history = _history(transcript)
    for text in ("one", "two"):
        history.append(_user(text))
        history.append(Message(role="assistant", content=(TextBlock(text=f"re {text}"),)))
    kept = _in_memory(history)[2:]
    _compact(history, "s")
    assert [pair[0] for pair in _in_memory(history)] == ["s", *(pair[0] for pair in kept)]
    assert _in_memory(history)[1:] == kept
    assert _as_pairs(_resumed(store, session_id)) == _in_memory(history)


def test_clear_writes_what_was_pending_then_starts_a_new_session(tmp_path: Path) -> None:
    store, transcript, old = _new_session(tmp_path)
    history = _history(transcript)
    history.append(_user("before"))
    pending = _in_memory(history)
    new = str(uuid.uuid4())
    history.clear(new)
    assert len(history) == 0
    assert history.text_chars == 0
    assert _as_pairs(_resumed(store, old)) == pending
    history.append(_user("after"))
    history.flush()
    assert [r.message for r in _resumed(store, new)] == [_user("after")]
    assert store.read(new).header.cwd == CWD


def test_clear_that_cannot_create_the_session_keeps_the_context(tmp_path: Path) -> None:
    _, transcript, taken = _new_session(tmp_path)
    history = _history(transcript)
    history.append(_user("before"))
    with pytest.raises(TranscriptWriteFailed, match="session already exists"):
        history.clear(taken)
    assert history.messages() == (_user("before"),)


def test_header_cwd_round_trips_and_old_headers_stay_readable(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    with_cwd, without = str(uuid.uuid4()), str(uuid.uuid4())
    store.create(session_header(with_cwd))
    store.create(session_header(without, cwd=None))
    assert store.read(with_cwd).header.cwd == CWD
    assert store.read(without).header.cwd is None
    assert "cwd" not in (tmp_path / without / "header.json").read_text()


@pytest.mark.parametrize(
    ("sessions", "cwd", "expected"),
    [
        pytest.param([], CWD, None, id="empty-store"),
        pytest.param([("a", CWD, 1)], CWD, "a", id="one"),
        pytest.param([("a", CWD, 1), ("b", CWD, 2)], CWD, "b", id="newest-transcript"),
        pytest.param([("a", CWD, 2), ("b", CWD, 1)], CWD, "a", id="not-creation-order"),
        pytest.param([("a", CWD, 1), ("b", "/elsewhere", 9)], CWD, "a", id="other-cwd-ignored"),
        pytest.param([("a", "/elsewhere", 1)], CWD, None, id="only-other-cwd"),
        pytest.param([("a", None, 5)], CWD, None, id="header-without-cwd-never-matches"),
    ],
)
def test_newest_session_of_a_cwd(
    tmp_path: Path, sessions: list[tuple[str, str | None, int]], cwd: str, expected: str | None
) -> None:
    store = SessionStore(tmp_path)
    ids: dict[str, str] = {}
    for name, session_cwd, changed in sessions:
        ids[name] = str(uuid.uuid4())
        store.create(session_header(ids[name], cwd=session_cwd))
        stamp = changed * 1_000_000_000
        os.utime(tmp_path / ids[name] / "transcript.jsonl", ns=(stamp, stamp))
    found = store.newest(cwd)
    assert found == (ids[expected] if expected is not None else None)


def test_newest_skips_unreadable_and_partial_directories(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    good = str(uuid.uuid4())
    store.create(session_header(good))
    broken = tmp_path / str(uuid.uuid4())
    broken.mkdir()
    (broken / "header.json").write_text("{")
    (tmp_path / "stray-file").write_text("")
    assert store.newest(CWD) == good


def test_a_view_is_a_snapshot_through_appends_compaction_and_clear(tmp_path: Path) -> None:
    _, transcript, _ = _new_session(tmp_path)
    history = _history(transcript)
    for n in range(4):
        history.append(_user(f"m{n}"))
    view = history.view()
    before = history.messages()
    history.append(_user("later"))
    _compact(history, str(uuid.uuid4()))
    history.clear(str(uuid.uuid4()))
    assert view == before and before == view
    assert tuple(view) == before and len(view) == 4
    assert list(reversed(view)) == list(reversed(before))


@pytest.mark.parametrize(
    ("index", "expected"),
    [(0, "m0"), (2, "m2"), (-1, "m2"), (-3, "m0"), (3, IndexError), (-4, IndexError)],
    ids=["first", "last", "minus-one", "minus-length", "length", "minus-length-minus-one"],
)
def test_view_indexing_is_bounded_by_its_length(
    tmp_path: Path, index: int, expected: str | type[Exception]
) -> None:
    _, transcript, _ = _new_session(tmp_path)
    history = _history(transcript)
    for n in range(3):
        history.append(_user(f"m{n}"))
    view = history.view()
    history.append(_user("beyond the view"))
    if isinstance(expected, str):
        assert view[index] == _user(expected)
    else:
        with pytest.raises(expected):
            view[index]


def test_view_slices_are_tuples_of_the_snapshot(tmp_path: Path) -> None:
    _, transcript, _ = _new_session(tmp_path)
    history = _history(transcript)
    for n in range(3):
        history.append(_user(f"m{n}"))
    view = history.view()
    history.append(_user("beyond the view"))
    assert view[:-1] == (_user("m0"), _user("m1"))
    assert view[1:] == (_user("m1"), _user("m2"))
