"""Read, Write and Edit against real files (DEC-TURN-3)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentx.providers.base import Cancelled
from agentx.tools.base import ToolContext
from agentx.tools.files import DEFAULT_READ_LINES, MAX_LINE_CHARS, EditTool, ReadTool, WriteTool
from agentx.turns.cancel import CancelScope


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, env={})


def _run(tool: Any, ctx: ToolContext, **input: Any) -> Any:
    return tool.run(input, ctx, CancelScope())


def test_read_numbers_lines_like_cat_n(ctx: ToolContext) -> None:
    (ctx.cwd / "a.txt").write_text("alpha\nbeta\n\ngamma")
    result = _run(ReadTool(), ctx, file_path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma"


@pytest.mark.parametrize(
    ("offset", "limit", "shown", "note"),
    [(1, 3, (1, 3), True), (8, 5, (8, 10), False), (10, 1, (10, 10), False), (2, 8, (2, 9), True)],
    ids=["head", "tail-clipped", "last-line", "middle"],
)
def test_read_offset_limit(
    ctx: ToolContext, offset: int, limit: int, shown: tuple[int, int], note: bool
) -> None:
    first, last = shown
    (ctx.cwd / "n.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    result = _run(ReadTool(), ctx, file_path=str(ctx.cwd / "n.txt"), offset=offset, limit=limit)
    rows = result.content.splitlines()
    numbered = [r for r in rows if not r.startswith("[")]
    assert numbered[0] == f"{first:>6}\tline{first}"
    assert numbered[-1] == f"{last:>6}\tline{last}"
    assert (rows[-1].startswith("[showing lines")) is note


def test_read_default_line_limit_at_and_past(ctx: ToolContext) -> None:
    path = ctx.cwd / "big.txt"
    path.write_text("x\n" * DEFAULT_READ_LINES)
    assert "[showing" not in _run(ReadTool(), ctx, file_path="big.txt").content
    path.write_text("x\n" * (DEFAULT_READ_LINES + 1))
    content = _run(ReadTool(), ctx, file_path="big.txt").content
    assert content.endswith(
        f"[showing lines 1-{DEFAULT_READ_LINES} of {DEFAULT_READ_LINES + 1}; "
        "use offset/limit for more]"
    )


def test_read_long_line_cut_at_and_past(ctx: ToolContext) -> None:
    (ctx.cwd / "l.txt").write_text("a" * MAX_LINE_CHARS + "\n" + "b" * (MAX_LINE_CHARS + 1))
    first, second = _run(ReadTool(), ctx, file_path="l.txt").content.splitlines()
    assert first == f"{1:>6}\t" + "a" * MAX_LINE_CHARS
    assert second == f"{2:>6}\t" + "b" * MAX_LINE_CHARS + "… [line truncated]"


@pytest.mark.parametrize(
    ("setup", "input", "message"),
    [
        (None, {"file_path": "missing.txt"}, "does not exist"),
        ("dir", {"file_path": "d"}, "is a directory"),
        ("file", {"file_path": "f.txt", "offset": 5}, "past the end"),
        ("file", {"file_path": "f.txt", "offset": 0}, "at least 1"),
        ("file", {"file_path": "f.txt", "limit": "3"}, "must be an integer"),
        ("file", {"file_path": "f.txt", "offset": True}, "must be an integer"),
        ("file", {"file_path": "f.txt", "mode": "x"}, "unexpected parameter 'mode'"),
        (None, {}, "missing required parameter 'file_path'"),
        (None, {"file_path": 7}, "must be a string"),
        (None, {"file_path": ""}, "non-empty"),
    ],
    ids=[
        "missing",
        "directory",
        "offset-past-end",
        "offset-zero",
        "limit-type",
        "bool-int",
        "unknown-member",
        "no-path",
        "path-type",
        "empty-path",
    ],
)
def test_read_errors(
    ctx: ToolContext, setup: str | None, input: dict[str, Any], message: str
) -> None:
    if setup == "dir":
        (ctx.cwd / "d").mkdir()
    elif setup == "file":
        (ctx.cwd / "f.txt").write_text("one\n")
    result = ReadTool().run(input, ctx, CancelScope())
    assert result.is_error
    assert message in result.content


def test_read_empty_and_binary(ctx: ToolContext) -> None:
    (ctx.cwd / "e").write_bytes(b"")
    (ctx.cwd / "b").write_bytes(b"\xff\xfeok\n")
    assert "is empty" in _run(ReadTool(), ctx, file_path="e").content
    assert _run(ReadTool(), ctx, file_path="b").content == "     1\t\ufffd\ufffdok"


def test_paths_resolve_against_cwd_and_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    inside = tmp_path / "proj"
    outside.mkdir()
    inside.mkdir()
    (inside / "link").symlink_to(outside)
    tool = ReadTool()
    assert tool.paths({"file_path": "a/../b.txt"}, inside) == (inside.resolve() / "b.txt",)
    assert tool.paths({"file_path": "link/x"}, inside) == (outside.resolve() / "x",)
    assert tool.paths({"file_path": "/etc/hosts"}, inside) == (Path("/etc/hosts").resolve(),)


def test_write_creates_and_updates(ctx: ToolContext) -> None:
    result = _run(WriteTool(), ctx, file_path="sub/dir/new.txt", content="héllo\r\n")
    target = ctx.cwd / "sub/dir/new.txt"
    assert not result.is_error and "created" in result.content
    assert target.read_bytes() == "héllo\r\n".encode()
    target.chmod(0o640)
    result = _run(WriteTool(), ctx, file_path=str(target), content="two")
    assert "updated" in result.content
    assert target.read_text() == "two"
    assert (os.stat(target).st_mode & 0o777) == 0o640
    assert sorted(p.name for p in target.parent.iterdir()) == ["new.txt"]


def test_write_into_directory_is_error(ctx: ToolContext) -> None:
    (ctx.cwd / "d").mkdir()
    result = _run(WriteTool(), ctx, file_path="d", content="x")
    assert result.is_error and "is a directory" in result.content


def test_write_cancelled_before_start(ctx: ToolContext) -> None:
    scope = CancelScope()
    scope.cancel()
    with pytest.raises(Cancelled):
        WriteTool().run({"file_path": "x", "content": "y"}, ctx, scope)
    assert not (ctx.cwd / "x").exists()


@pytest.mark.parametrize(
    ("before", "input", "after", "message"),
    [
        ("a b a", {"old_string": "b", "new_string": "c"}, "a c a", "1 replacement"),
        (
            "a b a",
            {"old_string": "a", "new_string": "z", "replace_all": True},
            "z b z",
            "2 replacements",
        ),
        ("a b a", {"old_string": "a", "new_string": "z"}, "a b a", "occurs 2 times"),
        ("a b a", {"old_string": "q", "new_string": "z"}, "a b a", "not found"),
        ("a b a", {"old_string": "", "new_string": "z"}, "a b a", "must not be empty"),
        ("a b a", {"old_string": "a", "new_string": "a"}, "a b a", "are the same"),
        ("a\r\nb", {"old_string": "a\r\n", "new_string": "x\n"}, "x\nb", "1 replacement"),
    ],
    ids=["unique", "replace-all", "ambiguous", "absent", "empty-old", "same", "crlf-kept"],
)
def test_edit(
    ctx: ToolContext, before: str, input: dict[str, Any], after: str, message: str
) -> None:
    path = ctx.cwd / "f.txt"
    path.write_bytes(before.encode())
    result = EditTool().run({"file_path": "f.txt", **input}, ctx, CancelScope())
    assert message in result.content
    assert result.is_error is (before == after)
    assert path.read_bytes() == after.encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "does not exist"), (b"\xff\xfe", "not UTF-8")],
    ids=["missing", "not-utf8"],
)
def test_edit_unreadable(ctx: ToolContext, content: bytes | None, message: str) -> None:
    if content is not None:
        (ctx.cwd / "f").write_bytes(content)
    result = _run(EditTool(), ctx, file_path="f", old_string="a", new_string="b")
    assert result.is_error and message in result.content


@pytest.mark.parametrize(
    ("tool", "input", "summary"),
    [
        (ReadTool(), {"file_path": "src/a.py"}, "Read src/a.py"),
        (WriteTool(), {"file_path": "b", "content": "x"}, "Write b"),
        (EditTool(), {"file_path": "c", "old_string": "x", "new_string": "y"}, "Edit c"),
    ],
    ids=["read", "write", "edit"],
)
def test_summaries(tool: Any, input: dict[str, Any], summary: str) -> None:
    assert tool.summarize(input) == summary
    with pytest.raises(ValueError):
        tool.summarize({"file_path": 3})
