"""Opening and walking files under the path policy, without a check-then-use race.

DEC-PERM-PATH: a file tool resolves a path, asks the call's
:class:`~agentx.tools.base.PathAccess` about the resolved path, and then opens
that resolved path one component at a time with ``O_NOFOLLOW``. The checked
path has no symlink in it, so a symlink swapped in after the check, at any
depth, makes the open fail (``ELOOP``/``ENOTDIR``) instead of being followed.
Reads use ``O_NONBLOCK`` so a FIFO never hangs a tool.

:class:`Walk` lists a tree for Glob and Grep the same way: each directory is
held open and its entries are opened relative to it; a symlinked entry is
resolved, checked, and opened by its resolved path. An entry the policy does
not admit is skipped and counted, never opened or listed (:meth:`Walk.note`
says so in the tool result).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

from msgspec import Struct

from agentx.messages.frozen import repr_without
from agentx.messages.permission_rules import Decision
from agentx.providers.base import CancelToken
from agentx.tools.base import (
    FileCheckpoints,
    PathAccess,
    ToolContext,
    ToolOutput,
    check_cancel,
    display,
    error,
    path_access,
)

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
#: Skipped entries named in a walk's note, at most.
MAX_NAMED_SKIPS: Final = 20


class PathRefused(Exception):
    """The call's policy does not admit a resolved path (DEC-PERM-PATH)."""

    def __init__(self, path: Path, decision: Decision) -> None:
        self.path = path
        self.decision = decision
        granted = "" if decision.behavior == "deny" else "; not granted to this call"
        super().__init__(f"{display(path)}: {decision.reason}{granted}")


def admitted(path: Path, access: PathAccess, named: tuple[Path, ...] = ()) -> Path:
    """Return ``path`` if the policy admits it (``named``: its spellings
    before symlinks were followed), else raise :class:`PathRefused`."""
    decision = access.check(path, named)
    if decision.behavior != "allow":
        raise PathRefused(path, decision)
    return path


def open_admitted(
    tool: str,
    path: Path,
    ctx: ToolContext,
    named: tuple[Path, ...],
    opener: Callable[[Path], int],
    *,
    what: str = "file",
) -> int | ToolOutput:
    """DEC-PERM-PATH: ``opener`` applied to ``path`` once the call's path
    policy admits it, or the tool's error: refused, ``what`` does not
    exist, or cannot be read (the OS's reason)."""
    try:
        return opener(admitted(path, path_access(ctx, tool), named))
    except PathRefused as exc:
        return error(f"{tool}: {exc}")
    except FileNotFoundError:
        return error(f"{tool}: {what} does not exist: {display(path)}")
    except OSError as exc:
        return error(f"{tool}: cannot read {display(path)}: {exc.strerror}")


def parent_dir(path: Path) -> int:
    """The open folder ``path`` is in (for :func:`open_admitted`)."""
    return open_dir(path.parent)


def open_dir(path: Path, *, create: bool = False) -> int:
    """Open the resolved directory ``path`` following no symlink on the way.

    With ``create``, missing components are made (mode 0777 less the umask).
    """
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in path.parts[1:]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: Path) -> int:
    """Open the resolved ``path`` for reading, following no symlink on the way."""
    if path.parent == path:
        return open_dir(path)
    parent = open_dir(path.parent)
    try:
        return os.open(path.name, READ_FLAGS, dir_fd=parent)
    finally:
        os.close(parent)


def replace_in(
    dir_fd: int,
    name: str,
    text: str,
    *,
    mode: int | None,
    path: Path,
    checkpoints: FileCheckpoints | None,
) -> None:
    """The one way a file tool changes a file: atomically replace ``name`` in
    the open directory with ``text`` (UTF-8), its prior state kept first when
    the session keeps checkpoints (DEC-PROFILE-2; ``path`` is the resolved
    path ``name`` is, the checkpoint's key). ``mode`` keeps an existing
    file's permission bits."""
    data = text.encode("utf-8")
    if checkpoints is None:
        replace_bytes_in(dir_fd, name, data, mode=mode)
        return
    with checkpoints.changing(dir_fd, name, path):
        replace_bytes_in(dir_fd, name, data, mode=mode)


def replace_bytes_in(dir_fd: int, name: str, data: bytes, *, mode: int | None) -> None:
    """Atomically replace ``name`` in the open directory with ``data``.

    A sibling temporary file is written and renamed over ``name``; the rename
    replaces whatever ``name`` is (a symlink swapped in is replaced, not
    followed). No checkpoint is kept: file tools use :func:`replace_in`.
    """
    tmp = f".{name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
        dir_fd=dir_fd,
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def regular_mode(st: os.stat_result) -> int | None:
    """The permission bits of a regular file, None for anything else."""
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else None


class Entry(Struct, frozen=True):
    """One admitted regular file of a walk.

    ``shown`` is the path as walked (through symlinked entries), ``rel`` its
    names below the walk's root, ``real`` where it resolves. :meth:`open` is
    valid only until the walk moves on.
    """

    shown: Path
    rel: tuple[str, ...]
    real: Path
    mtime: float
    _opener: Callable[[], int]

    def __repr__(self) -> str:
        return repr_without(self, frozenset({"_opener"}))

    def open(self) -> int:
        return self._opener()


class _Frame(Struct):
    fd: int
    shown: Path
    real: Path
    rel: tuple[str, ...]
    subdirs: Iterator[tuple[str, Path, bool]]


class Walk:
    """The files below a resolved, admitted directory, sorted per directory.

    Skips the ``skip_dirs`` names, entries that are not regular files or
    directories, and every entry the policy does not admit (counted for
    :meth:`note`). Symlinked entries are followed when their target is
    admitted; a link to a directory inside the walked tree is not (its files
    are listed by their own names), and each real directory is walked once,
    so links cannot loop.
    At most ``max_entries`` directory entries are looked at; ``max_depth``
    bounds the names below the root a yielded file may have.
    """

    def __init__(
        self,
        root: Path,
        access: PathAccess,
        cancel: CancelToken,
        *,
        shown: Path | None = None,
        max_entries: int,
        skip_dirs: frozenset[str] = frozenset(),
        max_depth: int | None = None,
    ) -> None:
        self._root = root
        self._shown = root if shown is None else shown
        self._access = access
        self._cancel = cancel
        self._max_entries = max_entries
        self._skip_dirs = skip_dirs
        self._max_depth = max_depth
        self.scanned = 0
        self.truncated = False
        self.outside: list[str] = []
        self.asked: list[str] = []
        self.denied = 0

    def files(self) -> Iterator[Entry]:
        root_fd = open_dir(self._root)
        root_st = os.fstat(root_fd)
        visited = {(root_st.st_dev, root_st.st_ino)}
        stack: list[_Frame] = []
        try:
            yield from self._enter(stack, root_fd, self._shown, self._root, ())
            while stack and not self.truncated:
                frame = stack[-1]
                nxt = next(frame.subdirs, None)
                if nxt is None:
                    os.close(stack.pop().fd)
                    continue
                name, real, linked = nxt
                try:
                    fd = open_dir(real) if linked else os.open(name, _DIR_FLAGS, dir_fd=frame.fd)
                except OSError:  # vanished, unreadable, or swapped for a symlink
                    continue
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) in visited:
                    os.close(fd)
                    continue
                visited.add((st.st_dev, st.st_ino))
                yield from self._enter(stack, fd, frame.shown / name, real, (*frame.rel, name))
        finally:
            for frame in stack:
                os.close(frame.fd)

    def _enter(
        self, stack: list[_Frame], fd: int, shown: Path, real: Path, rel: tuple[str, ...]
    ) -> Iterator[Entry]:
        """List one open directory: yield its files, queue its subdirectories."""
        check_cancel(self._cancel)
        stack.append(_Frame(fd, shown, real, rel, iter(())))
        try:
            with os.scandir(fd) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            return
        subdirs: list[tuple[str, Path, bool]] = []
        descend = self._max_depth is None or len(rel) + 1 < self._max_depth
        for entry in entries:
            self.scanned += 1
            if self.scanned > self._max_entries:
                self.truncated = True
                return
            if self.scanned % 256 == 0:
                check_cancel(self._cancel)
            found = self._classify(entry, shown, real)
            if found is None:
                continue
            target, st, linked = found
            if stat.S_ISDIR(st.st_mode):
                if descend and entry.name not in self._skip_dirs:
                    subdirs.append((entry.name, target, linked))
                continue
            opener = _opener(target) if linked else _opener_at(fd, entry.name)
            yield Entry(shown / entry.name, (*rel, entry.name), target, st.st_mtime, opener)
        stack[-1].subdirs = iter(subdirs)

    def _classify(
        self, entry: os.DirEntry[str], shown: Path, real: Path
    ) -> tuple[Path, os.stat_result, bool] | None:
        """The admitted target of a file or directory entry, else None (counted)."""
        try:
            linked = entry.is_symlink()
            if linked:
                target = Path(os.path.realpath(real / entry.name))
                st = os.stat(target, follow_symlinks=False)
            else:
                target = real / entry.name
                st = entry.stat(follow_symlinks=False)
        except OSError:  # a dangling link, or the entry vanished
            return None
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            return None
        if stat.S_ISDIR(st.st_mode) and (
            entry.name in self._skip_dirs or (linked and target.is_relative_to(self._root))
        ):
            return None  # a link into the walked tree: its files come by their own names
        decision = self._access.check(target, (shown / entry.name,))
        if decision.behavior == "allow":
            return target, st, linked
        if decision.behavior == "deny":
            self.denied += 1
        elif decision.blocked_path is not None:
            self.outside.append(display(shown / entry.name))
        else:
            self.asked.append(display(shown / entry.name))
        return None

    def note(self) -> str:
        """What the walk skipped, for the tool result (empty when nothing was)."""
        lines: list[str] = []
        if self.outside:
            lines.append(
                f"[{_count(self.outside)} not searched: they resolve outside the working "
                f"directories ({_names(self.outside)}); Read one to ask for access]"
            )
        if self.asked:
            lines.append(
                f"[{_count(self.asked)} not searched: a permission rule asks before they are "
                f"read ({_names(self.asked)})]"
            )
        if self.denied:
            noun = "entry" if self.denied == 1 else "entries"
            lines.append(f"[{self.denied} {noun} not searched: denied by permission rules]")
        return "\n".join(lines)


def _count(names: list[str]) -> str:
    return "1 entry" if len(names) == 1 else f"{len(names)} entries"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED_SKIPS])
    more = len(names) - MAX_NAMED_SKIPS
    return shown + (f" and {more} more" if more > 0 else "")


def _opener(real: Path) -> Callable[[], int]:
    return lambda: open_file(real)


def _opener_at(dir_fd: int, name: str) -> Callable[[], int]:
    return lambda: os.open(name, READ_FLAGS, dir_fd=dir_fd)
