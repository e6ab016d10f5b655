"""The search tools ``Glob`` and ``Grep`` (DEC-TURN-3), bounded and cancellable.

``Glob`` lists files matching a pattern, newest first like Claude Code.
``Grep`` searches file contents with Python's ``re``; output modes and
parameter names follow Claude Code's tool (``-i``, ``output_mode``,
``glob``, ``head_limit``). Both walk at most :data:`MAX_SCANNED` entries,
skip ``.git`` and similar VCS folders, and check the cancel token while
walking.

DEC-PERM-PATH: the search root and every entry of the walk are resolved
(through symlinks) and checked against the call's path policy
(:class:`~agentx.tools.fsaccess.Walk`). An entry that resolves outside the
working directories, or that a ``Read(...)`` deny or ask rule covers, is
neither opened nor listed; the result says how many were skipped and names
the ones the model may ask for with ``Read``. Asking once per file of a walk
would bury the user in prompts, so a walk skips and says so, like Claude
Code's ripgrep, which does not follow symlinks at all.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from fnmatch import fnmatchcase
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
    display,
    error,
    get_bool,
    get_int,
    get_optional_str,
    get_str,
    invalid_input,
    lexical,
    output,
    path_access,
    resolve,
    schema,
)
from agentx.tools.fsaccess import Entry, PathRefused, Walk, admitted, open_file

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


def _search_named(input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
    raw = get_optional_str(input, "path")
    return () if raw is None else (lexical(raw, cwd),)


_MAGIC: Final = re.compile(r"[*?\[]")


def _glob_match(pattern: tuple[str, ...], names: tuple[str, ...]) -> bool:
    """Whether ``names`` match the glob components; ``**`` spans directories."""

    def closure(reach: set[int]) -> set[int]:
        for i in range(len(pattern)):  # ``**`` may match no directory at all
            if i in reach and pattern[i] == "**":
                reach.add(i + 1)
        return reach

    reach = closure({0})
    for name in names:
        step: set[int] = set()
        for i in reach:
            if i == len(pattern):
                continue
            if pattern[i] == "**":
                step.add(i)
            elif fnmatchcase(name, pattern[i]):
                step.add(i + 1)
        reach = closure(step)
        if not reach:
            return False
    return len(pattern) in reach


def _glob_parts(pattern: str) -> tuple[str, ...]:
    parts = tuple(p for p in pattern.split("/") if p and p != ".")
    if not parts or ".." in parts or PurePath(pattern).is_absolute():
        raise ToolInputError("pattern must be a non-empty relative glob without '..'; use path")
    return parts


def _literal_prefix(parts: tuple[str, ...]) -> int:
    """How many leading directory components hold no wildcard."""
    literal = 0
    while literal < len(parts) - 1 and not _MAGIC.search(parts[literal]):
        literal += 1
    return literal


def _glob_start(input: Mapping[str, Any], cwd: Path) -> tuple[Path, Path, tuple[str, ...]]:
    """The walk's start as spelled and resolved, and the pattern left to match below it."""
    raw = get_optional_str(input, "path")
    parts = _glob_parts(get_str(input, "pattern"))
    literal = _literal_prefix(parts)
    shown = lexical(raw, cwd) if raw is not None else cwd
    shown = shown.joinpath(*parts[:literal])
    return shown, resolve(str(shown), cwd), parts[literal:]


def _newest_first(entries: list[Entry]) -> list[Entry]:
    return sorted(entries, key=lambda e: (-e.mtime, str(e.shown)))


def _with_note(text: str, walk: Walk | None) -> str:
    note = walk.note() if walk is not None else ""
    return f"{text}\n{note}" if note else text


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
        return (_glob_start(input, cwd)[1],)

    def named_paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (_glob_start(input, cwd)[0],)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            shown, start, rest = _glob_start(input, ctx.cwd)
            bare = _literal_prefix(_glob_parts(get_str(input, "pattern"))) == 0
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        access = path_access(ctx, self.name)
        walk = Walk(
            start,
            access,
            cancel,
            shown=shown,
            max_entries=MAX_SCANNED,
            skip_dirs=SKIPPED_DIRS,
            max_depth=None if "**" in rest else len(rest),
        )
        try:
            admitted(start, access, (shown,))
            found = [e for e in walk.files() if _glob_match(rest, e.rel)]
        except PathRefused as exc:
            return error(f"Glob: {exc}")
        except (FileNotFoundError, NotADirectoryError):
            if bare:
                return error(f"Glob: {display(shown)} is not a directory")
            return output("No files found")
        except OSError as exc:
            return error(f"Glob: cannot search {display(shown)}: {exc.strerror}")
        if not found:
            return output(_with_note("No files found", walk))
        listed = [display(e.shown) for e in _newest_first(found)]
        return output(_with_note(_capped(listed, MAX_RESULTS, "files"), walk))


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

    def named_paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return _search_named(input, cwd)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            root = _search_root(input, ctx.cwd)
            named = _search_named(input, ctx.cwd)
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
        access = path_access(ctx, self.name)
        walk: Walk | None = None
        try:
            fd = open_file(admitted(root, access, named))
            try:
                is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
            finally:
                os.close(fd)
            if is_dir:
                walk = Walk(root, access, cancel, max_entries=MAX_SCANNED, skip_dirs=SKIPPED_DIRS)
                files = walk.files()
            else:
                files = iter((Entry(root, (root.name,), root, 0.0, lambda: open_file(root)),))
            matched: list[Entry] = []
            lines: list[str] = []
            for entry in files:
                if file_glob and not PurePath(*entry.rel).match(file_glob):
                    continue
                hits = self._search(entry, regex, cancel)
                if not hits:
                    continue
                matched.append(entry)
                shown = display(entry.shown)
                if mode == "content":
                    lines.extend(f"{shown}:{n}:{text[:MAX_LINE_CHARS]}" for n, text in hits)
                elif mode == "count":
                    lines.append(f"{shown}:{len(hits)}")
                if len(lines) > cap and mode != "files_with_matches":
                    break
        except PathRefused as exc:
            return error(f"Grep: {exc}")
        except FileNotFoundError:
            return error(f"Grep: path does not exist: {display(root)}")
        except OSError as exc:
            return error(f"Grep: cannot search {display(root)}: {exc.strerror}")
        if not matched:
            return output(_with_note("No matches found", walk))
        if mode == "files_with_matches":
            lines = [display(e.shown) for e in _newest_first(matched)]
        return output(_with_note(_capped(lines, cap, "lines"), walk))

    @staticmethod
    def _search(entry: Entry, regex: re.Pattern[str], cancel: CancelToken) -> list[tuple[int, str]]:
        hits: list[tuple[int, str]] = []
        try:
            fd = entry.open()
        except OSError:  # vanished, unreadable, or swapped for a symlink since the walk
            return hits
        with open(fd, "rb") as raw:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_GREP_FILE_BYTES:
                return hits
            try:
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
