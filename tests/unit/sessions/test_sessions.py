"""The session store conformance suite (DEC-STORE-1, WIRE-025, DEC-HOME-1).

:class:`SessionStoreConformance` is the contract any session store meets:
append and read back, many appends, a torn tail written by hand and by a
real SIGKILLed writer, a write cut short by the file size limit, concurrent
readers while a writer appends, and fail-closed resume binding. A store
implementation runs it by subclassing with its ``FACTORY`` (a
``module:callable`` taking the store root, importable by the subprocess
tests). :class:`TestSessionStore` runs it against :class:`agentx.sessions.store.files.SessionStore`.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loguru import logger

from agentx.messages.frozen import FrozenDict, freeze, thaw
from agentx.sessions.store.errors import (
    InvalidSessionId,
    SessionCorrupt,
    SessionExists,
    SessionNotFound,
)
from agentx.sessions.store.files import HEADER_FILE_NAME, TRANSCRIPT_FILE_NAME, SessionStore
from agentx.sessions.store.header import SessionHeader, check_binding, validate_session_id
from agentx.sessions.store.jsonl import Transcript, encode_entries, parse_transcript

SESSION_ID = "0b7c3e52-6f0a-4d0e-9a51-3c2f8e1d4a77"
OTHER_ID = "5d1f9a80-2c44-4b7e-8f3e-91a0c6b2d915"
ROUTE = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


class Store(Protocol):
    """The store contract the suite exercises."""

    def create(self, header: SessionHeader) -> None: ...
    def open(self, session_id: str) -> Transcript: ...
    def read(self, session_id: str) -> Transcript: ...
    def append(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None: ...


def header_for(session_id: str = SESSION_ID) -> SessionHeader:
    return SessionHeader(
        session_id=session_id,
        provider_id="sol-east",
        provider_type="azure_openai",
        model="gpt-5.6-sol",
        route_binding=ROUTE,
        created_at=datetime(2026, 12, 2, 19, 52, 6, 123456, tzinfo=UTC),
    )


def seq_entry(seq: int) -> dict[str, Any]:
    return {"type": "user", "seq": seq, "message": {"role": "user", "content": f"prompt {seq}"}}


REALISTIC: tuple[tuple[str, dict[str, Any]], ...] = (
    ("user-text", {"type": "user", "message": {"role": "user", "content": "hello"}}),
    (
        "user-attachment-manifest",
        {
            "type": "user",
            "uuid": "c1a3f0de-97b4-4a5e-8d1e-0c6a8f4b2e11",
            "message": {
                "role": "user",
                "content_version": 1,
                "content": [
                    {"type": "text", "text": "what is in this picture?"},
                    {
                        "type": "attachment_ref",
                        "attachment_id": "att_01",
                        "kind": "image",
                        "name": "cat.png",
                        "mime_type": "image/png",
                        "size_bytes": 48213,
                        "sha256": "ab" * 32,
                        "storage_id": "blob_sha256_" + "ab" * 32,
                    },
                ],
            },
        },
    ),
    (
        "assistant-tool-use",
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "model": "gpt-5.6-sol",
                "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"path": "a"}},
                ],
                "usage": {"input_tokens": 1200, "output_tokens": 37},
            },
        },
    ),
    (
        "tool-result",
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": "line one\nline two",
                        "is_error": False,
                    }
                ],
            },
        },
    ),
    (
        "compact-boundary",
        {
            "type": "system",
            "subtype": "compact_boundary",
            "compact_metadata": {"trigger": "auto", "pre_tokens": 180000},
            "summary": "The user asked about cats.",
        },
    ),
    (
        "line-separators-and-escapes",
        {"type": "assistant", "text": 'a\u2028b\u2029c\r\n\u0085\x00"\\ \U0001f600'},
    ),
    ("big-numbers", {"n": 10**40, "f": -1.5e-300, "z": 0, "t": True, "nil": None}),
)


class SessionStoreConformance:
    """The contract; subclass with ``FACTORY`` set to run it on a store."""

    FACTORY: str

    def make_store(self, root: Path) -> Store:
        module, _, name = self.FACTORY.partition(":")
        factory: Callable[[Path], Store] = getattr(importlib.import_module(module), name)
        return factory(root)

    @pytest.fixture
    def root(self, tmp_path: Path) -> Path:
        return tmp_path / "home" / "sessions"

    @pytest.fixture
    def store(self, root: Path) -> Store:
        store = self.make_store(root)
        store.create(header_for())
        return store

    @pytest.fixture
    def warnings(self) -> Iterator[list[str]]:
        lines: list[str] = []
        sink = logger.add(lambda m: lines.append(m.record["message"]), level="WARNING")
        yield lines
        logger.remove(sink)

    def transcript_path(self, root: Path) -> Path:
        return root / SESSION_ID / TRANSCRIPT_FILE_NAME

    # -- create, header ---------------------------------------------------

    def test_create_then_read_is_the_header_and_no_entries(self, store: Store) -> None:
        transcript = store.read(SESSION_ID)
        assert transcript == Transcript(header=header_for(), entries=(), torn=False)

    def test_create_twice_is_refused_and_keeps_the_first(self, store: Store) -> None:
        store.append(SESSION_ID, [seq_entry(0)])
        with pytest.raises(SessionExists):
            store.create(header_for())
        assert store.read(SESSION_ID).entries == (freeze(seq_entry(0)),)

    def test_unknown_session_is_not_found(self, store: Store) -> None:
        for operation in (store.read, store.open):
            with pytest.raises(SessionNotFound):
                operation(OTHER_ID)
        with pytest.raises(SessionNotFound):
            store.append(OTHER_ID, [seq_entry(0)])

    def test_header_keeps_a_non_utc_offset(self, root: Path) -> None:
        store = self.make_store(root)
        header = SessionHeader(
            session_id=OTHER_ID,
            provider_id="p",
            provider_type="scripted",
            model="echo",
            route_binding="",
            created_at=datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=-5))),
        )
        store.create(header)
        assert store.read(OTHER_ID).header == header

    # -- append and read back ---------------------------------------------

    @pytest.mark.parametrize("entry", [e for _, e in REALISTIC], ids=[i for i, _ in REALISTIC])
    def test_append_reads_back_exactly(self, store: Store, entry: dict[str, Any]) -> None:
        store.append(SESSION_ID, [entry])
        transcript = store.read(SESSION_ID)
        assert not transcript.torn
        assert [thaw(e) for e in transcript.entries] == [entry]
        assert all(isinstance(e, FrozenDict) for e in transcript.entries)

    def test_a_batch_is_one_line_per_entry(self, store: Store, root: Path) -> None:
        entries = [e for _, e in REALISTIC]
        store.append(SESSION_ID, entries)
        data = self.transcript_path(root).read_bytes()
        assert data.endswith(b"\n")
        assert data.count(b"\n") == len(entries)
        assert [thaw(e) for e in store.read(SESSION_ID).entries] == entries

    def test_many_appends_keep_order(self, store: Store) -> None:
        seq = 0
        for batch_size in [1, 3, 2, 5, 1] * 60:
            store.append(SESSION_ID, [seq_entry(seq + i) for i in range(batch_size)])
            seq += batch_size
        entries = store.read(SESSION_ID).entries
        assert [e["seq"] for e in entries] == list(range(seq))

    def test_empty_batch_writes_nothing(self, store: Store, root: Path) -> None:
        store.append(SESSION_ID, [])
        assert self.transcript_path(root).read_bytes() == b""

    @pytest.mark.parametrize(
        "entry",
        [
            {"x": float("nan")},
            {"x": float("inf")},
            {"x": "\ud800"},
            {1: "a", "1": "b"},
            {"x": object()},
            ["not", "an", "object"],
        ],
        ids=["nan", "infinity", "lone-surrogate", "colliding-names", "not-json", "not-object"],
    )
    def test_an_entry_that_would_not_read_back_is_refused_whole(
        self, store: Store, root: Path, entry: Any
    ) -> None:
        store.append(SESSION_ID, [seq_entry(0)])
        with pytest.raises(ValueError):
            store.append(SESSION_ID, [seq_entry(1), entry])
        assert [e["seq"] for e in store.read(SESSION_ID).entries] == [0]

    # -- torn tail ----------------------------------------------------------

    @pytest.mark.parametrize(
        "tail",
        [
            b'{"type":"user","seq":2,"mess',
            b'{"type":"user","seq":2}',
            b'{"type":"us\n',
            b"\x00" * 4096,
            b'{"a":1,"a":2}\n',
        ],
        ids=[
            "partial-line",
            "whole-object-without-newline",
            "undecodable-with-newline",
            "zero-filled-block",
            "duplicate-member-last",
        ],
    )
    def test_torn_tail_is_dropped_with_a_warning(
        self, store: Store, root: Path, warnings: list[str], tail: bytes
    ) -> None:
        store.append(SESSION_ID, [seq_entry(0), seq_entry(1)])
        path = self.transcript_path(root)
        with path.open("ab") as f:
            f.write(tail)
        before = path.read_bytes()

        transcript = store.read(SESSION_ID)
        assert transcript.torn
        assert [e["seq"] for e in transcript.entries] == [0, 1]
        assert path.read_bytes() == before, "read() never modifies the transcript"
        assert any("torn" in w for w in warnings)

    def test_open_cuts_the_torn_tail_so_appends_continue(
        self, store: Store, root: Path, warnings: list[str]
    ) -> None:
        store.append(SESSION_ID, [seq_entry(0)])
        path = self.transcript_path(root)
        with path.open("ab") as f:
            f.write(b'{"type":"user","se')
        with pytest.raises(SessionCorrupt):
            store.append(SESSION_ID, [seq_entry(1)])

        assert store.open(SESSION_ID).torn
        store.append(SESSION_ID, [seq_entry(1)])
        transcript = store.read(SESSION_ID)
        assert not transcript.torn
        assert [e["seq"] for e in transcript.entries] == [0, 1]

    def test_open_of_an_intact_session_changes_nothing(self, store: Store, root: Path) -> None:
        store.append(SESSION_ID, [seq_entry(0)])
        before = self.transcript_path(root).read_bytes()
        transcript = store.open(SESSION_ID)
        assert not transcript.torn
        assert self.transcript_path(root).read_bytes() == before

    @pytest.mark.parametrize(
        "bad_line",
        [b'{"type":"us', b"[1,2]", b'{"a":1,"a":2}', b"\xff\xfe", b""],
        ids=["undecodable", "not-object", "duplicate-member", "invalid-utf8", "blank"],
    )
    def test_a_bad_line_before_the_last_is_corrupt(
        self, store: Store, root: Path, bad_line: bytes
    ) -> None:
        store.append(SESSION_ID, [seq_entry(0)])
        with self.transcript_path(root).open("ab") as f:
            f.write(bad_line + b"\n")
        store.append(SESSION_ID, [seq_entry(2)])
        for operation in (store.read, store.open):
            with pytest.raises(SessionCorrupt):
                operation(SESSION_ID)

    def test_a_non_object_last_line_is_corrupt_not_torn(self, store: Store, root: Path) -> None:
        """A whole, decodable line is data: a non-object is corruption, not a tear."""
        with self.transcript_path(root).open("ab") as f:
            f.write(b"[1]\n")
        with pytest.raises(SessionCorrupt):
            store.read(SESSION_ID)

    def test_a_sigkilled_writer_leaves_every_acknowledged_entry(
        self, store: Store, root: Path
    ) -> None:
        """A real writer process appends in a loop and acknowledges each
        fsynced batch on a pipe; it is SIGKILLed mid-loop. Every acknowledged
        entry reads back, the rest is a contiguous prefix, and after open()
        appending continues."""
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, self.FACTORY, str(root), SESSION_ID],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        acknowledged = 0
        while acknowledged < 200:
            acknowledged = int(writer.stdout.readline())
        writer.kill()
        writer.wait(timeout=30)
        writer.stdout.close()

        seqs = [e["seq"] for e in store.read(SESSION_ID).entries]
        assert len(seqs) >= acknowledged
        assert seqs == list(range(len(seqs)))
        store.open(SESSION_ID)
        store.append(SESSION_ID, [seq_entry(len(seqs))])
        assert [e["seq"] for e in store.read(SESSION_ID).entries] == list(range(len(seqs) + 1))

    def test_a_write_cut_short_by_the_file_size_limit_leaves_no_partial_batch(
        self, store: Store, root: Path
    ) -> None:
        """A real process under RLIMIT_FSIZE gets a short write then EFBIG:
        the transcript is cut back to the batch boundary."""
        store.append(SESSION_ID, [seq_entry(0)])
        size = self.transcript_path(root).stat().st_size
        result = subprocess.run(
            [sys.executable, "-c", _LIMITED, self.FACTORY, str(root), SESSION_ID, str(size + 40)],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        assert result.stdout.strip() == "EFBIG"
        assert self.transcript_path(root).stat().st_size == size
        transcript = store.read(SESSION_ID)
        assert not transcript.torn
        assert [e["seq"] for e in transcript.entries] == [0]

    # -- concurrent readers -------------------------------------------------

    def test_concurrent_readers_each_see_a_prefix(self, store: Store, root: Path) -> None:
        readers = 4
        batches = 150
        start = threading.Barrier(readers + 1)
        done = threading.Event()
        seen: list[list[int]] = [[] for _ in range(readers)]
        errors: list[BaseException] = []
        reader_store = self.make_store(root)

        def read_loop(index: int) -> None:
            try:
                start.wait()
                while not done.is_set():
                    seqs = [e["seq"] for e in reader_store.read(SESSION_ID).entries]
                    assert seqs == list(range(len(seqs)))
                    seen[index].append(len(seqs))
            except BaseException as error:  # reported by the main thread
                errors.append(error)

        threads = [threading.Thread(target=read_loop, args=(i,)) for i in range(readers)]
        for thread in threads:
            thread.start()
        start.wait()
        for batch in range(batches):
            store.append(SESSION_ID, [seq_entry(2 * batch), seq_entry(2 * batch + 1)])
        done.set()
        for thread in threads:
            thread.join(timeout=60)
        assert errors == []
        for counts in seen:
            assert counts == sorted(counts), "a reader never sees the transcript shrink"
        final = [e["seq"] for e in reader_store.read(SESSION_ID).entries]
        assert final == list(range(2 * batches))

    # -- resume binding (WIRE-025) ------------------------------------------

    @pytest.mark.parametrize(
        ("changed", "mismatch"),
        [
            ({}, None),
            ({"provider_id": "sol-west"}, "provider_id"),
            ({"provider_type": "openai"}, "provider_type"),
            ({"model": "gpt-5.6-mini"}, "model"),
            ({"route_binding": "0" * 64}, "route_binding"),
            ({"model": "m", "route_binding": "0" * 64}, "model"),
        ],
        ids=["match", "id", "type", "model", "route", "first-of-several"],
    )
    def test_resume_binding_fails_closed(
        self, store: Store, changed: dict[str, str], mismatch: str | None
    ) -> None:
        offered = {
            "provider_id": "sol-east",
            "provider_type": "azure_openai",
            "model": "gpt-5.6-sol",
            "route_binding": ROUTE,
            **changed,
        }
        header = store.open(SESSION_ID).header
        assert check_binding(header, **offered) == mismatch

    # -- session ids --------------------------------------------------------

    @pytest.mark.parametrize(
        "session_id",
        [
            "../" + SESSION_ID,
            SESSION_ID + "/..",
            "..",
            "",
            SESSION_ID.upper(),
            SESSION_ID.replace("-", ""),
            "{" + SESSION_ID + "}",
            SESSION_ID + "\x00",
            SESSION_ID[:-1],
        ],
        ids=[
            "traversal-prefix",
            "traversal-suffix",
            "dotdot",
            "empty",
            "uppercase",
            "no-hyphens",
            "braces",
            "nul",
            "short",
        ],
    )
    def test_a_session_id_that_is_not_a_canonical_uuid_builds_no_path(
        self, root: Path, session_id: str
    ) -> None:
        store = self.make_store(root)
        with pytest.raises(InvalidSessionId):
            store.create(header_for(session_id))
        for operation in (store.read, store.open):
            with pytest.raises(InvalidSessionId):
                operation(session_id)
        with pytest.raises(InvalidSessionId):
            store.append(session_id, [seq_entry(0)])
        assert list(root.parent.rglob("*")) == [root]


_WRITER = """
import importlib, sys
from pathlib import Path
module, _, name = sys.argv[1].partition(":")
store = getattr(importlib.import_module(module), name)(Path(sys.argv[2]))
seq = 0
while True:
    batch = [
        {"type": "user", "seq": seq + i, "message": {"role": "user", "content": "x" * 300}}
        for i in range(3)
    ]
    store.append(sys.argv[3], batch)
    seq += 3
    print(seq, flush=True)
"""

_LIMITED = """
import errno, importlib, resource, sys
from pathlib import Path
module, _, name = sys.argv[1].partition(":")
store = getattr(importlib.import_module(module), name)(Path(sys.argv[2]))
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[4]), resource.RLIM_INFINITY))
batch = [{"type": "user", "seq": 1, "message": {"role": "user", "content": "y" * 200}}]
try:
    store.append(sys.argv[3], batch)
except OSError as error:
    print(errno.errorcode[error.errno])
else:
    print("written")
"""


class TestSessionStore(SessionStoreConformance):
    FACTORY = "agentx.sessions.store.files:SessionStore"


# -- implementation details of agentx.sessions.store.files -------------------------------


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"extra": 1}, "wrong members"),
        ({"version": 2}, "unsupported version"),
        ({"model": 5}, "not a string"),
        ({"session_id": OTHER_ID}, "another session"),
        ({"created_at": "yesterday"}, "bad created_at"),
        ({"cwd": 5}, "not a string"),
    ],
    ids=["unknown-member", "version", "wrong-type", "other-session", "bad-timestamp", "cwd-type"],
)
def test_a_bad_header_is_corrupt(tmp_path: Path, document: dict[str, Any], problem: str) -> None:
    store = SessionStore(tmp_path)
    store.create(header_for())
    path = tmp_path / SESSION_ID / HEADER_FILE_NAME
    path.write_text(json.dumps({**json.loads(path.read_text()), **document}))
    with pytest.raises(SessionCorrupt, match=problem):
        store.read(SESSION_ID)


def test_leftover_staging_directories_of_dead_processes_are_removed(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".partial-{dead.stdout.strip()}-x"
    stale.mkdir()
    (stale / HEADER_FILE_NAME).write_bytes(b"{")
    mine = tmp_path / f".partial-{os.getpid()}-y"
    mine.mkdir()
    SessionStore(tmp_path)
    assert not stale.exists()
    assert mine.exists()
    shutil.rmtree(mine)


def test_header_repr_hides_the_route_binding() -> None:
    assert ROUTE not in repr(header_for())


def test_a_naive_created_at_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        SessionHeader(
            session_id=SESSION_ID,
            provider_id="p",
            provider_type="t",
            model="m",
            route_binding="",
            created_at=datetime(2026, 1, 1),
        )


def test_validate_session_id_returns_a_canonical_id() -> None:
    assert validate_session_id(SESSION_ID) == SESSION_ID


_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"]))
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
_entries = st.lists(st.dictionaries(st.text(), _json_values, max_size=5), min_size=1, max_size=8)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(_entries, min_size=1, max_size=4))
def test_any_json_objects_read_back(tmp_path: Path, batches: list[list[dict[str, Any]]]) -> None:
    # A fresh root per example: hypothesis may replay the same example.
    store = SessionStore(Path(tempfile.mkdtemp(dir=tmp_path)))
    store.create(header_for())
    for batch in batches:
        store.append(SESSION_ID, batch)
    expected = [freeze(entry) for batch in batches for entry in batch]
    assert list(store.read(SESSION_ID).entries) == expected


@settings(max_examples=200)
@given(
    entries=st.lists(st.dictionaries(st.text(), _json_values, max_size=3), min_size=1, max_size=6),
    data=st.data(),
)
def test_a_transcript_cut_at_any_byte_reads_as_a_prefix(
    entries: list[dict[str, Any]], data: st.DataObject
) -> None:
    """A crash can stop the file at any byte: the intact lines are exactly the
    entries whose newline survived, and the rest is reported torn."""
    encoded = b"".join(encode_entries(entries).pieces())
    cut = data.draw(st.integers(min_value=0, max_value=len(encoded)))
    decoded, intact = parse_transcript(encoded[:cut])
    complete = encoded[:cut].count(b"\n")
    assert list(decoded) == [freeze(e) for e in entries[:complete]]
    at_boundary = cut == 0 or encoded[cut - 1 : cut] == b"\n"
    assert (intact is None) == at_boundary
    if intact is not None:
        assert encoded[:intact].count(b"\n") == complete


def test_an_entrys_place_is_its_line_or_its_rows_seq_and_line() -> None:
    """DEC-STORE-1 diagnostics: the files name the line; a database names the
    row's seq and the line in it, at each row's last line and one past it."""
    entries = tuple(FrozenDict(n=n) for n in range(5))
    files = Transcript(header=header_for(), entries=entries, torn=False)
    assert [files.place(i) for i in (0, 4)] == ["line 1", "line 5"]
    rows = Transcript(header=header_for(), entries=entries, torn=False, rows=((3, 2), (7, 3)))
    assert [rows.place(i) for i in range(5)] == [
        "the row with seq 3, line 1 of it",
        "the row with seq 3, line 2 of it",
        "the row with seq 7, line 1 of it",
        "the row with seq 7, line 2 of it",
        "the row with seq 7, line 3 of it",
    ]
    assert rows == files  # where it is stored is not what it holds
