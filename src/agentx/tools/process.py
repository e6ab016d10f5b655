"""Child processes in their own process groups (Bash, background Bash, hooks).

The child starts in a new session (so its process group id is its pid) with
piped stdio. :meth:`GroupProcess.pump` waits at most a given time for output
or exit and returns what arrived, so one caller thread can enforce deadlines
and report progress. :meth:`GroupProcess.kill` may be called from any thread
(a cancel callback, an arbiter that lost interest): it SIGKILLs the whole
group, which closes the pipes and wakes the pump. When the group leader
exits, anything it left behind in the group (``sleep 100 &``) is killed too,
so a stray grandchild holding a pipe open can never hang the caller.

:class:`ChildProcesses` is the session's registry of every child it started
(DECISIONS section 8: a session that ends, by EOF, failure or signal, leaves
nothing running). One registry per session, never a module global: the
embedding API may run several sessions in one process. A group is registered
right after ``fork``, before anything else can fail, and leaves the registry
once its leader is reaped. :meth:`ChildProcesses.terminate_all` sends SIGTERM
to every live group, waits a short grace for the leaders, then SIGKILLs every
group; it is bounded, idempotent and safe from any thread. Once it has run,
any child started later is killed at once and its start fails with
``OSError``. Other children (MCP stdio servers, which the ``mcp`` package
starts and stops itself) join as :class:`Stoppable` entries. A process that
left its group (``setsid``, a double fork) is an orphan adopted by the
process (:mod:`agentx.tools.orphans`, the CLI's subreaper): it is reaped
when it exits and ended after everything else at shutdown.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import signal
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, Protocol

from msgspec import Struct

from agentx.diagnostics import logger
from agentx.tools.child_env import child_environment
from agentx.tools.orphans import Orphans

if TYPE_CHECKING:
    import selectors

Stream = Literal["stdout", "stderr"]

#: The longest single wait inside :meth:`GroupProcess.pump`, so exit is noticed promptly.
_EXIT_CHECK_S: Final = 0.05
_READ_SIZE: Final = 65536
#: How long :meth:`ChildProcesses.terminate_all` waits after SIGTERM before SIGKILL.
TERM_GRACE_S: Final = 1.0
#: How long it then waits for the killed leaders (a process in D state may linger).
KILL_WAIT_S: Final = 1.0


class Chunk(Struct, frozen=True, kw_only=True):
    stream: Stream
    data: bytes


class GroupProcess:
    """A process group led by ``argv``; see the module docstring."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        children: ChildProcesses,
        stdin_data: bytes | None = None,
        merge_stderr: bool = False,
        pass_fds: Sequence[int] = (),
    ) -> None:
        # Loaded with the first child, not at start (DEC-CLI-3).
        import selectors  # noqa: PLC0415
        import subprocess  # noqa: PLC0415

        self._lock = threading.Lock()
        self._reaped = False
        self.killed = False
        self._children = children
        with children.spawning() as claimed:
            self._proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=child_environment(env),  # DEC-AUTH-3: no credential reaches a child
                stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                start_new_session=True,
                pass_fds=tuple(pass_fds),
            )
            claimed.add(self._proc.pid)
        try:
            # Registered first: nothing below may leave a group unaccounted for.
            children.register(self)
            self._selector = selectors.DefaultSelector()
            assert self._proc.stdout is not None
            self._selector.register(self._proc.stdout, selectors.EVENT_READ, "stdout")
            if self._proc.stderr is not None:
                self._selector.register(self._proc.stderr, selectors.EVENT_READ, "stderr")
            self._pending_in = memoryview(stdin_data or b"")
            if self._proc.stdin is not None:
                os.set_blocking(self._proc.stdin.fileno(), False)
                self._selector.register(self._proc.stdin, selectors.EVENT_WRITE, "stdin")
        except BaseException:
            self._abandon()
            raise

    def _abandon(self) -> None:
        """A start that failed after ``fork``: kill the group, reap, close, unregister."""
        self.kill()
        with self._lock:
            # Deadline enforced elsewhere: the group was just SIGKILLed, which
            # the kernel carries out without the child's help.
            self._proc.wait()
            self._reaped = True
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
        self._children.unregister(self)

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The leader's exit status once :attr:`done` (negative: killed by that signal)."""
        return self._proc.returncode if self._reaped else None

    @property
    def done(self) -> bool:
        return self._reaped

    def pump(self, timeout: float) -> tuple[Chunk, ...]:
        """Wait up to ``timeout`` seconds for output or exit; return the output read.

        Once the leader has exited and the pipes are drained, the group is
        killed, the leader reaped and :attr:`done` becomes true.
        """
        chunks: list[Chunk] = []
        deadline = time.monotonic() + max(timeout, 0.0)
        while not self._reaped:
            if not self._selector.get_map():
                self._finish_if_exited(wait=min(_EXIT_CHECK_S, deadline - time.monotonic()))
                if self._reaped or time.monotonic() >= deadline:
                    break
                continue
            remaining = deadline - time.monotonic()
            events = self._selector.select(max(0.0, min(remaining, _EXIT_CHECK_S)))
            for key, _ in events:
                chunk = self._service(key)
                if chunk is not None:
                    chunks.append(chunk)
            if chunks:
                break
            if self._proc.poll() is not None:
                self._drain_and_finish(chunks)
                break
            if time.monotonic() >= deadline:
                break
        return tuple(chunks)

    def _service(self, key: selectors.SelectorKey) -> Chunk | None:
        fd = key.fd
        if key.data == "stdin":
            try:
                written = os.write(fd, self._pending_in[:_READ_SIZE])
            except BlockingIOError:
                return None
            except (BrokenPipeError, OSError):
                written = len(self._pending_in)
            self._pending_in = self._pending_in[written:]
            if not self._pending_in:
                self._close(key)
            return None
        data = os.read(fd, _READ_SIZE)
        if not data:
            self._close(key)
            return None
        stream: Stream = "stdout" if key.data == "stdout" else "stderr"
        return Chunk(stream=stream, data=data)

    def _close(self, key: selectors.SelectorKey) -> None:
        self._selector.unregister(key.fileobj)
        key.fileobj.close()  # type: ignore[union-attr]

    def _drain_and_finish(self, chunks: list[Chunk]) -> None:
        """The leader exited: take what is already buffered, then end the group."""
        for key, _ in self._selector.select(0):
            if key.data != "stdin":
                chunk = self._service(key)
                if chunk is not None:
                    chunks.append(chunk)
        self._finish_if_exited(wait=0)

    def _finish_if_exited(self, *, wait: float) -> None:
        if self._proc.poll() is None:
            if wait > 0:
                self._wait_exit(wait)
            if self._proc.poll() is None:
                return
        self._kill_group()
        for key in list(self._selector.get_map().values()):
            self._close(key)
        self._selector.close()
        with self._lock:
            # Deadline enforced elsewhere: the group was just SIGKILLed, which
            # the kernel carries out without the child's help.
            self._proc.wait()
            self._reaped = True
        self._children.unregister(self)

    def _wait_exit(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for the leader to exit, on its pidfd: the
        pump notices the exit the moment it happens, not at its next check."""
        fd = self.open_pidfd()
        if fd is None:
            return
        try:
            select.select([fd], [], [], timeout)
        finally:
            os.close(fd)

    def kill(self) -> None:
        """SIGKILL the whole group; safe from any thread, a no-op once reaped."""
        self.killed = True
        self._kill_group()

    def _kill_group(self) -> None:
        self.signal_group(signal.SIGKILL)

    # -- for ChildProcesses ----------------------------------------------------

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the whole group; a no-op once the leader is reaped
        (its pid may then be reused; the group was SIGKILLed before reaping)."""
        with self._lock:
            if self._reaped:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signum)

    def open_pidfd(self) -> int | None:
        """A pidfd of the leader (readable once it has exited), or None once reaped."""
        with self._lock:
            if self._reaped:
                return None
            try:
                return os.pidfd_open(self._proc.pid)
            except ProcessLookupError:
                return None

    def reap_if_exited(self) -> None:
        """Collect the leader's status if it has exited (thread-safe: the pump
        then sees the same status); the pump still finishes the group."""
        self._proc.poll()


class Stoppable(Protocol):
    """A child the session stops through its own library (an MCP stdio server)."""

    def begin_stop(self) -> None:
        """Start stopping (never blocks): close, then TERM and KILL its group."""

    def wait_stopped(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for stopping to finish; True when it has."""


class ChildProcesses:
    """The session's child process groups; see the module docstring."""

    def __init__(
        self,
        *,
        term_grace_s: float = TERM_GRACE_S,
        kill_wait_s: float = KILL_WAIT_S,
        orphans: Orphans | None = None,
    ) -> None:
        self._orphans = orphans
        self._lock = threading.Lock()
        self._groups: set[GroupProcess] = set()
        self._others: set[Stoppable] = set()
        self._closed = False
        self._term_grace_s = term_grace_s
        self._kill_wait_s = kill_wait_s

    @property
    def live(self) -> int:
        """How many groups and other children are registered now."""
        with self._lock:
            return len(self._groups) + len(self._others)

    def register(self, group: GroupProcess) -> None:
        """Track ``group``; after :meth:`terminate_all` it is refused with ``OSError``
        (the caller kills and reaps it)."""
        with self._lock:
            if not self._closed:
                self._groups.add(group)
                return
        raise OSError(errno.ECANCELED, "the session is shutting down")

    def unregister(self, group: GroupProcess) -> None:
        """``group``'s leader was reaped: forget it, and reap the orphans that
        exited meanwhile (DEC-EXIT-1)."""
        with self._lock:
            self._groups.discard(group)
        if self._orphans is not None:
            self._orphans.release(group.pid)
            self._orphans.sweep()

    @contextmanager
    def spawning(self) -> Iterator[set[int]]:
        """Start a child inside this block and add its pid to the yielded set:
        the orphan sweeps then never collect its status."""
        if self._orphans is None:
            yield set()
            return
        with self._orphans.spawning() as claimed:
            yield claimed

    def add(self, child: Stoppable) -> None:
        """Track a child stopped through its own library; stopped at once when
        the registry is already closed."""
        with self._lock:
            if not self._closed:
                self._others.add(child)
                return
        child.begin_stop()

    def discard(self, child: Stoppable) -> None:
        with self._lock:
            self._others.discard(child)

    def terminate_all(self) -> None:
        """SIGTERM every live group, wait :data:`TERM_GRACE_S` for the leaders,
        SIGKILL every group, wait :data:`KILL_WAIT_S`; stop the other children
        in the same window; then end every adopted orphan the same way
        (:meth:`Orphans.end_all`). Bounded, idempotent, safe from any thread;
        later starts are refused."""
        with self._lock:
            self._closed = True
            groups = tuple(self._groups)
            others = tuple(self._others)
        if groups or others:
            self._terminate(groups, others)
        if self._orphans is not None:
            # What left its group (setsid, a double fork, nohup) was adopted
            # by this process; it goes last, once every owner has stopped.
            self._orphans.end_all(
                term_grace=self._term_grace_s,
                deadline=time.monotonic() + self._term_grace_s + self._kill_wait_s,
            )

    def _terminate(self, groups: tuple[GroupProcess, ...], others: tuple[Stoppable, ...]) -> None:
        for other in others:
            other.begin_stop()
        pidfds = {group: group.open_pidfd() for group in groups}
        running = [fd for fd in pidfds.values() if fd is not None]
        try:
            for group in groups:
                group.signal_group(signal.SIGTERM)
            end_of_grace = time.monotonic() + self._term_grace_s
            running = _wait_exited(running, end_of_grace)
            for group in groups:
                group.signal_group(signal.SIGKILL)
            deadline = time.monotonic() + self._kill_wait_s
            running = _wait_exited(running, deadline)
            for group in groups:
                group.reap_if_exited()
            stopping = _wait_stopped(others, deadline)
        finally:
            for fd in pidfds.values():
                if fd is not None:
                    os.close(fd)
        if running:
            logger.warning("{} child process(es) did not exit after SIGKILL", len(running))
        if stopping:
            # An MCP transport's own close (stdin closed, then its package's
            # SIGTERM and SIGKILL) outlasted the window; it goes on.
            logger.warning("{} MCP server(s) still stopping at the shutdown deadline", stopping)


def _wait_exited(pidfds: list[int], deadline: float) -> list[int]:
    """Wait until every pidfd is readable (its process exited) or ``deadline``;
    return the ones still running."""
    running = list(pidfds)
    while running:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        readable, _, _ = select.select(running, [], [], remaining)
        running = [fd for fd in running if fd not in readable]
    return running


def _wait_stopped(others: tuple[Stoppable, ...], deadline: float) -> int:
    """Wait until every other child has stopped or ``deadline``; return how many have not."""
    return sum(not other.wait_stopped(max(deadline - time.monotonic(), 0.0)) for other in others)
