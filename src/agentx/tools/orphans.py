"""Orphans: agentx as the child subreaper of everything it starts (DEC-EXIT-1).

A process group is not a boundary: ``setsid sleep 1000 &``, ``setsid -f``, a
double fork or ``nohup cmd &`` leave the group a Bash command runs in, and
killing the group no longer reaches them. The first child started through
:meth:`Orphans.spawning` makes this process a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``, per process, so it covers the children
every thread starts): a process orphaned anywhere
below agentx is reparented to agentx instead of init, and stays findable as
a descendant in ``/proc``. A cgroup would name the same set, but needs a
writable delegated hierarchy and a way to enter it between ``fork`` and
``exec`` (Python's ``subprocess`` has none without ``preexec_fn``, which
agentx never uses: it starts processes from threads); the subreaper needs
neither.

Two duties follow, both decided by ``agentx.messages.process_tree``:

* reaping: an adopted orphan that exits is agentx's zombie. :meth:`sweep`
  (after every child group ends) reaps exited direct children that nobody
  claims, once they have been seen exited for :data:`ORPHAN_GRACE_S`; a
  child started through :meth:`spawning` is claimed (its ``Popen`` waits
  for it), and a library's own child (an MCP stdio server, waited for by
  asyncio) is reaped by its waiter long before the grace ends. Nothing is
  ever collected with ``waitpid(-1)``.
* ending: :meth:`end_all`, the last step of a session's child shutdown,
  SIGTERMs every process still below agentx, waits a short grace, then
  SIGKILLs what is left (again, until nothing is left or the deadline
  passes: a dying parent's children are reparented to agentx and found by
  the next snapshot) and reaps the unclaimed. Signals go through pidfds
  checked against the snapshot, so a recycled pid is never signalled.

The subreaper is a property of the whole process, so only the CLI, which
owns its process, has an :class:`Orphans`; an embedding application keeps
its own process's semantics and its sessions rely on process groups.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from agentx.diagnostics import logger
from agentx.messages.process_tree import ProcEntry, descendants, parse_stat, stale_zombies

#: ``prctl`` option number of ``PR_SET_CHILD_SUBREAPER`` (linux/prctl.h).
PR_SET_CHILD_SUBREAPER: Final = 36
#: How long an unclaimed exited child waits for its own waiter before agentx reaps it.
ORPHAN_GRACE_S: Final = 1.0
_PROC: Final = Path("/proc")


class Orphans:
    """This process's adopted orphans; see the module docstring."""

    def __init__(self, *, grace: float = ORPHAN_GRACE_S) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._claimed: set[int] = set()
        self._seen: dict[int, float] = {}
        self._grace = grace
        self._adopting: bool | None = None

    @property
    def adopting(self) -> bool | None:
        """True once this process is the subreaper, False where the kernel
        refused, None before the first child started."""
        return self._adopting

    @contextmanager
    def spawning(self) -> Iterator[set[int]]:
        """Hold the sweeps off while a child starts; add its pid to the yielded
        set (claimed: its ``Popen`` collects its status). The first start makes
        this process the subreaper (lazily: start-up does not pay for it)."""
        with self._lock:
            if self._adopting is None:
                self._adopting = _become_subreaper()
            yield self._claimed

    def release(self, pid: int) -> None:
        """``pid`` was reaped by its owner; it is no longer claimed."""
        with self._lock:
            self._claimed.discard(pid)

    def sweep(self) -> None:
        """Reap the stale unclaimed zombies among this process's children."""
        with self._lock:
            decided = stale_zombies(
                snapshot(),
                own_pid=self._pid,
                claimed=frozenset(self._claimed),
                seen=self._seen,
                now=time.monotonic(),
                grace=self._grace,
            )
            self._seen = dict(decided.seen)
            for pid in decided.reap:
                _reap(pid)

    def end_all(self, *, term_grace: float, deadline: float) -> int:
        """SIGTERM everything below this process, wait up to ``term_grace``,
        SIGKILL the rest until nothing is left or ``deadline`` (monotonic);
        reap the unclaimed. Returns how many were still alive at the end."""
        alive = self._signal_all(signal.SIGTERM)
        _wait_exited(alive, min(time.monotonic() + term_grace, deadline))
        _close_all(alive)
        left = 0
        while True:
            alive = self._signal_all(signal.SIGKILL)
            _wait_exited(alive, deadline)
            left = sum(_running(fd) for fd in alive)
            _close_all(alive)
            if not alive or time.monotonic() >= deadline:
                break
        with self._lock:
            for entry in snapshot():
                if entry.ppid == self._pid and entry.exited and entry.pid not in self._claimed:
                    _reap(entry.pid)
            self._seen = {}
        if left:
            logger.warning("{} orphaned child process(es) did not exit after SIGKILL", left)
        return left

    def _signal_all(self, signum: int) -> list[int]:
        """Signal every live descendant, parents first; their pidfds."""
        pidfds: list[int] = []
        for entry in descendants(snapshot(), self._pid):
            if entry.exited:
                continue
            fd = _open_checked(entry)
            if fd is None:
                continue
            try:
                signal.pidfd_send_signal(fd, signum)
            except ProcessLookupError:
                os.close(fd)
                continue
            pidfds.append(fd)
        return pidfds


def _become_subreaper() -> bool:
    """``prctl(PR_SET_CHILD_SUBREAPER, 1)``; False (one WARN line) where the
    kernel refuses, leaving process groups as the only tracking."""
    import ctypes  # noqa: PLC0415 - only once a child starts (start-up time)

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        reason = os.strerror(ctypes.get_errno())
        logger.warning("cannot track orphaned child processes (no subreaper): {}", reason)
        return False
    return True


def snapshot() -> tuple[ProcEntry, ...]:
    """Every process this process can see in ``/proc``."""
    entries: list[ProcEntry] = []
    try:
        names = os.listdir(_PROC)
    except OSError:
        return ()
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(_PROC / name / "stat", "rb") as file:
                data = file.read(4096)
        except OSError:  # it exited meanwhile
            continue
        entry = parse_stat(data)
        if entry is not None:
            entries.append(entry)
    return tuple(entries)


def kill_below() -> None:
    """SIGKILL every process below this one, now (DECISIONS section 8: a
    second signal exits at once, and nothing it leaves behind survives it:
    an MCP server that ignores SIGTERM would otherwise outlive agentx).
    One ``/proc`` scan; each process through a pidfd checked to be the one
    scanned, so a recycled pid is never hit."""
    for entry in descendants(snapshot(), os.getpid()):
        fd = _open_checked(entry)
        if fd is None:
            continue
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:  # it exited meanwhile
            pass
        finally:
            os.close(fd)


def _open_checked(entry: ProcEntry) -> int | None:
    """A pidfd of ``entry``'s process, checked to be the same process (same
    parent) after opening, so a pid recycled since the snapshot is not taken."""
    try:
        fd = os.pidfd_open(entry.pid)
    except OSError:
        return None
    try:
        with open(_PROC / str(entry.pid) / "stat", "rb") as file:
            now = parse_stat(file.read(4096))
    except OSError:
        now = None
    if now is None or now.ppid != entry.ppid:
        os.close(fd)
        return None
    return fd


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _running(fd: int) -> bool:
    readable, _, _ = select.select([fd], [], [], 0)
    return not readable


def _wait_exited(pidfds: list[int], deadline: float) -> None:
    """Wait until every pidfd is readable (its process exited) or ``deadline``."""
    running = list(pidfds)
    while running:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return
        readable, _, _ = select.select(running, [], [], remaining)
        running = [fd for fd in running if fd not in readable]


def _close_all(pidfds: list[int]) -> None:
    for fd in pidfds:
        os.close(fd)
