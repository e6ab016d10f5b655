"""A child process in its own process group, pumped without threads (Bash, hooks).

The child starts in a new session (so its process group id is its pid) with
piped stdio. :meth:`GroupProcess.pump` waits at most a given time for output
or exit and returns what arrived, so one caller thread can enforce deadlines
and report progress. :meth:`GroupProcess.kill` may be called from any thread
(a cancel callback, an arbiter that lost interest): it SIGKILLs the whole
group, which closes the pipes and wakes the pump. When the group leader
exits, anything it left behind in the group (``sleep 100 &``) is killed too,
so a stray grandchild holding a pipe open can never hang the caller.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

Stream = Literal["stdout", "stderr"]

#: The longest single wait inside :meth:`GroupProcess.pump`, so exit is noticed promptly.
_EXIT_CHECK_S: Final = 0.05
_READ_SIZE: Final = 65536


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
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
        stdin_data: bytes | None = None,
        merge_stderr: bool = False,
    ) -> None:
        self._proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._reaped = False
        self.killed = False
        self._selector = selectors.DefaultSelector()
        assert self._proc.stdout is not None
        self._selector.register(self._proc.stdout, selectors.EVENT_READ, "stdout")
        if self._proc.stderr is not None:
            self._selector.register(self._proc.stderr, selectors.EVENT_READ, "stderr")
        self._pending_in = memoryview(stdin_data or b"")
        if self._proc.stdin is not None:
            os.set_blocking(self._proc.stdin.fileno(), False)
            self._selector.register(self._proc.stdin, selectors.EVENT_WRITE, "stdin")

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
                time.sleep(wait)
            if self._proc.poll() is None:
                return
        self._kill_group()
        for key in list(self._selector.get_map().values()):
            self._close(key)
        self._selector.close()
        with self._lock:
            self._proc.wait()
            self._reaped = True

    def kill(self) -> None:
        """SIGKILL the whole group; safe from any thread, a no-op once reaped."""
        self.killed = True
        self._kill_group()

    def _kill_group(self) -> None:
        with self._lock:
            if self._reaped:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._proc.pid, signal.SIGKILL)
