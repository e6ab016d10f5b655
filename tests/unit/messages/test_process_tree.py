"""The process tree core: /proc stat lines, descendants, stale zombies (DEC-EXIT-1)."""

from __future__ import annotations

import pytest

from agentx.messages.process_tree import ProcEntry, descendants, parse_stat, stale_zombies


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"42 (bash) S 7 42 42 0 -1", ProcEntry(42, 7, "S")),
        (b"9 (sleep) Z 1 9 9 0", ProcEntry(9, 1, "Z")),
        # A name that imitates the fields after it: the last ')' ends it.
        (b"5 (a) Z 1 (x) R 3 5 5", ProcEntry(5, 3, "R")),
        (b"6 (two words) X 2", ProcEntry(6, 2, "X")),
        (b"", None),
        (b"7 bash S 1", None),
        (b"8 (bash)", None),
        (b"x (bash) S 1", None),
        (b"8 (bash) S notanumber", None),
        (b"8 (bash) SS 1", None),
        (b"(bash) S 1", None),
    ],
)
def test_parse_stat(line: bytes, expected: ProcEntry | None) -> None:
    assert parse_stat(line) == expected


TREE = (
    ProcEntry(1, 0, "S"),
    ProcEntry(100, 1, "S"),  # agentx
    ProcEntry(101, 100, "S"),
    ProcEntry(102, 101, "S"),
    ProcEntry(103, 102, "Z"),
    ProcEntry(104, 100, "S"),
    ProcEntry(200, 1, "S"),  # someone else's
    ProcEntry(201, 200, "S"),
)


@pytest.mark.parametrize(
    ("root", "expected"),
    [
        (100, (101, 104, 102, 103)),  # parents before children, level by level
        (102, (103,)),
        (103, ()),
        (999, ()),
        (200, (201,)),
    ],
)
def test_descendants_parents_first(root: int, expected: tuple[int, ...]) -> None:
    assert tuple(entry.pid for entry in descendants(TREE, root)) == expected


def test_descendants_survive_a_cycle_and_a_self_parent() -> None:
    odd = (ProcEntry(5, 6, "S"), ProcEntry(6, 5, "S"), ProcEntry(7, 7, "S"))
    assert tuple(e.pid for e in descendants(odd, 5)) == (6,)
    assert descendants(odd, 7) == ()


CHILDREN = (
    ProcEntry(10, 100, "Z"),  # claimed: its Popen waits
    ProcEntry(11, 100, "Z"),  # an adopted orphan, exited
    ProcEntry(12, 100, "S"),  # alive
    ProcEntry(13, 11, "Z"),  # not ours (a grandchild)
    ProcEntry(14, 100, "X"),
)


@pytest.mark.parametrize(
    ("seen", "now", "reap", "still"),
    [
        ({}, 5.0, (), {11: 5.0, 14: 5.0}),  # first seen: wait for its own waiter
        ({11: 4.0, 14: 4.5}, 5.0, (11,), {14: 4.5}),  # at the grace: reaped
        ({11: 4.0001, 14: 4.5}, 5.0, (), {11: 4.0001, 14: 4.5}),  # just before it
        ({11: 1.0, 14: 1.0, 10: 1.0, 99: 1.0}, 5.0, (11, 14), {}),  # gone ones forgotten
    ],
)
def test_stale_zombies(
    seen: dict[int, float], now: float, reap: tuple[int, ...], still: dict[int, float]
) -> None:
    decided = stale_zombies(
        CHILDREN, own_pid=100, claimed=frozenset({10}), seen=seen, now=now, grace=1.0
    )
    assert decided.reap == reap
    assert dict(decided.seen) == still
