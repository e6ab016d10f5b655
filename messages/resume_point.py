"""Resuming at a message: ``--resume-session-at`` and ``--resume-drops-turn``
(DEC-CLI-5, DEC-STORE-1), as Claude Code and its SDKs mean them.

``--resume-session-at UUID`` loads the stored conversation only up to and
including the entry with that uuid (a message's, whatever its role, or a
compaction boundary's); the bookkeeping entries right behind it (the turn
ledger's ``turn`` and ``permission`` entries, which close what was kept) stay
with it. With ``--fork-session`` the kept entries are copied into the new
session. Without, the session goes on under its own id: the store is
append-only, so a ``resume_point`` entry ``{"type": "resume_point", "uuid":
ID, "at": UUID}`` records the cut, and every reader applies the cuts in
order (:func:`rewound`) before it reads the history, so a later resume sees
the rewound branch, as Claude Code's own resume follows the newest branch.

``--resume-drops-turn PROMPT`` (only with ``--resume-session-at``) names the
user prompt whose turn the cut discards; the resume is refused unless every
entry after the cut belongs to that turn: the first message after it is that
prompt (by its uuid), and nothing follows the turn's own end (its ``turn``
ledger entry). A refusal is one line beginning ``Resume rejected by
--resume-drops-turn:`` (the SDKs document that text) and exit status 2.

Sans-IO; the problems never quote a stored value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentx.messages.session_ledger import LEDGER_ENTRIES, TURN_ENTRY, LedgerError

#: The entry type of a cut made by a resume without a fork.
RESUME_POINT = "resume_point"
#: The SDKs match a refusal on this text (``ClaudeAgentOptions.resume_drops_turn``).
DROPS_TURN_REFUSAL = "Resume rejected by --resume-drops-turn:"


class ResumePointError(LedgerError):
    """The cut cannot be made; the message is one credential-free sentence
    (a :class:`LedgerError`: the readers of the ledger report it alike)."""


def resume_point_entry(*, uuid: str, at: str) -> dict[str, Any]:
    """The entry a resume without a fork appends to record its cut."""
    return {"type": RESUME_POINT, "uuid": uuid, "at": at}


def rewound(entries: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    """The entries with every recorded cut applied, in order; a cut that
    names no entry before it raises :class:`ResumePointError`."""
    if not any(entry.get("type") == RESUME_POINT for entry in entries):
        return tuple(entries)
    kept: list[Mapping[str, Any]] = []
    for entry in entries:
        if entry.get("type") != RESUME_POINT:
            kept.append(entry)
            continue
        index = _index_of(kept, entry.get("at"))
        if index is None:
            raise ResumePointError("a resume point names no earlier entry")
        del kept[_end_of(kept, index) :]
    return tuple(kept)


def cut(
    entries: Sequence[Mapping[str, Any]], at: str, drops_turn: str | None = None
) -> tuple[Mapping[str, Any], ...]:
    """The entries up to and including ``at`` (and the ledger entries right
    behind it), checked against ``drops_turn`` when given."""
    index = _index_of(entries, at)
    if index is None:
        raise ResumePointError(
            "--resume-session-at: no message of the session has this uuid "
            "(an assistant or user message's uuid, as the SDK reported it)"
        )
    end = _end_of(entries, index)
    if drops_turn is not None:
        problem = _not_only_the_turn(entries[end:], drops_turn)
        if problem is not None:
            raise ResumePointError(f"{DROPS_TURN_REFUSAL} {problem}")
    return tuple(entries[:end])


def _index_of(entries: Sequence[Mapping[str, Any]], at: object) -> int | None:
    """The last entry whose ``uuid`` is ``at`` (never a ledger entry)."""
    if not isinstance(at, str) or not at:
        return None
    for index in range(len(entries) - 1, -1, -1):
        entry = entries[index]
        if entry.get("uuid") == at and entry.get("type") not in LEDGER_ENTRIES:
            return index
    return None


def _end_of(entries: Sequence[Mapping[str, Any]], index: int) -> int:
    end = index + 1
    while end < len(entries) and entries[end].get("type") in LEDGER_ENTRIES:
        end += 1
    return end


def _is_prompt(entry: Mapping[str, Any]) -> bool:
    """A user message that is not only tool results."""
    if entry.get("type") != "message" or entry.get("role") != "user":
        return False
    content = entry.get("content")
    blocks = content if isinstance(content, Sequence) and not isinstance(content, str) else ()
    return not all(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in blocks)


def _not_only_the_turn(rest: Sequence[Mapping[str, Any]], prompt: str) -> str | None:
    """Why the entries after the cut are not all the dropped turn's, or None."""
    if not rest:
        return None
    first = rest[0]
    if not _is_prompt(first) or first.get("uuid") != prompt:
        return (
            "the first entry after the resume point is not the prompt it names "
            "(the discarded range holds something the caller has not seen)"
        )
    ended = False
    for entry in rest[1:]:
        if ended:
            return (
                "the session went on after the named turn ended "
                "(a later turn or queued message would be discarded too)"
            )
        ended = entry.get("type") == TURN_ENTRY
    return None
