"""The search tools ``Glob`` and ``Grep`` (DEC-TURN-3), bounded and cancellable.

``Glob`` lists files matching a pattern, newest first like Claude Code.
``Grep`` searches file contents with ripgrep in a child process with a
deadline (WIRE-010, :mod:`agentx.tools.ripgrep`: a pattern can never freeze
the host); output modes and parameter names follow Claude Code's tool
(``-i``, ``output_mode``, ``glob``, ``head_limit``). Both walk at most
:data:`MAX_SCANNED` entries, skip ``.git`` and similar VCS folders, and
check the cancel token while walking.

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
import time
from collections.abc import Iterator, Mapping
from fnmatch import fnmatchcase
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Final

from agentx.providers.base import CancelToken
from agentx.tools.base import (
    ToolContext,
    ToolInputError,
    ToolOutput,
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
)
from agentx.tools.fsaccess import Entry, PathRefused, Walk, admitted, open_file
from agentx.tools.specs import GLOB, GREP, OUTPUT_MODES, OutputMode
from agentx.tools.specs import SEARCH_MAX_RESULTS as MAX_RESULTS

if TYPE_CHECKING:
    from agentx.tools.ripgrep import Query

MAX_CONTENT_LINES: Final = 1000
MAX_SCANNED: Final = 100_000
MAX_LINE_CHARS: Final = 2000
#: Files past this size are not searched by Grep.
MAX_GREP_FILE_BYTES: Final = 16 * 1024 * 1024
SKIPPED_DIRS: Final = frozenset({".git", ".hg", ".svn"})
#: The overall deadline of one Grep call (Claude Code gives ripgrep 20 s too).
SEARCH_SECONDS: Final = 20.0
#: Open files handed to one rg run.
BATCH_FILES: Final = 256


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


class GlobTool:
    name: Final = "Glob"
    spec: Final = GLOB
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


def _is_binary(head: bytes) -> bool:
    return b"\0" in head


def _searchable(entry: Entry) -> int | None:
    """An open descriptor of ``entry`` if Grep searches it: a regular text file
    of at most :data:`MAX_GREP_FILE_BYTES` (the first 8 KiB hold no NUL)."""
    try:
        fd = entry.open()
    except OSError:  # vanished, unreadable, or swapped for a symlink since the walk
        return None
    try:
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode) and st.st_size <= MAX_GREP_FILE_BYTES
        if regular and not _is_binary(os.pread(fd, 8192, 0)):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


class _Collect:
    """The matches of one Grep call, batch by batch, in walk order."""

    def __init__(self, query: Query, mode: OutputMode, cap: int) -> None:
        self.query = query
        self.mode = mode
        self.cap = cap
        self.matched: list[Entry] = []
        self.lines: list[str] = []
        self.full = False
        self.timed_out = False

    def batch(self, batch: list[tuple[Entry, int]]) -> None:
        budget = None if self.mode == "files_with_matches" else self.cap + 1 - len(self.lines)
        try:
            found = self.query.search([fd for _, fd in batch], budget)
        except TimeoutError:
            self.timed_out = True
            return
        hits: set[int] = set(found.files) | set(found.counts) | set(found.lines)
        for at, (entry, _) in enumerate(batch):
            if at not in hits:
                continue
            self.matched.append(entry)
            shown = display(entry.shown)
            if self.mode == "content":
                self.lines.extend(
                    f"{shown}:{n}:{text[:MAX_LINE_CHARS]}" for n, text in found.lines[at]
                )
            elif self.mode == "count":
                self.lines.append(f"{shown}:{found.counts[at]}")
        self.full = found.stopped or (
            self.mode != "files_with_matches" and len(self.lines) > self.cap
        )


class GrepTool:
    """Grep (DEC-TURN-3): the walk and the opening are agentx's (DEC-PERM-PATH),
    the matching is ripgrep's, in a child with a deadline (:mod:`agentx.tools.ripgrep`)."""

    name: Final = "Grep"
    spec: Final = GREP
    read_only: Final = True

    def __init__(self, *, search_seconds: float = SEARCH_SECONDS) -> None:
        self._search_seconds = search_seconds

    def summarize(self, input: Mapping[str, Any]) -> str:
        where = get_optional_str(input, "path")
        return f"Grep {get_str(input, 'pattern')!r}" + (f" in {where}" if where else "")

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return (_search_root(input, cwd),)

    def named_paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return _search_named(input, cwd)

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        # At the first search, not at start-up (DEC-CLI-3).
        from agentx.tools.ripgrep import PatternError, Query, SearchFailed  # noqa: PLC0415

        try:
            check_members(input, self.spec)
            root = _search_root(input, ctx.cwd)
            named = _search_named(input, ctx.cwd)
            pattern = get_str(input, "pattern")
            if "\0" in pattern:
                raise ToolInputError("pattern must not contain a NUL character; write \\x00")
            file_glob = get_optional_str(input, "glob")
            mode = get_str(input, "output_mode", default="files_with_matches")
            if mode not in OUTPUT_MODES:
                raise ToolInputError("output_mode must be content, files_with_matches or count")
            default_cap = MAX_CONTENT_LINES if mode == "content" else MAX_RESULTS
            cap = get_int(input, "head_limit", default=default_cap, minimum=1)
            query = Query(
                pattern=pattern,
                ignore_case=get_bool(input, "-i"),
                mode=mode,
                deadline=time.monotonic() + self._search_seconds,
                children=ctx.children,
                cancel=cancel,
            )
            query.check()
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        except PatternError as exc:
            return invalid_input(self.name, ToolInputError(f"invalid regular expression: {exc}"))
        except SearchFailed as exc:
            return error(f"Grep: {exc}")
        except TimeoutError:
            return error(f"Grep: {self._timeout_note()}")
        access = path_access(ctx, self.name)
        walk: Walk | None = None
        found = _Collect(query, mode, cap)
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
            self._search(files, file_glob, found)
        except PathRefused as exc:
            return error(f"Grep: {exc}")
        except FileNotFoundError:
            return error(f"Grep: path does not exist: {display(root)}")
        except SearchFailed as exc:
            return error(f"Grep: {exc}")
        except OSError as exc:
            return error(f"Grep: cannot search {display(root)}: {exc.strerror}")
        note = f"\n[{self._timeout_note()}]" if found.timed_out else ""
        if not found.matched:
            return output(_with_note("No matches found", walk) + note, is_error=found.timed_out)
        if mode == "files_with_matches":
            listed = [display(e.shown) for e in _newest_first(found.matched)]
            return output(_with_note(_capped(listed, cap, "lines"), walk) + note)
        shown = "\n".join(found.lines[:cap])
        if len(found.lines) > cap:  # the search stopped there: how many more is unknown
            shown += "\n[more lines not shown; raise head_limit or narrow the search]"
        return output(_with_note(shown, walk) + note)

    def _timeout_note(self) -> str:
        return (
            f"search stopped after {self._search_seconds:g} s; results may be incomplete: "
            "narrow the path, the glob or the pattern"
        )

    @staticmethod
    def _search(files: Iterator[Entry], file_glob: str | None, found: _Collect) -> None:
        """Open the walk's files (DEC-PERM-PATH) and hand them to rg in batches."""
        batch: list[tuple[Entry, int]] = []
        try:
            for entry in files:
                if file_glob and not PurePath(*entry.rel).match(file_glob):
                    continue
                fd = _searchable(entry)
                if fd is None:
                    continue
                batch.append((entry, fd))
                if len(batch) == BATCH_FILES:
                    found.batch(batch)
                    for _, done in batch:
                        os.close(done)
                    batch = []
                    if found.full or found.timed_out:
                        return
            if batch:
                found.batch(batch)
        finally:
            for _, fd in batch:
                os.close(fd)
