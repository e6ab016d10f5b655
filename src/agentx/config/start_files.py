"""Reading a file at start (DECISIONS section 8: before the protocol, a file
that cannot be used is exit 2 with one line naming it).

Every configuration file agentx reads before the protocol starts goes
through :func:`read_start_file`: ``auth.json``, the settings sources (user,
project, local, ``--settings``, ``$AGENTX_POLICY``), ``--system-prompt-
file``, ``--mcp-config`` and ``.mcp.json``, a scripted provider's script and
the runtime qualification record. It must be a regular file once symbolic
links are followed (a link to ``/dev/zero`` never ends, one to
``/dev/stdin`` would swallow the protocol's input, a FIFO would block), and
it is read with a size bound, so a file that never ends cannot exhaust
memory. The open never blocks (``O_NONBLOCK``: a FIFO is refused, not waited
on) and never takes a terminal as the controlling one (``O_NOCTTY``).

The bounds (:data:`START_FILE_LIMITS`) are generous for what each file
holds and small beside memory; a file of exactly its bound is read, one
byte more is refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from agentx.config.home import os_error_line

KIB: Final = 1024
MIB: Final = 1024 * KIB

#: DECISIONS section 8: the size bound of each file read at start, in bytes.
START_FILE_LIMITS: Final = {
    # DEC-AUTH-1: operator configuration, a few providers.
    "auth.json": 1 * MIB,
    # DEC-SET-1: every settings source (user, project, local, flag, policy).
    "settings": 1 * MIB,
    # DEC-CLI-7: one --mcp-config file or .mcp.json, a few servers.
    "mcp config": 1 * MIB,
    # DEC-CLI: --system-prompt-file, a prompt, not a corpus.
    "system prompt": 1 * MIB,
    # Section 6: a scripted provider's whole conversation, test fixtures included.
    "script": 64 * MIB,
    # DEC-SET-1: one memory file (CLAUDE.md, AGENTS.md, ...), instructions, not a corpus.
    "memory file": 256 * KIB,
    # DEC-TURN-3: one agent file (.claude/agents/*.md), a definition and its prompt.
    "agent file": 256 * KIB,
    # DEC-TURN-3: one skill (.claude/skills/*/SKILL.md), its description and instructions.
    "skill file": 256 * KIB,
    # MOD-A14B: the runtime qualification record, one digest.
    "runtime record": 4 * KIB,
}

#: One read's size while reading up to a bound.
_CHUNK = 64 * KIB


class StartFileError(ValueError):
    """A file read at start that cannot be used: exit 2 with this one line
    (it names the file and why, never its content); ``problem`` is the why."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")
        self.problem = problem


def _kind(mode: int) -> str:
    """What a file that is not regular is, for the diagnostic."""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a pipe"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def read_start_file(path: Path | str, limit: int, what: str, *, name_path: bool = True) -> bytes:
    """The bytes of the regular file ``path`` (symbolic links followed), at
    most ``limit`` of them (DECISIONS section 8).

    Raises ``FileNotFoundError`` when nothing is there (the caller decides
    whether absence is an error) and :class:`StartFileError` naming ``what``
    and ``path`` for a dangling link, anything but a regular file, a file
    larger than ``limit``, or an OS error. ``name_path=False`` names
    ``what`` alone (DEC-AUTH-3a: auth.json's path is never projected).
    """
    where = f"{what}: {os.fsdecode(path)}" if name_path else what
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError:
        if os.path.islink(path):
            raise StartFileError(where, "is a dangling symbolic link") from None
        raise
    except OSError as exc:
        raise StartFileError(where, _reason(exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise StartFileError(where, f"is {_kind(mode)}, not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise StartFileError(where, _reason(exc)) from None
    finally:
        os.close(fd)
    if size > limit:
        raise StartFileError(where, f"is larger than {limit} bytes")
    return b"".join(chunks)


def _reason(exc: OSError) -> str:
    """The OS error without the path (the line names it already)."""
    return os_error_line(OSError(exc.errno, exc.strerror or type(exc).__name__))
