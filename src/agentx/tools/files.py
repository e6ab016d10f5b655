"""The file tools ``Read``, ``Write`` and ``Edit`` (DEC-TURN-3).

Paths resolve against the session cwd (symlinks followed), so the permission
boundary sees where a call really lands; at run time the resolved path is
checked again against the call's policy and opened without following any
symlink (DEC-PERM-PATH, :mod:`agentx.tools.fsaccess`), so a link swapped in
after the permission check is refused, not followed. ``Read`` numbers lines like
``cat -n`` (Claude Code's format: the number right-aligned in six columns, a
tab, the line); it reads in bounded chunks and keeps at most what
:data:`MAX_LINE_CHARS` characters take of a line (:mod:`agentx.tools.lines`),
so a one-line file of gigabytes costs no more memory than a short one.
``Write`` and ``Edit`` replace the file atomically (a sibling temporary file
renamed over it) and keep its permission bits.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Final

from agentx.providers.base import CancelToken
from agentx.tools.base import (
    OnePathTool,
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_cancel,
    check_members,
    display,
    error,
    get_bool,
    get_int,
    get_str,
    invalid_input,
    output,
    path_access,
)
from agentx.tools.fsaccess import (
    READ_FLAGS,
    PathRefused,
    admitted,
    open_admitted,
    open_dir,
    open_file,
    parent_dir,
    regular_mode,
    replace_in,
)
from agentx.tools.specs import DEFAULT_READ_LINES, EDIT, READ, WRITE
from agentx.tools.specs import READ_MAX_LINE_CHARS as MAX_LINE_CHARS

#: Files larger than this are written or edited only through ``Bash``.
MAX_EDIT_BYTES: Final = 16 * 1024 * 1024


def bounded_text(fd: int, path: Path) -> str:
    """The UTF-8 text of an open regular file (Edit's input)."""
    if os.fstat(fd).st_size > MAX_EDIT_BYTES:
        raise ToolInputError(f"{display(path)} is larger than {MAX_EDIT_BYTES} bytes")
    with os.fdopen(os.dup(fd), "rb") as handle:
        data = handle.read(MAX_EDIT_BYTES + 1)  # a file that grew since fstat stays bounded
    if len(data) > MAX_EDIT_BYTES:
        raise ToolInputError(f"{display(path)} is larger than {MAX_EDIT_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolInputError(f"{display(path)} is not UTF-8 text") from None


# --- Read ---------------------------------------------------------------------


def _read_lines(raw: BinaryIO, cancel: CancelToken) -> Iterator[tuple[bytes, bool]]:
    """The file's lines in bounded chunks, each cut to what :data:`MAX_LINE_CHARS`
    characters can take (4 UTF-8 bytes each); the cancel is checked per chunk."""

    from agentx.tools.lines import bounded_lines  # noqa: PLC0415 - at the first Read (DEC-CLI-3)

    def read(size: int) -> bytes:
        check_cancel(cancel)
        return raw.read(size)

    return bounded_lines(read, MAX_LINE_CHARS * 4)


class ReadTool(OnePathTool):
    name: Final = "Read"
    spec: Final = READ
    read_only: Final = True

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            (path,) = self.paths(input, ctx.cwd)
            named = self.named_paths(input, ctx.cwd)
            first = get_int(input, "offset", default=1, minimum=1)
            count = get_int(input, "limit", default=DEFAULT_READ_LINES, minimum=1)
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        check_cancel(cancel)
        shown = display(path)
        fd = open_admitted(self.name, path, ctx, named, open_file)
        if isinstance(fd, ToolOutput):
            return fd
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            if stat.S_ISDIR(mode):
                return error(f"Read: {shown} is a directory; use Glob or Bash ls to list it")
            return error(f"Read: {shown} is not a regular file")
        lines: list[str] = []
        total = 0
        try:
            with open(fd, "rb", buffering=0) as raw:
                for number, (head, cut) in enumerate(_read_lines(raw, cancel), start=1):
                    total = number
                    if number < first or len(lines) == count:
                        continue
                    text = head.decode("utf-8", errors="replace")
                    if cut or len(text) > MAX_LINE_CHARS:
                        text = text[:MAX_LINE_CHARS] + "… [line truncated]"
                    lines.append(f"{number:>6}\t{text}")
        except OSError as exc:
            return error(f"Read: cannot read {shown}: {exc.strerror}")
        if total == 0:
            return output(f"[{shown} is empty]")
        if not lines:
            return error(f"Read: offset {first} is past the end of {shown} ({total} lines)")
        shown_last = first + len(lines) - 1
        if shown_last < total:
            lines.append(
                f"[showing lines {first}-{shown_last} of {total}; use offset/limit for more]"
            )
        return output("\n".join(lines))


# --- Write --------------------------------------------------------------------


class WriteTool(OnePathTool):
    name: Final = "Write"
    spec: Final = WRITE
    read_only: Final = False

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            (path,) = self.paths(input, ctx.cwd)
            named = self.named_paths(input, ctx.cwd)
            content = get_str(input, "content")
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        check_cancel(cancel)
        shown = display(path)
        try:
            checked = admitted(path, path_access(ctx, self.name), named)
            parent = open_dir(checked.parent, create=True)
        except PathRefused as exc:
            return error(f"Write: {exc}")
        except OSError as exc:
            return error(f"Write: cannot write {shown}: {exc.strerror}")
        try:
            try:
                st: os.stat_result | None = os.stat(path.name, dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISDIR(st.st_mode):
                return error(f"Write: {shown} is a directory")
            replace_in(
                parent,
                path.name,
                content,
                mode=None if st is None else regular_mode(st),
                path=path,
                checkpoints=ctx.checkpoints,
            )
        except OSError as exc:
            return error(f"Write: cannot write {shown}: {exc.strerror}")
        finally:
            os.close(parent)
        verb = "updated" if st is not None else "created"
        return output(f"File {verb}: {shown}")


# --- Edit ---------------------------------------------------------------------


class EditTool(OnePathTool):
    name: Final = "Edit"
    spec: Final = EDIT
    read_only: Final = False

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            (path,) = self.paths(input, ctx.cwd)
            named = self.named_paths(input, ctx.cwd)
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
        parent = open_admitted(self.name, path, ctx, named, parent_dir)
        if isinstance(parent, ToolOutput):
            return parent
        try:
            return self._edit(
                parent, path, old, new, replace_all=replace_all, cancel=cancel, ctx=ctx
            )
        finally:
            os.close(parent)

    @staticmethod
    def _edit(
        parent: int,
        path: Path,
        old: str,
        new: str,
        *,
        replace_all: bool,
        cancel: CancelToken,
        ctx: ToolContext,
    ) -> ToolOutput:
        shown = display(path)
        try:
            fd = os.open(path.name, READ_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            return error(f"Edit: file does not exist: {shown}")
        except OSError as exc:
            return error(f"Edit: cannot read {shown}: {exc.strerror}")
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return error(f"Edit: {shown} is not a regular file")
            text = bounded_text(fd, path)
        except ToolInputError as exc:
            return error(f"Edit: {exc}")
        except OSError as exc:
            return error(f"Edit: cannot read {shown}: {exc.strerror}")
        finally:
            os.close(fd)
        found = text.count(old)
        if found == 0:
            return error(f"Edit: old_string not found in {shown}")
        if found > 1 and not replace_all:
            return error(
                f"Edit: old_string occurs {found} times in {shown}; give more context to make "
                "it unique or set replace_all"
            )
        check_cancel(cancel)
        try:
            replace_in(
                parent,
                path.name,
                text.replace(old, new),
                mode=regular_mode(st),
                path=path,
                checkpoints=ctx.checkpoints,
            )
        except OSError as exc:
            return error(f"Edit: cannot write {shown}: {exc.strerror}")
        plural = "s" if found > 1 else ""
        return output(f"Edited {shown}: {found} replacement{plural}")
