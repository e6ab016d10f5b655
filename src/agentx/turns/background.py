"""A background shell command writing to its output file (DEC-TURN-3).

``Bash`` with ``run_in_background`` starts a :class:`BackgroundCommand`: the
command runs under ``/bin/bash -c`` in its own process group with the
session environment, stdin closed and stderr merged into stdout, exactly as
the foreground tool does. Its output goes to a file under the session's
task directory, at most :data:`MAX_OUTPUT_FILE_BYTES` of it (the rest is
counted and a note says how much was dropped). It is finite work: its timeout
(the tool's, default 120 s, at most 600 s) kills the whole group, and so do
``stop_task`` and shutdown (:meth:`BackgroundCommand.kill`).

Nothing here starts a thread: the actor layer calls :meth:`BackgroundCommand.pump`
from the thread it owns (see ``agentx.actors.task_manager``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, Protocol

from msgspec import Struct

from agentx.config.home import check_private, private_dirs
from agentx.tools.process import ChildProcesses, GroupProcess

SHELL: Final = "/bin/bash"
#: Bytes of a task's output kept in its output file.
MAX_OUTPUT_FILE_BYTES: Final = 8 * 1024 * 1024


class TaskTicket(Struct, frozen=True, kw_only=True):
    """What the tool result names: the task id and where its output goes."""

    task_id: str
    output_file: str


class TaskFacts(Struct, frozen=True, kw_only=True):
    """A task as the ``TaskStop`` tool reports it: its kind and what it runs."""

    task_id: str
    task_type: str
    description: str


class BackgroundLauncher(Protocol):
    """Starts finite background work for ``Bash`` (implemented by the actor layer)."""

    def start(
        self,
        *,
        command: str,
        description: str,
        tool_use_id: str | None,
        cwd: Path,
        env: Mapping[str, str],
        timeout_ms: int,
        argv: Sequence[str] | None = None,
    ) -> TaskTicket:
        """Start the command (run as ``argv`` when given: a sandboxed shell);
        raises ``OSError`` when it cannot be started."""

    def stop(self, task_id: str) -> str | None:
        """Stop a running task (``stop_task`` and the ``TaskStop`` tool take
        the same decision, DEC-PROFILE-1): None when accepted, else the error."""

    def described(self, task_id: str) -> TaskFacts | None:
        """What the table knows of the task (None: this session never started it)."""


class BackgroundCommand:
    """One running background command and its output file."""

    def __init__(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        output_file: Path,
        timeout_ms: int,
        now: float,
        children: ChildProcesses,
        argv: Sequence[str] | None = None,
    ) -> None:
        # DEC-HOME-1: the session's task folder is 0700 and this user's, in
        # a folder no other user may write (in the temp directory another
        # user could have made either first, or swap them).
        check_private(private_dirs(output_file.parent))
        check_private(output_file.parent.parent, others_may_read=True)
        self._fd = os.open(
            output_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600
        )
        try:
            self._proc = GroupProcess(
                argv or [SHELL, "-c", command],
                cwd=cwd,
                env=env,
                children=children,
                merge_stderr=True,
            )
        except BaseException:
            os.close(self._fd)
            output_file.unlink(missing_ok=True)
            raise
        self._deadline = now + timeout_ms / 1000
        self._written = 0
        self._dropped = 0
        self.timed_out = False

    @property
    def done(self) -> bool:
        return self._proc.done

    @property
    def exit_code(self) -> int | None:
        """The shell's status once :attr:`done`; None when its timeout killed it."""
        return None if self.timed_out else self._proc.returncode

    def pump(self, timeout: float, now: float) -> str:
        """Wait up to ``timeout`` s for output or exit; append output to the
        file and return it as text (the caller keeps only the last line).
        Past the deadline the group is killed. Closes the file once done."""
        if not self._proc.done and now >= self._deadline and not self.timed_out:
            self.timed_out = True
            self._proc.kill()
        data = b"".join(chunk.data for chunk in self._proc.pump(timeout))
        room = MAX_OUTPUT_FILE_BYTES - self._written
        kept = data[: max(room, 0)]
        if kept:
            self._write(kept)
        self._dropped += len(data) - len(kept)
        if self._proc.done:
            self._close()
        return data.decode("utf-8", errors="replace")

    def kill(self) -> None:
        """SIGKILL the whole group; safe from any thread."""
        self._proc.kill()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        self._written += len(data)

    def _close(self) -> None:
        if self._fd < 0:
            return
        if self._dropped:
            note = f"\n[output truncated: {self._dropped} more bytes were not kept]\n"
            self._write(note.encode())
        os.close(self._fd)
        self._fd = -1
