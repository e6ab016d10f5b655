"""Loading the memory files (DEC-SET-1 sources, ``--setting-sources``).

Claude Code's locations, each read when its source is selected:

- ``user``: ``~/.claude/CLAUDE.md``;
- ``project``: ``<cwd>/CLAUDE.md``, ``<cwd>/.claude/CLAUDE.md``, ``<cwd>/AGENTS.md``
  (the cross-tool convention);
- ``local``: ``<cwd>/CLAUDE.local.md``.

Each is read with :func:`~agentx.config.start_files.read_start_file`: a
regular file of at most ``START_FILE_LIMITS["memory file"]`` bytes, opened
without blocking, so a FIFO or a huge file is refused before a byte is
loaded. A file that is absent is skipped; one that cannot be used is skipped
with one WARNING line, and the session goes on (memory is optional
context). The text is decoded as UTF-8 (bad bytes replaced); it is data for
the model (:mod:`agentx.messages.memory_block`), never read by the host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file
from agentx.messages.memory_block import MemoryFile, MemoryKind


def memory_paths(cwd: Path, user_home: Path) -> tuple[tuple[MemoryKind, Path], ...]:
    """Every location, in the order the block shows them (broad to narrow)."""
    return (
        ("user", user_home / ".claude" / "CLAUDE.md"),
        ("project", cwd / "CLAUDE.md"),
        ("project", cwd / ".claude" / "CLAUDE.md"),
        ("project", cwd / "AGENTS.md"),
        ("local", cwd / "CLAUDE.local.md"),
    )


def load_memory(
    cwd: Path, user_home: Path, sources: Iterable[str], warn: Callable[[str], None]
) -> tuple[MemoryFile, ...]:
    """The memory files of the selected sources that could be read."""
    wanted = set(sources)
    limit = START_FILE_LIMITS["memory file"]
    found: list[MemoryFile] = []
    for kind, path in memory_paths(cwd, user_home):
        if kind not in wanted:
            continue
        try:
            data = read_start_file(path, limit, "memory file")
        except FileNotFoundError:
            continue
        except StartFileError as exc:
            warn(f"{exc}; it is left out of the model's context")
            continue
        found.append(MemoryFile(str(path), kind, data.decode("utf-8", errors="replace")))
    return tuple(found)
