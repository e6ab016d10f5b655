"""Grep's matcher, ripgrep in a child with a deadline (WIRE-010, DECISIONS section 8).

A pattern that backtracks for hours in Python's ``re`` ends at once; one
that is slow even for a linear-time engine is stopped by a cancel or by the
call's deadline, and its rg child is gone; a long line contributes at most
its cut; every file the walk admitted is searched in batches, in order,
and no descriptor is left open.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from agentx.providers.base import Cancelled
from agentx.tools import ripgrep, search
from agentx.tools.base import ToolContext
from agentx.tools.process import ChildProcesses, GroupProcess
from agentx.tools.ripgrep import MAX_COLUMNS
from agentx.tools.search import MAX_LINE_CHARS, GrepTool
from agentx.turns.cancel import CancelScope

WAIT = 30.0
#: Slow for every engine: its automaton does not fit a lazy DFA's cache.
SLOW_PATTERN = "[ab]*a[ab]{25}x"


def ab_line(path: Path, size: int) -> Path:
    """One line of ``size`` random ``a``/``b`` bytes (made from urandom, fast)."""
    table = bytes(ord("a") + (i & 1) for i in range(256))
    path.write_bytes(os.urandom(size).translate(table))
    return path


class WatchedChildren(ChildProcesses):
    """The session registry, telling the test when the search's rg has started."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[GroupProcess] = []
        self.second = threading.Event()

    def register(self, group: GroupProcess) -> None:
        super().register(group)
        self.started.append(group)
        if len(self.started) == 2:  # the first is the pattern check
            self.second.set()


def _run(root: Path, tool: GrepTool | None = None, **input: Any) -> Any:
    return (tool or GrepTool()).run(input, ToolContext(cwd=root, env={}), CancelScope())


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_catastrophic_backtracking_pattern_ends_at_once(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("a" * 100_000 + "!\n")
    (tmp_path / "hit.txt").write_text("aaaa\n")
    result = _run(tmp_path, pattern="(a|aa)+$", output_mode="content")
    assert not result.is_error
    assert result.content == f"{tmp_path}/hit.txt:1:aaaa"


def test_a_cancel_kills_a_slow_search_at_once(tmp_path: Path) -> None:
    ab_line(tmp_path / "ab.txt", 8 * 1024 * 1024)
    children = WatchedChildren()
    scope = CancelScope()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["result"] = GrepTool().run(
                {"pattern": SLOW_PATTERN},
                ToolContext(cwd=tmp_path, env={}, children=children),
                scope,
            )
        except Cancelled as exc:
            outcome["exc"] = exc

    worker = threading.Thread(target=work)
    worker.start()
    assert children.second.wait(WAIT)
    scope.cancel()
    worker.join(WAIT)
    assert not worker.is_alive()
    assert isinstance(outcome.get("exc"), Cancelled)
    assert children.live == 0
    rg = children.started[1]
    assert rg.done and rg.returncode == -9


def test_the_deadline_stops_a_slow_search_and_says_so(tmp_path: Path) -> None:
    ab_line(tmp_path / "ab.txt", 8 * 1024 * 1024)
    children = WatchedChildren()
    tool = GrepTool(search_seconds=0.5)
    result = tool.run(
        {"pattern": SLOW_PATTERN},
        ToolContext(cwd=tmp_path, env={}, children=children),
        CancelScope(),
    )
    assert result.is_error
    assert "No matches found" in result.content
    assert "search stopped after 0.5 s" in result.content
    assert children.live == 0
    # The same call with a pattern rg answers at once is whole within that deadline.
    (tmp_path / "hit.txt").write_text("needle\n")
    fast = tool.run({"pattern": "needle"}, ToolContext(cwd=tmp_path, env={}), CancelScope())
    assert (fast.is_error, fast.content) == (False, f"{tmp_path}/hit.txt")


@pytest.mark.parametrize(
    ("length", "cut"),
    [(MAX_LINE_CHARS, False), (MAX_LINE_CHARS + 1, True), (3 * 1024 * 1024, True)],
    ids=["at-limit", "one-past", "megabytes"],
)
def test_a_long_line_contributes_at_most_its_cut(tmp_path: Path, length: int, cut: bool) -> None:
    (tmp_path / "one.txt").write_text("x" * (length - 6) + "needle\n")
    result = _run(tmp_path, pattern="needle", output_mode="content")
    assert not result.is_error
    prefix = f"{tmp_path}/one.txt:1:"
    assert result.content.startswith(prefix)
    line = result.content.removeprefix(prefix)
    assert len(line) <= MAX_LINE_CHARS
    assert (len(line) < length) is cut
    assert MAX_COLUMNS == MAX_LINE_CHARS


def test_files_are_searched_in_batches_in_walk_order_and_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(7):
        (tmp_path / f"f{i}.txt").write_text("no\n" if i == 3 else f"hit {i}\n")
    monkeypatch.setattr(search, "BATCH_FILES", 2)
    before = _open_fds()
    result = _run(tmp_path, pattern="hit", output_mode="content")
    assert _open_fds() == before
    lines = result.content.splitlines()
    assert lines == [f"{tmp_path}/f{i}.txt:1:hit {i}" for i in (0, 1, 2, 4, 5, 6)]
    counted = _run(tmp_path, pattern="hit", output_mode="count", head_limit=2)
    assert counted.content.splitlines()[:2] == [f"{tmp_path}/f0.txt:1", f"{tmp_path}/f1.txt:1"]
    assert "more lines not shown" in counted.content


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("a\x00b", "must not contain a NUL character"),
        ("(?=x)", "look-around"),
        ("(", "unclosed group"),
    ],
    ids=["nul", "look-around", "unclosed"],
)
def test_patterns_rg_cannot_take_are_invalid_input(
    tmp_path: Path, pattern: str, message: str
) -> None:
    result = _run(tmp_path, pattern=pattern)
    assert result.is_error and "invalid input" in result.content and message in result.content


def test_a_pattern_that_looks_like_an_option_is_a_pattern(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("--files\n")
    result = _run(tmp_path, pattern="--files", output_mode="content")
    assert result.content == f"{tmp_path}/f.txt:1:--files"


def test_without_rg_grep_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> str:
        raise ripgrep.SearchFailed("ripgrep (rg) is not installed; install the ripgrep package")

    monkeypatch.setattr(ripgrep, "rg_binary", missing)
    result = _run(tmp_path, pattern="x")
    assert result.is_error and "ripgrep (rg) is not installed" in result.content


def test_rg_is_the_packaged_binary() -> None:
    assert Path(ripgrep.rg_binary()).name == "rg"
    assert os.access(ripgrep.rg_binary(), os.X_OK)
