"""Loading the memory files (DEC-SET-1 sources, ``--setting-sources``): real
files; a FIFO and a 100 MB file are refused without blocking or loading."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentx.agents.memory import load_memory
from agentx.config.start_files import START_FILE_LIMITS

LIMIT = START_FILE_LIMITS["memory file"]
ALL = ("user", "project", "local")


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    cwd, home = tmp_path / "work", tmp_path / "home"
    (cwd / ".claude").mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("user")
    (cwd / "CLAUDE.md").write_text("project")
    (cwd / ".claude" / "CLAUDE.md").write_text("dot-claude")
    (cwd / "AGENTS.md").write_text("agents")
    (cwd / "CLAUDE.local.md").write_text("local")
    return cwd, home


@pytest.mark.parametrize(
    ("sources", "texts"),
    [
        (ALL, ["user", "project", "dot-claude", "agents", "local"]),
        (("project",), ["project", "dot-claude", "agents"]),
        (("user", "local"), ["user", "local"]),
        ((), []),
    ],
)
def test_the_selected_sources_load(
    dirs: tuple[Path, Path], sources: tuple[str, ...], texts: list[str]
) -> None:
    warnings: list[str] = []
    files = load_memory(*dirs, sources, warnings.append)
    assert [f.text for f in files] == texts and warnings == []


def test_absent_files_are_skipped_silently(tmp_path: Path) -> None:
    warnings: list[str] = []
    assert load_memory(tmp_path, tmp_path, ALL, warnings.append) == ()
    assert warnings == []


def test_at_the_limit_it_loads_one_byte_more_it_does_not(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_bytes(b"a" * LIMIT)
    (tmp_path / "AGENTS.md").write_bytes(b"b" * (LIMIT + 1))
    warnings: list[str] = []
    files = load_memory(tmp_path, tmp_path / "nohome", ALL, warnings.append)
    assert [len(f.text) for f in files] == [LIMIT]
    (warning,) = warnings
    assert "AGENTS.md" in warning and "left out" in warning


def test_a_fifo_and_a_100_mb_file_are_refused_without_loading(tmp_path: Path) -> None:
    """Hostile: a FIFO with no writer would block a plain open; a 100 MB
    (sparse) file would fill memory. Both are refused at once."""
    os.mkfifo(tmp_path / "CLAUDE.md")
    with open(tmp_path / "AGENTS.md", "wb") as big:
        big.truncate(100 * 1024 * 1024)
    (tmp_path / "CLAUDE.local.md").write_text("kept")
    warnings: list[str] = []
    files = load_memory(tmp_path, tmp_path / "nohome", ALL, warnings.append)
    assert [f.text for f in files] == ["kept"]
    assert len(warnings) == 2
    assert "CLAUDE.md" in warnings[0] and "not a regular file" in warnings[0]
    assert "AGENTS.md" in warnings[1]


def test_bad_utf8_is_replaced_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "CLAUDE.md").write_bytes(b"ok \xff end")
    (file,) = load_memory(tmp_path, tmp_path, ("project",), lambda _: None)
    assert file.text == "ok \ufffd end"
