"""The process tree below agentx, as a value (DEC-EXIT-1, DECISIONS section 8).

A process group is not a boundary: ``setsid``, ``setsid -f``, a double fork
or ``nohup cmd &`` leave it, and the process they leave behind used to be
reparented to init, out of reach. The CLI therefore makes itself the child
subreaper of everything below it, so every such orphan is reparented to
agentx instead; this core decides, from one snapshot of ``/proc``, what to do
with them. The IO shell is ``agentx.tools.orphans``.

* :func:`parse_stat` reads one ``/proc/PID/stat`` line (the command name is
  parenthesised and may itself contain spaces and parentheses).
* :func:`descendants` lists every process below a root, parents before
  children, so signalling in that order leaves nothing a parent could fork
  after its turn.
* :func:`stale_zombies` picks the exited direct children that nobody in the
  process waits for. A child agentx started itself is *claimed* (its
  ``subprocess.Popen`` collects the status); any other child is reaped only
  once it has been seen exited for ``grace`` seconds, so a library that
  started a child itself (an MCP stdio server) and waits for it always wins
  the race for its status. Time is an argument; nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

from msgspec import Struct

#: The states of a process that has exited and awaits its parent's wait.
EXITED_STATES: Final = frozenset({"Z", "X"})


class ProcEntry(Struct, frozen=True):
    """One process of a snapshot: its id, its parent's and its state letter."""

    pid: int
    ppid: int
    state: str

    @property
    def exited(self) -> bool:
        return self.state in EXITED_STATES


def parse_stat(data: bytes) -> ProcEntry | None:
    """The entry of one ``/proc/PID/stat`` text; None when it is malformed.

    The command name sits between the first ``(`` and the *last* ``)``: a
    process may call itself ``a) Z 1 (`` to look like something else.
    """
    open_at = data.find(b"(")
    close_at = data.rfind(b")")
    if open_at <= 0 or close_at < open_at:
        return None
    fields = data[close_at + 1 :].split()
    try:
        pid = int(data[:open_at].strip())
        state = fields[0].decode("ascii")
        ppid = int(fields[1])
    except (IndexError, ValueError, UnicodeDecodeError):
        return None
    if len(state) != 1:
        return None
    return ProcEntry(pid=pid, ppid=ppid, state=state)


def descendants(entries: Iterable[ProcEntry], root: int) -> tuple[ProcEntry, ...]:
    """Every process below ``root`` (not ``root`` itself), parents first."""
    children: dict[int, list[ProcEntry]] = {}
    for entry in entries:
        if entry.pid != entry.ppid:
            children.setdefault(entry.ppid, []).append(entry)
    found: list[ProcEntry] = []
    seen = {root}
    level = [root]
    while level:
        below: list[int] = []
        for pid in level:
            for child in sorted(children.get(pid, ()), key=lambda e: e.pid):
                if child.pid not in seen:
                    seen.add(child.pid)
                    found.append(child)
                    below.append(child.pid)
        level = below
    return tuple(found)


class ZombieSweep(Struct, frozen=True):
    """What one sweep decided: the pids to reap now, and when each exited
    child not yet reaped was first seen exited (the next sweep's ``seen``)."""

    reap: tuple[int, ...]
    seen: Mapping[int, float]


def stale_zombies(
    entries: Iterable[ProcEntry],
    *,
    own_pid: int,
    claimed: frozenset[int],
    seen: Mapping[int, float],
    now: float,
    grace: float,
) -> ZombieSweep:
    """The exited, unclaimed direct children of ``own_pid`` first seen exited
    at least ``grace`` seconds before ``now``; see the module docstring."""
    reap: list[int] = []
    still: dict[int, float] = {}
    for entry in entries:
        if entry.ppid != own_pid or not entry.exited or entry.pid in claimed:
            continue
        first = seen.get(entry.pid, now)
        if now - first >= grace:
            reap.append(entry.pid)
        else:
            still[entry.pid] = first
    return ZombieSweep(reap=tuple(sorted(reap)), seen=still)
