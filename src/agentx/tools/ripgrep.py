"""Grep's matcher: ripgrep in a child process with a deadline (WIRE-010, DECISIONS section 8).

A regular expression can cost far more time than its input's size: Python's
``re`` backtracks (``(a|aa)+$`` on a long line of ``a`` runs for hours while
holding the interpreter lock, so no interrupt, control response or signal
is answered), and even linear-time engines (RE2, Rust's regex) fall back,
for patterns whose automaton does not fit their cache, to a simulation that
costs the input's size times the pattern's. Only a search outside the
host's interpreter can be stopped whatever the pattern: each batch of files
is searched by ``rg`` (the ``ripgrep`` package's binary, as Claude Code's
Grep does), in its own process group registered with the session's
:class:`~agentx.tools.process.ChildProcesses`. A cancel kills the group at
once; every Grep call has one overall deadline (the query's ``deadline``,
:data:`agentx.tools.search.SEARCH_SECONDS`); the session's shutdown stops it
like any child.

DEC-PERM-PATH: rg never walks or opens a path itself. agentx resolves,
checks and opens each file (:mod:`agentx.tools.fsaccess`) and hands rg the
open descriptors as ``/dev/fd/N``, so rg reads exactly the files the policy
admitted, even if a symlink is swapped in afterwards.

What rg writes is bounded before agentx holds it: a matched line longer
than :data:`MAX_COLUMNS` bytes is cut by rg (``--max-columns-preview``), and
a search stops (its group killed) as soon as it has produced more lines than
the caller can show. rg runs with an empty environment and ``--no-config``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final, Literal

from msgspec import Struct, field

from agentx.providers.base import Cancelled, CancelToken
from agentx.tools.process import ChildProcesses, GroupProcess

#: Bytes of a matched line rg prints; the rest is cut with a note.
MAX_COLUMNS: Final = 2000
#: Bytes of rg's diagnostics kept.
_MAX_STDERR: Final = 4096

Mode = Literal["content", "files_with_matches", "count"]

_MODE_FLAGS: Final[dict[Mode, tuple[str, ...]]] = {
    "content": ("--line-number", f"--max-columns={MAX_COLUMNS}", "--max-columns-preview"),
    "count": ("--count",),
    "files_with_matches": ("--files-with-matches",),
}


class SearchFailed(Exception):
    """rg is missing, could not start, or reported an error (one line)."""


class PatternError(SearchFailed):
    """rg refused the pattern; the message is rg's, on one line."""


def rg_binary() -> str:
    """The ``rg`` of the ``ripgrep`` package beside this interpreter, else on ``PATH``."""
    import shutil  # noqa: PLC0415 - at the first search, not at start-up (DEC-CLI-3)
    import sysconfig  # noqa: PLC0415

    for scripts in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(scripts) / "rg"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("rg")
    if found is None:
        raise SearchFailed("ripgrep (rg) is not installed; install the ripgrep package")
    return found


class Found(Struct):
    """What one batch found, per index into the batch's descriptors."""

    lines: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    counts: dict[int, int] = field(default_factory=dict)
    files: list[int] = field(default_factory=list)
    #: The search stopped early: more output than the caller wanted.
    stopped: bool = False


class Query(Struct, frozen=True, kw_only=True):
    """One Grep call's search: pattern, flags, mode, deadline (a monotonic time)."""

    pattern: str
    ignore_case: bool
    mode: Mode
    deadline: float
    children: ChildProcesses
    cancel: CancelToken

    def _argv(self, rg: str, extra: Sequence[str]) -> list[str]:
        flags = ["--ignore-case"] if self.ignore_case else []
        return [
            rg,
            "--no-config",
            "--color=never",
            "--no-heading",
            "--with-filename",
            "--null",
            "--text",
            "--threads=1",
            *flags,
            *extra,
            "--regexp",
            self.pattern,
            "--",
        ]

    def check(self) -> None:
        """Raise :class:`PatternError` if rg refuses the pattern."""
        code, _, err, _ = self._run(["--quiet"], ["/dev/null"], (), None)
        if code == 2:
            raise PatternError(_one_line(err) or "rg refused the pattern")

    def search(self, fds: Sequence[int], budget: int | None) -> Found:
        """Search the open files ``fds``; stop after ``budget`` output lines."""
        names = [f"/dev/fd/{fd}" for fd in fds]
        code, out, err, stopped = self._run(_MODE_FLAGS[self.mode], names, fds, budget)
        if code == 2 and not stopped and err:
            raise SearchFailed(_one_line(err))
        found = _parse(self.mode, out, {name.encode(): i for i, name in enumerate(names)})
        found.stopped = stopped
        return found

    def _run(
        self, extra: Sequence[str], names: Sequence[str], fds: Sequence[int], budget: int | None
    ) -> tuple[int | None, bytes, bytes, bool]:
        """Run rg to its end, the deadline, a cancel or ``budget`` lines of output."""
        if self.cancel.is_set():
            raise Cancelled
        if time.monotonic() >= self.deadline:
            raise TimeoutError
        try:
            proc = GroupProcess(
                [*self._argv(rg_binary(), extra), *names],
                cwd=Path("/"),
                env={},
                children=self.children,
                pass_fds=fds,
            )
        except OSError as exc:
            raise SearchFailed(f"cannot start ripgrep: {exc.strerror or exc}") from None
        self.cancel.on_cancel(proc.kill)
        out, err = bytearray(), bytearray()
        lines = 0
        stopped = timed_out = False
        while not proc.done:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0 and not timed_out:
                timed_out = True
                proc.kill()
            for chunk in proc.pump(max(remaining, 0.0) if not timed_out else 1.0):
                if chunk.stream == "stderr":
                    err += chunk.data[: _MAX_STDERR - len(err)]
                    continue
                out += chunk.data
                lines += chunk.data.count(b"\n")
                if budget is not None and not stopped and lines > budget:
                    stopped = True
                    proc.kill()
        if self.cancel.is_set():
            raise Cancelled
        if timed_out:
            raise TimeoutError
        return proc.returncode, bytes(out), bytes(err), stopped


def _one_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace")
    return " ".join(part.strip() for part in text.splitlines() if part.strip()).removeprefix("rg: ")


def _parse(mode: Mode, out: bytes, index: dict[bytes, int]) -> Found:
    """rg's ``--null`` output: ``NAME\\0`` then, per mode, ``LINE:TEXT\\n``,
    ``COUNT\\n`` or nothing. A torn last line (a stopped search) is dropped."""
    found = Found()
    if mode == "files_with_matches":
        found.files = [index[name] for name in out.split(b"\0") if name in index]
        return found
    for row in out.split(b"\n")[:-1]:
        name, sep, rest = row.partition(b"\0")
        if not sep or name not in index:
            continue
        at = index[name]
        if mode == "count":
            found.counts[at] = int(rest)
            continue
        number, _, text = rest.partition(b":")
        line = text.decode("utf-8", "replace").rstrip("\r")
        found.lines.setdefault(at, []).append((int(number), line))
    return found
