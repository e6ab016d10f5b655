"""File checkpoints, the sans-IO core (agentx.messages.checkpoints, DEC-PROFILE-2)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.checkpoints import (
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    MAX_SESSION_BYTES,
    NOT_FOUND,
    BadEntry,
    Entry,
    Keep,
    Kept,
    Lose,
    Lost,
    Mark,
    Now,
    Plan,
    Refusal,
    Stop,
    Stopped,
    Target,
    admit,
    admit_mark,
    answer,
    cannot,
    decode,
    enabled,
    encode,
    judge,
    line_counts,
    plan_rewind,
    rewind_request_problem,
)
from agentx.messages.frozen import FrozenDict

D1, D2, D3 = "1" * 64, "2" * 64, "3" * 64


@pytest.mark.parametrize(
    ("environ", "settings", "expected"),
    [
        ({}, [], False),
        ({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"}, [], True),
        ({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "1"}, [], True),
        ({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": " TRUE "}, [], True),
        ({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "false"}, [], False),
        ({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": ""}, [], False),
        ({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"}, [True], True),
        ({"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"}, [True, False], False),
        ({}, [True], False),
        (
            {
                "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true",
                "CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING": "1",
            },
            [],
            False,
        ),
    ],
)
def test_enabled(environ: dict[str, str], settings: list[object], expected: bool) -> None:
    """The SDKs' variable turns it on; Claude Code's disabling variable or a
    ``fileCheckpointingEnabled: false`` in any source keeps it off."""
    assert enabled(environ, settings) is expected


ENTRIES: list[Entry] = [
    Mark("m-1"),
    Kept(message="m-1", path="/w/new.txt"),
    Kept(message="m-1", path="/w/a.txt", digest=D1, size=3, mode=0o600),
    Kept(message="m-1", path="/w/a.txt", digest=D1, size=3, mode=0o600, start=True),
    Lost(message="m-1", path="/w/big", reason="too big", size=2**40, mtime_ns=5),
    Lost(message="m-1", path="/w/link", reason="not regular", start=True),
    Kept(message="m-1", path="/w/caf\udce9", start=True),
    Stopped(),
]


@pytest.mark.parametrize("entry", ENTRIES)
def test_encode_decode_round_trip(entry: Entry) -> None:
    line = encode(entry)
    assert line.isascii() and "\n" not in line
    assert decode(line) == entry


@pytest.mark.parametrize(
    "line",
    [
        "",
        "[]",
        '{"kind":"message"}',
        '{"kind":"message","message":""}',
        '{"kind":"message","message":"m","start":true}',
        '{"kind":"file","message":"m","path":"/p","sha256":"xyz","size":1,"mode":420}',
        '{"kind":"file","message":"m","path":"/p","sha256":"' + D1 + '","size":-1,"mode":420}',
        '{"kind":"file","message":"m","path":"/p","sha256":"' + D1 + '","size":1,"mode":70000}',
        '{"kind":"file","message":"m","path":"/p","sha256":"'
        + D1
        + f'","size":{MAX_FILE_BYTES + 1},"mode":420}}',
        '{"kind":"file","message":"m","path":"/p","sha256":"' + D1 + '","size":true,"mode":420}',
        '{"kind":"file","message":"m","path":"/p","other":1}',
        '{"kind":"file","message":"m","path":"/p","start":"yes"}',
        '{"kind":"lost","message":"m","path":"/p"}',
        '{"kind":"lost","message":"m","path":"/p","reason":"r","size":1}',
        '{"kind":"stopped","x":1}',
        '{"kind":"rewound"}',
    ],
)
def test_decode_refuses_every_other_shape(line: str) -> None:
    with pytest.raises(BadEntry):
        decode(line)


@pytest.mark.parametrize(
    ("size", "new_bytes", "used", "entries", "expected"),
    [
        (MAX_FILE_BYTES, True, 0, 0, Keep()),
        (MAX_FILE_BYTES + 1, True, 0, 0, Lose(f"it was larger than {MAX_FILE_BYTES} bytes")),
        (10, True, MAX_SESSION_BYTES - 10, 0, Keep()),
        (
            11,
            True,
            MAX_SESSION_BYTES - 10,
            0,
            Lose(f"the session's checkpoints already held {MAX_SESSION_BYTES} bytes"),
        ),
        (11, False, MAX_SESSION_BYTES - 10, 0, Keep()),  # already kept: costs nothing
        (1, True, 0, MAX_ENTRIES - 1, Keep()),
        (1, True, 0, MAX_ENTRIES, Stop()),
    ],
)
def test_admit_at_each_bound_and_one_past(
    size: int, new_bytes: bool, used: int, entries: int, expected: Keep | Lose | Stop
) -> None:
    assert admit(size=size, new_bytes=new_bytes, used=used, entries=entries) == expected


def test_admit_mark_at_the_bound() -> None:
    assert admit_mark(MAX_ENTRIES - 1) and not admit_mark(MAX_ENTRIES)


def _kept(message: str, path: str, digest: str | None = None, *, start: bool = False) -> Kept:
    return Kept(message=message, path=path, digest=digest, size=1, start=start)


def _t(path: str, digest: str | None) -> Target:
    return Target(path=path, digest=digest, size=1)


# m1: a changed (prior D1), b created. m2 begins: a kept again (D2), b kept
# (D3); then c created. m3 begins: nothing changed since (nothing kept); a changed.
TIMELINE: list[Entry] = [
    Mark("m1"),
    _kept("m1", "a", D1),
    _kept("m1", "b"),
    Mark("m2"),
    _kept("m2", "a", D2, start=True),
    _kept("m2", "b", D3, start=True),
    _kept("m2", "c"),
    Mark("m3"),
    _kept("m3", "a", D3),
]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        pytest.param("m1", Plan((_t("a", D1), _t("b", None), _t("c", None))), id="first"),
        pytest.param("m2", Plan((_t("a", D2), _t("b", D3), _t("c", None))), id="second"),
        # Nothing kept as m3 began: each file's last state before it (the rule
        # alone; the keeper keeps again every file changed since).
        pytest.param("m3", Plan((_t("a", D2), _t("b", D3), _t("c", None))), id="third"),
        pytest.param("m9", Refusal(NOT_FOUND), id="unknown"),
    ],
)
def test_plan_rewind(message: str, expected: Plan | Refusal) -> None:
    assert plan_rewind(TIMELINE, message) == expected


def test_a_state_kept_later_in_a_message_is_not_its_start() -> None:
    """A later entry (a prior state) never stands for the state as the message began."""
    entries: list[Entry] = [
        Mark("m1"),
        _kept("m1", "a", D1),
        Mark("m2"),
        _kept("m2", "b", D2),
        _kept("m2", "a", D3, start=True),  # not in the opening group: ignored as start
    ]
    plan = plan_rewind(entries, "m2")
    assert isinstance(plan, Plan)
    assert {t.path: t.digest for t in plan.targets} == {"a": D1, "b": D2}


def test_a_rewind_across_the_stop_is_refused() -> None:
    entries: list[Entry] = [Mark("m1"), _kept("m1", "a", D1), Stopped()]
    refusal = plan_rewind(entries, "m1")
    assert isinstance(refusal, Refusal) and str(MAX_ENTRIES) in refusal.error


def test_a_lost_state_is_a_target_that_only_an_unchanged_file_passes() -> None:
    entries: list[Entry] = [
        Mark("m1"),
        Lost(message="m1", path="big", reason="too big", size=9, mtime_ns=7),
    ]
    plan = plan_rewind(entries, "m1")
    assert isinstance(plan, Plan)
    (target,) = plan.targets
    assert judge([(target, Now(kind="file", size=9, mtime_ns=7))]) == ()
    refusal = judge([(target, Now(kind="file", size=9, mtime_ns=8))])
    assert isinstance(refusal, Refusal)
    assert "big: its earlier state was not kept: too big" in refusal.error
    assert isinstance(judge([(target, Now(kind="absent"))]), Refusal)


@pytest.mark.parametrize(
    ("target", "now", "changes"),
    [
        (_t("a", None), Now(kind="absent"), False),
        (_t("a", None), Now(kind="file", digest=D1), True),
        (_t("a", D1), Now(kind="absent"), True),
        (_t("a", D1), Now(kind="file", digest=D1, mode=0o644), False),
        (_t("a", D1), Now(kind="file", digest=D1, mode=0o755), True),
        (_t("a", D1), Now(kind="file", digest=D2, mode=0o644), True),
    ],
)
def test_judge_keeps_what_differs(target: Target, now: Now, changes: bool) -> None:
    assert judge([(target, now)]) == ((target,) if changes else ())


def test_one_refused_path_refuses_the_whole_rewind() -> None:
    items = [
        (_t("ok", D1), Now(kind="absent")),
        (_t("x", D1), Now(kind="refused", why="a symlink is there")),
        (_t("y\udcff", D1), Now(kind="refused", why="denied by rule Write(y)")),
    ]
    refusal = judge(items)
    assert isinstance(refusal, Refusal)
    assert refusal.error == (
        "Cannot rewind x, y\\xff (x: a symlink is there; y\\xff: denied by rule Write(y)); "
        "nothing was rewound."
    )


@pytest.mark.parametrize(
    ("before", "after", "counts"),
    [
        (None, None, (0, 0)),
        (None, b"a\nb\n", (2, 0)),
        (b"a\nb\n", None, (0, 2)),
        (b"a\nb\n", b"a\nB\n", (1, 1)),
        (b"a\nb\n", b"b\na\n", (0, 0)),
        (b"x\nx\n", b"x\n", (0, 1)),
    ],
)
def test_line_counts(before: bytes | None, after: bytes | None, counts: tuple[int, int]) -> None:
    assert line_counts(before, after) == counts


@given(st.binary(max_size=200), st.binary(max_size=200))
def test_line_counts_are_symmetric(before: bytes, after: bytes) -> None:
    added, removed = line_counts(before, after)
    assert line_counts(after, before) == (removed, added)


def test_answers() -> None:
    assert answer(["/w/a", "/w/\udce9"], 3, 2) == FrozenDict(
        canRewind=True, filesChanged=("/w/a", "/w/\\xe9"), insertions=3, deletions=2
    )
    assert cannot("why", dry_run=True) == FrozenDict(canRewind=False, error="why")
    assert cannot("why", dry_run=False) == "why"


@pytest.mark.parametrize(
    ("payload", "ok"),
    [
        ({"user_message_id": "u"}, True),
        ({"user_message_id": "u", "dry_run": True}, True),
        ({"user_message_id": "u", "dry_run": None}, True),
        ({}, False),
        ({"user_message_id": None}, False),
        ({"user_message_id": "u", "dry_run": 1}, False),
        ({"user_message_id": "u", "other": 1}, False),
    ],
)
def test_rewind_request_problem(payload: dict[str, Any], ok: bool) -> None:
    assert (rewind_request_problem(payload) is None) is ok
