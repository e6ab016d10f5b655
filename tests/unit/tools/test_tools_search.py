"""Glob and Grep over real directory trees (DEC-TURN-3)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentx.providers.base import Cancelled
from agentx.tools import search
from agentx.tools.base import ToolContext
from agentx.tools.search import MAX_RESULTS, GlobTool, GrepTool
from agentx.turns.cancel import CancelScope


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "src/a.py": "import os\nprint('Hello')\n",
        "src/pkg/b.py": "HELLO = 1\nhello()\n",
        "docs/c.md": "hello docs\n",
        "bin.dat": "hello\0binary",
        ".git/config": "hello git\n",
    }
    for i, (name, text) in enumerate(files.items()):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    return tmp_path


def _run(tool: Any, root: Path, **input: Any) -> Any:
    return tool.run(input, ToolContext(cwd=root, env={}), CancelScope())


def _rel(content: str, root: Path) -> list[str]:
    return [line.replace(f"{root}/", "") for line in content.splitlines()]


@pytest.mark.parametrize(
    ("input", "expected"),
    [
        ({"pattern": "**/*.py"}, ["src/pkg/b.py", "src/a.py"]),
        ({"pattern": "*.py", "path": "src"}, ["src/a.py"]),
        ({"pattern": "**/*.md"}, ["docs/c.md"]),
        ({"pattern": "**/config"}, ["No files found"]),
        ({"pattern": "*.rs"}, ["No files found"]),
    ],
    ids=["recursive-newest-first", "in-path", "md", "vcs-skipped", "none"],
)
def test_glob(tree: Path, input: dict[str, Any], expected: list[str]) -> None:
    assert _rel(_run(GlobTool(), tree, **input).content, tree) == expected


@pytest.mark.parametrize("count", [MAX_RESULTS, MAX_RESULTS + 1], ids=["at-limit", "one-past"])
def test_glob_result_limit(tmp_path: Path, count: int) -> None:
    for i in range(count):
        (tmp_path / f"f{i:04}.txt").write_text("")
    lines = _run(GlobTool(), tmp_path, pattern="*.txt").content.splitlines()
    assert len([x for x in lines if x.endswith(".txt")]) == MAX_RESULTS
    assert (lines[-1] == "[1 more files not shown]") is (count > MAX_RESULTS)


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({"pattern": "/etc/*"}, "relative glob"),
        ({"pattern": ""}, "relative glob"),
        ({"pattern": "*", "path": "nope"}, "is not a directory"),
        ({"pattern": "*", "depth": 1}, "unexpected parameter"),
    ],
    ids=["absolute", "empty", "missing-dir", "unknown"],
)
def test_glob_errors(tree: Path, input: dict[str, Any], message: str) -> None:
    result = GlobTool().run(input, ToolContext(cwd=tree, env={}), CancelScope())
    assert result.is_error and message in result.content


@pytest.mark.parametrize(
    ("input", "expected"),
    [
        ({"pattern": "hello"}, ["docs/c.md", "src/pkg/b.py"]),
        ({"pattern": "hello", "-i": True}, ["docs/c.md", "src/pkg/b.py", "src/a.py"]),
        ({"pattern": "hello", "glob": "*.py"}, ["src/pkg/b.py"]),
        ({"pattern": "hello", "path": "src/pkg/b.py"}, ["src/pkg/b.py"]),
        (
            {"pattern": "^h|^p", "output_mode": "content"},
            ["docs/c.md:1:hello docs", "src/a.py:2:print('Hello')", "src/pkg/b.py:2:hello()"],
        ),
        (
            {"pattern": "hello", "-i": True, "output_mode": "count"},
            ["docs/c.md:1", "src/a.py:1", "src/pkg/b.py:2"],
        ),
        ({"pattern": "zzz"}, ["No matches found"]),
        (
            {"pattern": ".", "output_mode": "content", "head_limit": 2},
            [
                "docs/c.md:1:hello docs",
                "src/a.py:1:import os",
                "[more lines not shown; raise head_limit or narrow the search]",
            ],
        ),
    ],
    ids=[
        "files-newest-first",
        "ignore-case",
        "glob-filter",
        "single-file",
        "content",
        "count",
        "no-match",
        "head-limit",
    ],
)
def test_grep(tree: Path, input: dict[str, Any], expected: list[str]) -> None:
    result = _run(GrepTool(), tree, **input)
    assert not result.is_error
    assert _rel(result.content, tree) == expected


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({"pattern": "("}, "invalid regular expression"),
        ({"pattern": "x", "output_mode": "lines"}, "output_mode must be"),
        ({"pattern": "x", "path": "missing"}, "does not exist"),
        ({"pattern": "x", "head_limit": 0}, "at least 1"),
        ({"pattern": "x", "-i": "yes"}, "must be a boolean"),
    ],
    ids=["bad-regex", "bad-mode", "missing-path", "head-limit-zero", "flag-type"],
)
def test_grep_errors(tree: Path, input: dict[str, Any], message: str) -> None:
    result = GrepTool().run(input, ToolContext(cwd=tree, env={}), CancelScope())
    assert result.is_error and message in result.content


def test_grep_scan_limit_at_and_past(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        (tmp_path / f"f{i}").write_text("hit\n")
    monkeypatch.setattr(search, "MAX_SCANNED", 4)
    assert len(_run(GrepTool(), tmp_path, pattern="hit").content.splitlines()) == 4
    monkeypatch.setattr(search, "MAX_SCANNED", 3)
    assert len(_run(GrepTool(), tmp_path, pattern="hit").content.splitlines()) == 3


@pytest.mark.parametrize(
    ("tool", "pattern"), [(GlobTool(), "**/*"), (GrepTool(), "h")], ids=["glob", "grep"]
)
def test_search_cancelled(tree: Path, tool: Any, pattern: str) -> None:
    scope = CancelScope()
    scope.cancel()
    with pytest.raises(Cancelled):
        tool.run({"pattern": pattern}, ToolContext(cwd=tree, env={}), scope)


def test_search_paths_and_summary(tree: Path) -> None:
    assert GrepTool().paths({"pattern": "x", "path": "/etc"}, tree) == (Path("/etc").resolve(),)
    assert GlobTool().paths({"pattern": "x"}, tree) == (tree,)
    assert GrepTool().summarize({"pattern": "a+", "path": "src"}) == "Grep 'a+' in src"
    assert GlobTool().summarize({"pattern": "*.py"}) == "Glob *.py"
