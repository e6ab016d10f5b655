"""``--resume-session-at`` / ``--resume-drops-turn``'s core (DEC-CLI-5,
DEC-STORE-1): where a cut falls, what it keeps, the recorded cuts a reader
applies, and the drops-turn check, as tables."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.resume_point import (
    DROPS_TURN_REFUSAL,
    ResumePointError,
    cut,
    resume_point_entry,
    rewound,
)
from agentx.messages.transcript_shape import entry_problem


def msg(uuid: str, role: str = "user", *blocks: dict[str, Any]) -> dict[str, Any]:
    content = list(blocks) or [{"type": "text", "text": uuid}]
    return {"type": "message", "uuid": uuid, "role": role, "content": content}


def result(uuid: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": "t", "content": "x", "is_error": False}
    return msg(uuid, "user", block)


TURN = {"type": "turn", "result_uuid": "r"}
PERMISSION = {"type": "permission", "tool_use_id": "t"}
#: Two turns: p1 -> a1 (tool use) -> r1 (result) -> a1b -> turn; p2 -> a2 -> turn.
ENTRIES = [
    msg("p1"),
    msg("a1", "assistant"),
    PERMISSION,
    result("r1"),
    msg("a1b", "assistant"),
    TURN,
    msg("p2"),
    msg("a2", "assistant"),
    TURN,
]


def uuids(entries: Any) -> list[str]:
    return [e.get("uuid", e["type"]) for e in entries]


@pytest.mark.parametrize(
    ("at", "kept"),
    [
        ("p1", ["p1"]),
        ("a1", ["p1", "a1", "permission"]),
        ("a1b", ["p1", "a1", "permission", "r1", "a1b", "turn"]),
        ("a2", uuids(ENTRIES)),
    ],
    ids=["a-prompt", "mid-turn-keeps-its-ledger", "a-turn-end-keeps-its-turn-entry", "the-end"],
)
def test_where_a_cut_falls(at: str, kept: list[str]) -> None:
    assert uuids(cut(ENTRIES, at)) == kept


@pytest.mark.parametrize(
    "at", ["", "nope", "r", "turn"], ids=["empty", "unknown", "ledger", "type"]
)
def test_a_point_that_names_no_message_is_refused(at: str) -> None:
    with pytest.raises(ResumePointError, match="no message of the session has this uuid"):
        cut(ENTRIES, at)


def test_the_last_entry_with_a_uuid_is_the_point() -> None:
    twice = [msg("x"), msg("y", "assistant"), msg("x"), msg("z", "assistant")]
    assert uuids(cut(twice, "x")) == ["x", "y", "x"]


@pytest.mark.parametrize(
    ("at", "drops", "problem"),
    [
        ("a1b", "p2", None),
        ("a2", "p9", None),  # nothing after the point: nothing else discarded
        ("a1b", "p1", "is not the prompt it names"),
        ("a1", "p2", "is not the prompt it names"),  # r1 is a tool result, not p2
        ("p1", "p9", "is not the prompt it names"),
        ("a1", "r1", "is not the prompt it names"),  # a tool result is never a prompt
    ],
    ids=["exactly-that-turn", "nothing-after", "a-kept-prompt", "mid-turn", "wrong", "tool-result"],
)
def test_drops_turn(at: str, drops: str, problem: str | None) -> None:
    if problem is None:
        assert cut(ENTRIES, at, drops) == tuple(ENTRIES[: len(cut(ENTRIES, at))])
        return
    with pytest.raises(ResumePointError) as info:
        cut(ENTRIES, at, drops)
    assert str(info.value).startswith(DROPS_TURN_REFUSAL) and problem in str(info.value)
    assert drops not in str(info.value)


def test_drops_turn_refuses_a_later_turn_in_the_range() -> None:
    three = [*ENTRIES, msg("p3"), msg("a3", "assistant"), TURN]
    with pytest.raises(ResumePointError, match="the session went on after the named turn"):
        cut(three, "a1b", "p2")
    # A turn that never ended (no ledger entry) is all the named turn's.
    unfinished = [msg("p1"), msg("a1", "assistant"), msg("p2"), msg("a2", "assistant")]
    assert uuids(cut(unfinished, "a1", "p2")) == ["p1", "a1"]


def test_reminders_within_the_named_turn_are_its_own() -> None:
    """A mid-turn user text agentx itself adds (a structured-output or Stop
    hook reminder) comes before the turn's ledger entry: the turn's own."""
    entries = [msg("p1"), msg("a1", "assistant"), msg("p2"), msg("nudge"), msg("a2", "assistant")]
    assert uuids(cut([*entries, TURN], "a1", "p2")) == ["p1", "a1"]


def test_recorded_cuts_are_applied_in_order() -> None:
    once = [*ENTRIES, resume_point_entry(uuid="c1", at="a1b"), msg("p3"), msg("a3", "assistant")]
    assert uuids(rewound(once)) == ["p1", "a1", "permission", "r1", "a1b", "turn", "p3", "a3"]
    twice = [*once, TURN, resume_point_entry(uuid="c2", at="p1"), msg("p4")]
    assert uuids(rewound(twice)) == ["p1", "p4"]
    # A cut into a branch an earlier cut removed names nothing.
    stale = [*once, resume_point_entry(uuid="c3", at="p2")]
    with pytest.raises(ResumePointError, match="a resume point names no earlier entry"):
        rewound(stale)


def test_a_cut_never_names_a_later_entry() -> None:
    ahead = [msg("p1"), resume_point_entry(uuid="c", at="a1"), msg("a1", "assistant")]
    with pytest.raises(ResumePointError):
        rewound(ahead)


def test_without_recorded_cuts_the_entries_are_as_stored() -> None:
    assert rewound(ENTRIES) == tuple(ENTRIES)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (resume_point_entry(uuid="c", at="a"), None),
        ({"type": "resume_point", "uuid": "c"}, "the resume point has no 'at'"),
        ({"type": "resume_point", "uuid": 5, "at": "a"}, "the resume point's 'uuid' is a number"),
    ],
    ids=["well-formed", "no-at", "uuid-a-number"],
)
def test_the_stored_shape(entry: dict[str, Any], problem: str | None) -> None:
    found = entry_problem(entry)
    assert found == problem if problem is None else (found or "").startswith(problem)
