"""The file tools ``Read``, ``Write`` and ``Edit`` (DEC-TURN-3).

Paths resolve against the session cwd (symlinks followed), so the permission
boundary sees where a call really lands. ``Read`` numbers lines like
``cat -n`` (Claude Code's format: the number right-aligned in six columns, a
tab, the line). ``Write`` and ``Edit`` replace the file atomically (a sibling
temporary file renamed over it) and keep its permission bits.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentx.messages.frozen import freeze
from agentx.providers.base import CancelToken, ToolSpec
from agentx.tools.base import (
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_cancel,
    check_members,
    error,
    get_bool,
    get_int,
    get_str,
    invalid_input,
    output,
    resolve,
    schema,
)

DEFAULT_READ_LINES: Final = 2000
MAX_LINE_CHARS: Final = 2000
#: Files larger than this are written or edited only through ``Bash``.
MAX_EDIT_BYTES: Final = 16 * 1024 * 1024

_PATH_PROP = {"type": "string", "description": "Absolute path, or relative to the cwd"}


def _file_path(input: Mapping[str, Any], cwd: Path) -> Path:
    return resolve(get_str(input, "file_path"), cwd)


def atomic_write(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) through a renamed sibling temp file."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _read_text(path: Path) -> str:
    if path.stat().st_size > MAX_EDIT_BYTES:
        raise ToolInputError(f"{path} is larger than {MAX_EDIT_BYTES} bytes")
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.read()
    except UnicodeDecodeError:
        raise ToolInputError(f"{path} is not UTF-8 text") from None


# --- Read ---------------------------------------------------------------------

_READ_SPEC = ToolSpec(
    name="Read",
    description=(
        "Read a text file. Lines come numbered like `cat -n`. Reads up to "
        f"{DEFAULT_READ_LINES} lines from the start unless offset (first line, 1-based) "
        f"and limit (line count) are given; lines longer than {MAX_LINE_CHARS} characters "
        "are cut."
    ),
    input_schema=freeze(
        schema(
            {
                "file_path": _PATH_PROP,
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
            },
            ("file_path",),
        )
    ),
)


class ReadTool:
    name: Final = "Read"
    spec: Final = _READ_SPEC
    read_only: Final = True

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"Read {get_str(input, 'file_path')}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (_file_path(input, cwd),)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            path = _file_path(input, ctx.cwd)
            first = get_int(input, "offset", default=1, minimum=1)
            count = get_int(input, "limit", default=DEFAULT_READ_LINES, minimum=1)
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        check_cancel(cancel)
        if path.is_dir():
            return error(f"Read: {path} is a directory; use Glob or Bash ls to list it")
        lines: list[str] = []
        total = 0
        try:
            with path.open(encoding="utf-8", errors="replace", newline=None) as handle:
                for number, line in enumerate(handle, start=1):
                    total = number
                    if number < first:
                        continue
                    if len(lines) == count:
                        continue
                    text = line.rstrip("\n")
                    if len(text) > MAX_LINE_CHARS:
                        text = text[:MAX_LINE_CHARS] + "… [line truncated]"
                    lines.append(f"{number:>6}\t{text}")
        except FileNotFoundError:
            return error(f"Read: file does not exist: {path}")
        except OSError as exc:
            return error(f"Read: cannot read {path}: {exc.strerror}")
        if total == 0:
            return output(f"[{path} is empty]")
        if not lines:
            return error(f"Read: offset {first} is past the end of {path} ({total} lines)")
        shown_last = first + len(lines) - 1
        if shown_last < total:
            lines.append(
                f"[showing lines {first}-{shown_last} of {total}; use offset/limit for more]"
            )
        return output("\n".join(lines))


# --- Write --------------------------------------------------------------------

_WRITE_SPEC = ToolSpec(
    name="Write",
    description="Create or overwrite a file with the given content (UTF-8).",
    input_schema=freeze(
        schema({"file_path": _PATH_PROP, "content": {"type": "string"}}, ("file_path", "content"))
    ),
)


class WriteTool:
    name: Final = "Write"
    spec: Final = _WRITE_SPEC
    read_only: Final = False

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"Write {get_str(input, 'file_path')}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (_file_path(input, cwd),)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            path = _file_path(input, ctx.cwd)
            content = get_str(input, "content")
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        check_cancel(cancel)
        if path.is_dir():
            return error(f"Write: {path} is a directory")
        existed = path.exists()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, content)
        except OSError as exc:
            return error(f"Write: cannot write {path}: {exc.strerror}")
        verb = "updated" if existed else "created"
        return output(f"File {verb}: {path}")


# --- Edit ---------------------------------------------------------------------

_EDIT_SPEC = ToolSpec(
    name="Edit",
    description=(
        "Replace old_string with new_string in a file. old_string must occur exactly once "
        "unless replace_all is true."
    ),
    input_schema=freeze(
        schema(
            {
                "file_path": _PATH_PROP,
                "old_string": {"type": "string"},
                "new_string": {"type": "string"},
                "replace_all": {"type": "boolean", "default": False},
            },
            ("file_path", "old_string", "new_string"),
        )
    ),
)


class EditTool:
    name: Final = "Edit"
    spec: Final = _EDIT_SPEC
    read_only: Final = False

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"Edit {get_str(input, 'file_path')}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (_file_path(input, cwd),)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            path = _file_path(input, ctx.cwd)
            old = get_str(input, "old_string")
            new = get_str(input, "new_string")
            replace_all = get_bool(input, "replace_all")
            if not old:
                raise ToolInputError("old_string must not be empty; use Write to create a file")
            if old == new:
                raise ToolInputError("old_string and new_string are the same")
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        check_cancel(cancel)
        try:
            text = _read_text(path)
        except FileNotFoundError:
            return error(f"Edit: file does not exist: {path}")
        except ToolInputError as exc:
            return error(f"Edit: {exc}")
        except OSError as exc:
            return error(f"Edit: cannot read {path}: {exc.strerror}")
        found = text.count(old)
        if found == 0:
            return error(f"Edit: old_string not found in {path}")
        if found > 1 and not replace_all:
            return error(
                f"Edit: old_string occurs {found} times in {path}; give more context to make "
                "it unique or set replace_all"
            )
        check_cancel(cancel)
        try:
            atomic_write(path, text.replace(old, new))
        except OSError as exc:
            return error(f"Edit: cannot write {path}: {exc.strerror}")
        plural = "s" if found > 1 else ""
        return output(f"Edited {path}: {found} replacement{plural}")
