"""Resuming a session whose stored entries have an unexpected shape
(DEC-STORE-1), on both stores: generated wrong shapes are each one
start-up error (exit 2) naming the session and the entry's place (the
file's line; the database row's ``seq``), never another exception; the
real process says so in one line."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, assume, given, settings

from agentx.config.registry import BUILTIN_REGISTRY, route_binding
from agentx.media.blobs import BlobStore
from agentx.messages.frozen import freeze
from agentx.messages.transcript_shape import entry_problem
from agentx.sessions.setup import SessionSetupError, open_session
from agentx.sessions.store.header import SessionHeader
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import DUPLEX, encode, run_once, user
from tests.store.conformance import NOWHERE
from tests.unit.messages.test_transcript_shape import TEXT, message, mutated

LOCAL = BUILTIN_REGISTRY.providers[0]


def _stored(url: str, cwd: Path, entries: list[Any]) -> str:
    """A new session of the built-in provider holding ``entries``; its id."""
    session = str(uuid.uuid4())
    store = open_store(url, NOWHERE)
    try:
        store.create(
            SessionHeader(
                session_id=session,
                provider_id=LOCAL.id,
                provider_type=LOCAL.type,
                model=LOCAL.model,
                route_binding=route_binding(LOCAL),
                created_at=datetime.now(UTC),
                cwd=str(cwd),
            )
        )
        store.append(session, [message(TEXT)])  # the row with seq 1 / line 1
        store.append(session, entries)
    finally:
        store.close()
    return session


def _resume(url: str, home: Path, session: str) -> None:
    opened = open_session(
        home=home,
        desc=LOCAL,
        blobs=BlobStore(home / "blobs"),
        resume=session,
        session_id=None,
        cwd=home,
        store_url=url,
    )
    assert opened.transcript is not None
    opened.transcript.close()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(entry=mutated())
def test_a_generated_wrong_shape_is_one_setup_error_naming_its_place(
    url: str, tmp_path: Path, entry: Any
) -> None:
    assume(isinstance(entry, dict))  # a store writes objects only (see below)
    session = _stored(url, tmp_path, [message(TEXT, uuid="m2"), entry])
    problem = entry_problem(freeze(entry))
    try:
        _resume(url, tmp_path, session)
    except SessionSetupError as exc:
        text = str(exc)
        assert text.startswith("--resume: ") and "\n" not in text
        if problem is not None:
            place = "line 3" if url.startswith("file:") else "the row with seq 2, line 2 of it"
            assert f"session {session} in " in text and f"{place} of its transcript" in text
            assert problem in text
    else:
        assert problem is None


BAD_LINES: list[tuple[str, Any, str]] = [
    ("content-a-number", {**message(), "content": 5}, "'content' is a number, not an array"),
    ("text-a-number", message({"type": "text", "text": 7}), "'text' is a number, not a string"),
    ("block-a-string", message("x"), "block 0 is a string, not an object"),  # type: ignore[arg-type]
    ("no-type", {"role": "user", "content": []}, "no known 'type'"),
    ("an-array", [1, 2], "not a JSON object"),
]


def _append_raw(url: str, session: str, home: Path, entry: Any) -> str:
    """Write ``entry`` past the store's own checks, as another program
    could; the place a diagnostic must name."""
    line = encode(entry)
    if url.startswith("file:"):
        path = Path(url.removeprefix("file://")) / session / "transcript.jsonl"
        count = path.read_bytes().count(b"\n")
        with path.open("ab") as out:
            out.write(line)
        return f"line {count + 1}"
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT max(seq) FROM agentx_batches WHERE session_id = %s", (session,)
        ).fetchone()
        assert row is not None
        conn.execute(
            "INSERT INTO agentx_batches (session_id, seq, lines) VALUES (%s, %s, %s)",
            (session, row[0] + 1, line.decode()),
        )
    return f"the row with seq {row[0] + 1}"


@pytest.mark.parametrize(("name", "entry", "says"), BAD_LINES, ids=[b[0] for b in BAD_LINES])
def test_resume_of_a_wrong_shape_is_exit_2_in_one_line(
    url: str, tmp_path: Path, name: str, entry: Any, says: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    args = [*DUPLEX, "--session-store", url]
    first = run_once(args, encode(user("stored")), home=home, cwd=home)
    assert first.returncode == 0, first.stderr
    session = next(
        line.split('"session_id":"')[1][:36]
        for line in first.stdout.decode().splitlines()
        if '"session_id":"' in line
    )
    place = _append_raw(url, session, home, entry)
    resumed = run_once([*args, "--resume", session], encode(user("again")), home=home, cwd=home)
    assert resumed.returncode == 2, resumed.stderr
    assert resumed.stdout == b""
    lines = resumed.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    # The session: by id (a database) or by its folder (the files).
    assert session in lines[0] and place in lines[0] and says in lines[0], lines
