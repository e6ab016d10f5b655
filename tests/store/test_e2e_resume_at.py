"""``--resume-session-at`` and ``--resume-drops-turn`` on both stores
(DEC-CLI-5, DEC-STORE-1): the model receives the conversation only up to the
named message; a fork copies just that much; without a fork the cut is
recorded in the session and a later plain resume follows it; the drops-turn
check refuses a cut that would discard more than the named turn."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.frozen import thaw
from agentx.messages.resume_point import rewound
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import DUPLEX, encode, is_result, log_lines, records_of, run_once
from tests.e2e.agentx_process import user as user_record
from tests.fakes.provider_server import (
    ProviderServer,
    RecordedRequest,
    Reply,
    anthropic_text_stream,
)

KEY = "sk-ant-resume-at-9d3e"


def _texts_in(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(b["text"] for b in content if b.get("type") == "text")
    return texts


def _stored(url: str, session_id: str) -> list[str]:
    """The texts of the branch a resume reads (every recorded cut applied)."""
    store = open_store(url, Path("/nonexistent"))
    try:
        entries = rewound(store.read(session_id).entries)
    finally:
        store.close()
    return _texts_in([thaw(e) for e in entries if e["type"] == "message"])


class Session:
    """Runs agentx against one loopback model for the whole test (the
    session's route binding names its address)."""

    def __init__(self, home: Path, url: str, server: ProviderServer) -> None:
        self.home, self.url, self.server = home, url, server
        self.requests: list[RecordedRequest] = []

    def run(
        self, prompts: list[tuple[str, str]], *args: str, status: int = 0
    ) -> tuple[list[dict[str, Any]], str]:
        """Each (prompt, uuid), the model answering the prompt in capitals;
        the records and stderr (:attr:`requests`: this run's requests)."""
        before = len(self.server.requests)
        self.server.rescript(*(Reply(chunks=anthropic_text_stream(p.upper())) for p, _ in prompts))
        stdin = b"".join(encode(user_record(p, uuid=u)) for p, u in prompts)
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": self.server.url}
        proc = run_once(
            (*DUPLEX, "--session-store", self.url, *args), stdin, home=self.home, env=env
        )
        self.requests = list(self.server.requests[before:])
        assert proc.returncode == status, proc.stderr
        stderr = proc.stderr.decode()
        assert KEY not in stderr
        return (records_of(proc.stdout) if status == 0 else []), stderr


@pytest.fixture
def session(tmp_path: Path, url: str) -> Iterator[Session]:
    home = tmp_path / "home"
    home.mkdir()
    with ProviderServer([]) as server:
        yield Session(home, url, server)


def _ids() -> tuple[str, str, str]:
    return str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())


def _three_turns(session: Session) -> tuple[str, list[str], tuple[str, str, str]]:
    """A session of three turns: its id, its assistant uuids, its prompt uuids."""
    prompts = _ids()
    records, _ = session.run(list(zip(("one", "two", "three"), prompts, strict=True)))
    assistants = [r["uuid"] for r in records if r["type"] == "assistant"]
    assert len(assistants) == 3 and len([r for r in records if is_result(r)]) == 3
    return records[0]["session_id"], assistants, prompts


def test_fork_at_a_message_copies_the_conversation_up_to_it(session: Session) -> None:
    sid, assistants, _ = _three_turns(session)
    records, _ = session.run(
        [("four", str(uuid.uuid4()))],
        "--resume",
        sid,
        "--resume-session-at",
        assistants[0],
        "--fork-session",
    )
    forked = records[0]["session_id"]
    assert forked != sid
    (request,) = session.requests
    assert _texts_in(request.body["messages"]) == ["one", "ONE", "four"]
    assert _stored(session.url, forked) == ["one", "ONE", "four", "FOUR"]
    assert _stored(session.url, sid) == ["one", "ONE", "two", "TWO", "three", "THREE"]


def test_resume_at_a_message_without_a_fork_is_recorded_and_followed(session: Session) -> None:
    sid, assistants, prompts = _three_turns(session)
    records, _ = session.run(
        [("five", str(uuid.uuid4()))], "--resume", sid, "--resume-session-at", assistants[1]
    )
    assert records[0]["session_id"] == sid
    assert _texts_in(session.requests[0].body["messages"]) == ["one", "ONE", "two", "TWO", "five"]
    # A later plain resume follows the rewound branch.
    session.run([("six", str(uuid.uuid4()))], "--resume", sid)
    assert _texts_in(session.requests[0].body["messages"]) == [
        *("one", "ONE", "two", "TWO", "five", "FIVE"),
        "six",
    ]
    # A prompt's own uuid is a point too: resume at the first prompt.
    session.run([("seven", str(uuid.uuid4()))], "--resume", sid, "--resume-session-at", prompts[0])
    assert _texts_in(session.requests[0].body["messages"]) == ["one", "seven"]


def test_drops_turn_accepts_a_cut_of_exactly_that_turn(session: Session) -> None:
    sid, assistants, prompts = _three_turns(session)
    records, _ = session.run(
        [("again", str(uuid.uuid4()))],
        *("--resume", sid, "--fork-session"),
        f"--resume-session-at={assistants[1]}",
        f"--resume-drops-turn={prompts[2]}",
    )
    assert next(r for r in records if is_result(r))["subtype"] == "success"
    assert _texts_in(session.requests[0].body["messages"]) == ["one", "ONE", "two", "TWO", "again"]


@pytest.mark.parametrize(
    ("point", "dropped", "why"),
    [
        pytest.param(0, 1, "the session went on after the named turn ended", id="two-turns"),
        pytest.param(1, 1, "is not the prompt it names", id="another-prompt"),
        pytest.param(1, None, "is not the prompt it names", id="unknown-prompt"),
    ],
)
def test_drops_turn_refuses_a_cut_that_discards_more(
    session: Session, point: int, dropped: int | None, why: str
) -> None:
    sid, assistants, prompts = _three_turns(session)
    named = prompts[dropped] if dropped is not None else str(uuid.uuid4())
    _, stderr = session.run(
        [("never", str(uuid.uuid4()))],
        *("--resume", sid, "--fork-session"),
        f"--resume-session-at={assistants[point]}",
        f"--resume-drops-turn={named}",
        status=2,
    )
    assert session.requests == []
    (line,) = log_lines(stderr)
    assert line.startswith("agentx: Resume rejected by --resume-drops-turn: ") and why in line
    assert named not in line


def test_an_unknown_message_is_refused(session: Session) -> None:
    sid, _, _ = _three_turns(session)
    unknown = str(uuid.uuid4())
    _, stderr = session.run(
        [("never", str(uuid.uuid4()))], "--resume", sid, "--resume-session-at", unknown, status=2
    )
    (line,) = log_lines(stderr)
    assert "--resume-session-at: no message of the session has this uuid" in line
    assert session.requests == [] and unknown not in line
    # Nothing was recorded: a plain resume still sees all three turns.
    session.run([("on", str(uuid.uuid4()))], "--resume", sid)
    assert len(_texts_in(session.requests[0].body["messages"])) == 7


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("--resume-session-at", "x"), "--resume-session-at requires --resume or --continue"),
        (
            ("--continue", "--resume-drops-turn", "x"),
            "--resume-drops-turn requires --resume-session-at",
        ),
        (("--continue", "--resume-session-at="), "--resume-session-at needs the uuid"),
        (
            ("--continue", "--resume-session-at", "x", "--resume-drops-turn="),
            "--resume-drops-turn needs the uuid",
        ),
    ],
    ids=["no-resume", "drops-alone", "empty-point", "empty-drops"],
)
def test_usage_errors(tmp_path: Path, args: tuple[str, ...], problem: str) -> None:
    proc = run_once((*DUPLEX, *args), b"", home=tmp_path)
    assert proc.returncode == 2 and proc.stdout == b""
    assert problem in proc.stderr.decode()
