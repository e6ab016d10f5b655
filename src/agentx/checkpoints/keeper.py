"""A session's file checkpoints (DEC-PROFILE-2 ``rewind_files``).

:class:`Checkpoints` is what the one write path of the file tools
(:func:`agentx.tools.fsaccess.replace_in`) holds while it replaces a file:
before the first change to a file during a user message, the file's prior
state goes to the store (:mod:`agentx.checkpoints.stores`), durable before
the change is made; a state that cannot be recorded at all stops the
change (``OSError``). The turn engine marks each user message as its turn
begins; ``rewind_files`` rewinds on the supervisor's thread. One lock
serialises the three, so a rewind never interleaves with a tool's write.

The stored entries load on first use (a resumed session rewinds to the
messages of its earlier runs). Entries that cannot be read refuse every
rewind of the session, naming why; changes still happen, since no rewind
can then claim them.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from agentx.checkpoints.restore import Unrestorable, look, put_back
from agentx.checkpoints.stores import CheckpointStore, CheckpointStoreError, Place, open_store
from agentx.diagnostics import logger
from agentx.messages import checkpoints as core
from agentx.messages.frozen import FrozenDict
from agentx.tools.base import PathAccess
from agentx.tools.fsaccess import READ_FLAGS, open_file

#: The error every rewind of a session whose entries cannot be read gets.
UNREADABLE = "The file checkpoints of this session cannot be read ({}); nothing was rewound."


class Checkpoints:
    """Marks, kept states and rewinds for one session."""

    def __init__(self, place: Place, access: Callable[[], PathAccess]) -> None:
        self._place = place
        self._access = access
        self._lock = threading.Lock()
        self._store: CheckpointStore | None = None
        self._entries: list[core.Entry] = []
        self._kept: set[str] = set()
        self._used = 0
        self._message: str | None = None
        self._changed: set[str] = set()
        #: Every tracked file -> what its state was when last recorded
        #: (:func:`_state`'s ``seen``), None once changed since or unknown.
        self._last: dict[str, tuple[int, ...] | None] = {}
        self._stopped = False
        #: Why the entries cannot be read or written (every rewind is refused).
        self._broken: str | None = None
        self._closed = False

    # -- the store -------------------------------------------------------------

    def _ready(self) -> CheckpointStore | None:
        """The store with the stored entries loaded (once); None when broken."""
        if self._broken is not None:
            return None
        if self._store is not None:
            return self._store
        try:
            store = open_store(self._place)
        except CheckpointStoreError as exc:
            self._break(str(exc))
            return None
        try:
            entries = [core.decode(line) for line in store.load()]
        except (CheckpointStoreError, core.BadEntry) as exc:
            store.close()
            self._break(str(exc))
            return None
        self._store = store
        self._entries = entries
        self._stopped = any(isinstance(e, core.Stopped) for e in entries)
        for entry in entries:
            if isinstance(entry, core.Kept | core.Lost):
                self._last[entry.path] = None  # unknown since: kept again at the next message
            if isinstance(entry, core.Kept) and entry.digest is not None:
                if entry.digest not in self._kept:
                    self._used += entry.size
                self._kept.add(entry.digest)
        return store

    def _break(self, reason: str) -> None:
        logger.error("file checkpoints: {}; rewind_files is refused in this session", reason)
        self._broken = reason

    def _record(self, store: CheckpointStore, entry: core.Entry) -> None:
        try:
            store.append(core.encode(entry))
        except CheckpointStoreError as exc:
            raise OSError(errno.EIO, f"its checkpoint could not be recorded ({exc})") from None
        self._entries.append(entry)
        if isinstance(entry, core.Stopped):
            self._stopped = True

    # -- marking and keeping ---------------------------------------------------

    def begin_message(self, message: str) -> None:
        """A user message's turn begins: every file tracked so far is kept
        again as it is now, when it changed since it was last kept (by any
        means: a Bash command, another program), and later changes are
        kept under this message."""
        with self._lock:
            self._message = None
            self._changed = set()
            store = self._ready()
            if store is None or self._closed or self._stopped:
                return
            try:
                if not core.admit_mark(len(self._entries)):
                    self._record(store, core.Stopped())
                    return
                self._record(store, core.Mark(message))
                self._message = message
                for key in sorted(self._last):
                    if not self._keep_state(store, message, key, start=True):
                        return
            except OSError as exc:
                self._break(exc.strerror or "the store failed")

    @contextmanager
    def changing(self, dir_fd: int, name: str, path: Path) -> Iterator[None]:
        with self._lock:
            if self._closed:
                raise OSError(errno.ESHUTDOWN, "the session is ending")
            key = os.fsdecode(path)
            message = self._message
            if message is not None and key not in self._changed and not self._stopped:
                store = self._ready()
                if store is not None:
                    opener = functools.partial(os.open, name, READ_FLAGS, dir_fd=dir_fd)
                    self._keep_state(store, message, key, start=False, opener=opener)
                    self._changed.add(key)
            self._last[key] = None  # changed: kept again when the next message begins
            yield

    def _keep_state(
        self,
        store: CheckpointStore,
        message: str,
        key: str,
        *,
        start: bool,
        opener: Callable[[], int] | None = None,
    ) -> bool:
        """Record ``key``'s state now (at a message's ``start``: only when it
        differs from the state last recorded); False once tracking stopped."""
        state = _state(
            opener or functools.partial(open_file, Path(key)),
            message,
            key,
            start=start,
            unchanged=self._last.get(key) if start else None,
        )
        if state is None:
            return True  # as last recorded: nothing to keep
        entry, data, seen = state
        if isinstance(entry, core.Kept) and entry.digest is not None:
            verdict = core.admit(
                size=entry.size,
                new_bytes=entry.digest not in self._kept,
                used=self._used,
                entries=len(self._entries),
            )
        else:
            verdict = core.Stop() if len(self._entries) >= core.MAX_ENTRIES else core.Keep()
        if isinstance(verdict, core.Stop):
            self._record(store, core.Stopped())
            return False
        if isinstance(verdict, core.Lose):
            size, mtime_ns = (seen[1], seen[2]) if len(seen) == 4 else (None, None)
            entry = core.Lost(
                message=message,
                path=key,
                reason=verdict.reason,
                size=size,
                mtime_ns=mtime_ns,
                start=start,
            )
        elif isinstance(entry, core.Kept) and entry.digest is not None:
            self._put(store, entry.digest, data)
        self._record(store, entry)
        self._last[key] = seen
        return True

    def _put(self, store: CheckpointStore, digest: str, data: bytes) -> None:
        if digest in self._kept:
            return
        try:
            store.put(digest, data)
        except CheckpointStoreError as exc:
            raise OSError(errno.EIO, f"its checkpoint could not be recorded ({exc})") from None
        self._kept.add(digest)
        self._used += len(data)

    # -- rewinding -------------------------------------------------------------

    def rewind(self, message: str, *, dry_run: bool) -> FrozenDict | str:
        """``rewind_files``: the answer payload, or the correlated error."""
        with self._lock:
            store = self._ready()
            if store is None:
                return core.cannot(UNREADABLE.format(self._broken), dry_run=dry_run)
            plan = core.plan_rewind(self._entries, message)
            if isinstance(plan, core.Refusal):
                return core.cannot(plan.error, dry_run=dry_run)
            access = self._access()
            seen = [(t, look(Path(t.path), access)) for t in plan.targets]
            changed = core.judge(seen)
            if isinstance(changed, core.Refusal):
                return core.cannot(changed.error, dry_run=dry_run)
            now = {t.path: n for t, n in seen}
            insertions = deletions = 0
            done: list[str] = []
            for target in changed:
                try:
                    data = None if target.digest is None else store.get(target.digest)
                except CheckpointStoreError as exc:
                    return self._failed(done, changed, target, str(exc), dry_run)
                added, removed = core.line_counts(now[target.path].data, data)
                insertions += added
                deletions += removed
                if dry_run:
                    continue
                try:
                    put_back(Path(target.path), data, target.mode, access)
                except (Unrestorable, OSError) as exc:
                    self._last[target.path] = None
                    why = exc.strerror if isinstance(exc, OSError) else str(exc)
                    return self._failed(done, changed, target, str(why), dry_run)
                done.append(target.path)
                self._last[target.path] = None  # kept again when the next message begins
            return core.answer([t.path for t in changed], insertions, deletions)

    @staticmethod
    def _failed(
        done: list[str],
        changed: tuple[core.Target, ...],
        target: core.Target,
        why: str,
        dry_run: bool,
    ) -> FrozenDict | str:
        from agentx.messages.encode import fs_text  # noqa: PLC0415

        restored = f"restored {len(done)} of {len(changed)} files" if done else "nothing restored"
        return core.cannot(
            f"Failed to rewind: {restored}; {fs_text(target.path)}: {why}", dry_run=dry_run
        )

    def close(self) -> None:
        """At shutdown: no change may happen any more; a temp store is removed."""
        with self._lock:
            self._closed = True
            if self._store is not None:
                self._store.close()


#: ``seen`` of an absent file, and of a path that is not a regular file.
_ABSENT: tuple[int, ...] = ()
_NOT_REGULAR: tuple[int, ...] = (-1,)


def _state(
    opener: Callable[[], int],
    message: str,
    key: str,
    *,
    start: bool,
    unchanged: tuple[int, ...] | None = None,
) -> tuple[core.Kept | core.Lost, bytes, tuple[int, ...]] | None:
    """A file's state now: its entry, its bytes (empty unless they are to
    be kept) and what identifies it (inode, size, change time, mode) to
    tell later whether it changed; None, without reading it, when it is
    still ``unchanged``. Opened without following a symlink."""
    too_large = f"it was larger than {core.MAX_FILE_BYTES} bytes"
    try:
        fd = opener()
    except FileNotFoundError:
        if unchanged == _ABSENT:
            return None
        return core.Kept(message=message, path=key, start=start), b"", _ABSENT
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            reason = "it was not a regular file"
        else:
            reason = f"it could not be read: {exc.strerror}"
        if unchanged == _NOT_REGULAR:
            return None
        lost = core.Lost(message=message, path=key, reason=reason, start=start)
        return lost, b"", _NOT_REGULAR
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(handle.fileno())
        seen = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
        if seen == unchanged or (not stat.S_ISREG(st.st_mode) and unchanged == _NOT_REGULAR):
            return None
        if not stat.S_ISREG(st.st_mode):
            reason = "it was not a regular file"
            lost = core.Lost(message=message, path=key, reason=reason, start=start)
            return lost, b"", _NOT_REGULAR
        data = b"" if st.st_size > core.MAX_FILE_BYTES else handle.read(core.MAX_FILE_BYTES + 1)
    if st.st_size > core.MAX_FILE_BYTES or len(data) > core.MAX_FILE_BYTES:
        lost = core.Lost(
            message=message,
            path=key,
            reason=too_large,
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
            start=start,
        )
        return lost, b"", seen
    kept = core.Kept(
        message=message,
        path=key,
        digest=hashlib.sha256(data).hexdigest(),
        size=len(data),
        mode=stat.S_IMODE(st.st_mode),
        start=start,
    )
    return kept, data, seen
