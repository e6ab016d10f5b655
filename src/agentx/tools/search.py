"""The search tools ``Glob`` and ``Grep`` (DEC-TURN-3), bounded and cancellable.

``Glob`` lists files matching a pattern, newest first like Claude Code.
``Grep`` searches file contents with Python's ``re``; output modes and
parameter names follow Claude Code's tool (``-i``, ``output_mode``,
``glob``, ``head_limit``). Both walk at most :data:`MAX_SCANNED` entries,
skip ``.git`` and similar VCS folders, and check the cancel token while
walking.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePath
from typing import Any, Final, Literal

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
    get_optional_str,
    get_str,
    invalid_input,
    output,
    resolve,
    schema,
)

MAX_RESULTS: Final = 100
MAX_CONTENT_LINES: Final = 1000
MAX_SCANNED: Final = 100_000
MAX_LINE_CHARS: Final = 2000
#: Files past this size are not searched by Grep.
MAX_GREP_FILE_BYTES: Final = 16 * 1024 * 1024
SKIPPED_DIRS: Final = frozenset({".git", ".hg", ".svn"})

OutputMode = Literal["content", "files_with_matches", "count"]
_OUTPUT_MODES: Final[tuple[OutputMode, ...]] = ("content", "files_with_matches", "count")


def _search_root(input: Mapping[str, Any], cwd: Path) -> Path:
    raw = get_optional_str(input, "path")
    return cwd if raw is None else resolve(raw, cwd)


def _walk(root: Path, cancel: CancelToken) -> Iterator[Path]:
    """Yield the files under ``root`` (sorted per directory), at most MAX_SCANNED entries."""
    if root.is_file():
        yield root
        return
    scanned = 0
    for dirpath, dirnames, filenames in os.walk(root):
        check_cancel(cancel)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            scanned += 1
            if scanned > MAX_SCANNED:
                return
            yield Path(dirpath, name)


def _newest_first(paths: list[Path]) -> list[Path]:
    def mtime(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=lambda p: (-mtime(p), str(p)))


def _capped(lines: list[str], cap: int, what: str) -> str:
    if len(lines) <= cap:
        return "\n".join(lines)
    return "\n".join(lines[:cap]) + f"\n[{len(lines) - cap} more {what} not shown]"


# --- Glob -----------------------------------------------------------------------

_GLOB_SPEC = ToolSpec(
    name="Glob",
    description=(
        "Find files by glob pattern (`**` spans directories), newest first, at most "
        f"{MAX_RESULTS} results. path is the directory to search (default: the cwd)."
    ),
    input_schema=freeze(
        schema({"pattern": {"type": "string"}, "path": {"type": "string"}}, ("pattern",))
    ),
)


class GlobTool:
    name: Final = "Glob"
    spec: Final = _GLOB_SPEC
    read_only: Final = True

    def summarize(self, input: Mapping[str, Any]) -> str:
        where = get_optional_str(input, "path")
        return f"Glob {get_str(input, 'pattern')}" + (f" in {where}" if where else "")

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (_search_root(input, cwd),)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            pattern = get_str(input, "pattern")
            root = _search_root(input, ctx.cwd)
            if not pattern or PurePath(pattern).is_absolute():
                raise ToolInputError("pattern must be a non-empty relative glob; use path")
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        if not root.is_dir():
            return error(f"Glob: {root} is not a directory")
        found: list[Path] = []
        try:
            for scanned, path in enumerate(root.glob(pattern)):
                if scanned % 256 == 0:
                    check_cancel(cancel)
                if scanned >= MAX_SCANNED:
                    break
                if path.is_file() and not SKIPPED_DIRS.intersection(path.relative_to(root).parts):
                    found.append(path)
        except (ValueError, OSError) as exc:
            return error(f"Glob: cannot search {root}: {exc}")
        if not found:
            return output("No files found")
        return output(_capped([str(p) for p in _newest_first(found)], MAX_RESULTS, "files"))


# --- Grep -----------------------------------------------------------------------

_GREP_SPEC = ToolSpec(
    name="Grep",
    description=(
        "Search file contents with a Python regular expression. path: file or directory "
        "(default: the cwd); glob: only files whose path matches (e.g. `*.py`); -i: ignore "
        "case; output_mode: files_with_matches (default, newest first), content "
        "(path:line:text) or count; head_limit: at most this many output lines."
    ),
    input_schema=freeze(
        schema(
            {
                "pattern": {"type": "string"},
                "path": {"type": "string"},
                "glob": {"type": "string"},
                "-i": {"type": "boolean"},
                "output_mode": {"type": "string", "enum": list(_OUTPUT_MODES)},
                "head_limit": {"type": "integer", "minimum": 1},
            },
            ("pattern",),
        )
    ),
)


def _is_binary(head: bytes) -> bool:
    return b"\0" in head


class GrepTool:
    name: Final = "Grep"
    spec: Final = _GREP_SPEC
    read_only: Final = True

    def summarize(self, input: Mapping[str, Any]) -> str:
        where = get_optional_str(input, "path")
        return f"Grep {get_str(input, 'pattern')!r}" + (f" in {where}" if where else "")

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (_search_root(input, cwd),)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            root = _search_root(input, ctx.cwd)
            flags = re.IGNORECASE if get_bool(input, "-i") else 0
            try:
                regex = re.compile(get_str(input, "pattern"), flags)
            except re.error as exc:
                raise ToolInputError(f"invalid regular expression: {exc}") from None
            file_glob = get_optional_str(input, "glob")
            mode = get_str(input, "output_mode", default="files_with_matches")
            if mode not in _OUTPUT_MODES:
                raise ToolInputError("output_mode must be content, files_with_matches or count")
            default_cap = MAX_CONTENT_LINES if mode == "content" else MAX_RESULTS
            cap = get_int(input, "head_limit", default=default_cap, minimum=1)
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        if not root.exists():
            return error(f"Grep: path does not exist: {root}")
        matched: list[Path] = []
        lines: list[str] = []
        for path in _walk(root, cancel):
            if file_glob and not path.relative_to(root.parent if root.is_file() else root).match(
                file_glob
            ):
                continue
            hits = self._search(path, regex, cancel)
            if not hits:
                continue
            matched.append(path)
            if mode == "content":
                lines.extend(f"{path}:{n}:{text[:MAX_LINE_CHARS]}" for n, text in hits)
            elif mode == "count":
                lines.append(f"{path}:{len(hits)}")
            if len(lines) > cap and mode != "files_with_matches":
                break
        if not matched:
            return output("No matches found")
        if mode == "files_with_matches":
            lines = [str(p) for p in _newest_first(matched)]
        return output(_capped(lines, cap, "lines"))

    @staticmethod
    def _search(path: Path, regex: re.Pattern[str], cancel: CancelToken) -> list[tuple[int, str]]:
        hits: list[tuple[int, str]] = []
        try:
            if path.stat().st_size > MAX_GREP_FILE_BYTES:
                return hits
            with path.open("rb") as raw:
                if _is_binary(raw.read(8192)):
                    return hits
                raw.seek(0)
                for number, line in enumerate(raw, start=1):
                    if number % 4096 == 0:
                        check_cancel(cancel)
                    text = line.decode("utf-8", errors="replace").rstrip("\r\n")
                    if regex.search(text):
                        hits.append((number, text))
        except OSError:
            return []
        return hits
