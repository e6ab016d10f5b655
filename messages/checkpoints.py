"""File checkpoints and ``rewind_files`` (DEC-PROFILE-2): the sans-IO core.

With file checkpointing on (:func:`enabled`: the environment variable the
Agent SDKs set for ``enable_file_checkpointing``), every user message that
starts a turn is marked, and before the first change a file tool makes to a
file during that message, the file's prior state is kept: its bytes and
permission bits, or "it did not exist". Entries go, in order, to the session
store; this core decides what to keep (:func:`admit`), plans a rewind
(:func:`plan_rewind`), judges what is on disk now (:func:`judge`) and writes
the ``rewind_files`` answer in Claude Code's shape (``canRewind``, ``error``,
``filesChanged``, ``insertions``, ``deletions``).

Rewinding to message M restores every file changed since M began to its
state then: the earliest entry for that file at or after M's mark. Nothing
is ever claimed that cannot happen: a rewind that would need a state that
was not kept (past a bound, unreadable, not a regular file) or that crosses
the point where tracking stopped is refused whole, naming why.

Bounds: a kept state is at most :data:`MAX_FILE_BYTES` (the largest file
Edit takes), a session keeps at most :data:`MAX_SESSION_BYTES` of distinct
states and :data:`MAX_ENTRIES` entries. A file past a byte bound is changed
all the same and recorded as lost; past the entry bound one last entry says
tracking stopped, later messages are not marked, and rewinding across that
point is refused.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal

from msgspec import Struct

from agentx.messages.encode import fs_text
from agentx.messages.frozen import FrozenDict

#: The variable the Python and TypeScript Agent SDKs set for
#: ``enable_file_checkpointing`` / ``enableFileCheckpointing``.
ENABLE_VAR: Final = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"
#: Claude Code's switch that turns checkpointing off whatever else says.
DISABLE_VAR: Final = "CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING"
#: The settings key whose ``false`` (in any source) keeps it off.
SETTING: Final = "fileCheckpointingEnabled"

MAX_FILE_BYTES: Final = 16 * 1024 * 1024
MAX_SESSION_BYTES: Final = 256 * 1024 * 1024
MAX_ENTRIES: Final = 10_000
#: Paths named in one refusal, at most.
MAX_NAMED: Final = 10

NOT_ENABLED: Final = "File rewinding is not enabled."
NOT_FOUND: Final = "No file checkpoint found for this message."

_TRUE = frozenset({"1", "true", "yes", "on"})


def enabled(environ: Mapping[str, str], settings_values: Iterable[object]) -> bool:
    """Whether this session keeps checkpoints: the SDKs' variable is true,
    Claude Code's disabling variable is not, and no settings source says
    ``fileCheckpointingEnabled: false`` (``settings_values``: that key's
    value in each source that has it)."""
    if environ.get(DISABLE_VAR, "").strip().lower() in _TRUE:
        return False
    if any(value is False for value in settings_values):
        return False
    return environ.get(ENABLE_VAR, "").strip().lower() in _TRUE


# -- entries -------------------------------------------------------------------


class Mark(Struct, frozen=True):
    """A user message began (its uuid, as the replayed ``user`` record names it)."""

    message: str


class Kept(Struct, frozen=True, kw_only=True):
    """A file's state, absent (``digest`` None) or a regular file with these
    bytes and mode: before its first change by a file tool during
    ``message``, or (``start``) when ``message`` began."""

    message: str
    path: str
    digest: str | None = None
    size: int = 0
    mode: int = 0o644
    start: bool = False


class Lost(Struct, frozen=True, kw_only=True):
    """A file's state that was not kept (``reason``); ``size`` and
    ``mtime_ns`` (when it was a regular file) tell whether it is unchanged."""

    message: str
    path: str
    reason: str
    size: int | None = None
    mtime_ns: int | None = None
    start: bool = False


class Stopped(Struct, frozen=True):
    """Tracking stopped here (:data:`MAX_ENTRIES`)."""


Entry = Mark | Kept | Lost | Stopped

_MAX_MTIME_NS: Final = 2**63 - 1


def encode(entry: Entry) -> str:
    """One entry as one line of ASCII JSON (a path that is not UTF-8 keeps
    its escaped bytes)."""
    if isinstance(entry, Mark):
        doc: dict[str, Any] = {"kind": "message", "message": entry.message}
    elif isinstance(entry, Kept):
        doc = {"kind": "file", "message": entry.message, "path": entry.path}
        if entry.digest is not None:
            doc |= {"sha256": entry.digest, "size": entry.size, "mode": entry.mode}
    elif isinstance(entry, Lost):
        doc = {"kind": "lost", "message": entry.message, "path": entry.path}
        doc["reason"] = entry.reason
        if entry.size is not None and entry.mtime_ns is not None:
            doc |= {"size": entry.size, "mtime_ns": entry.mtime_ns}
    else:
        doc = {"kind": "stopped"}
    if isinstance(entry, Kept | Lost) and entry.start:
        doc["start"] = True
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":"))


class BadEntry(ValueError):
    """A stored entry that is not one this core writes."""


def _str(doc: Mapping[str, Any], name: str) -> str:
    value = doc.get(name)
    if not isinstance(value, str) or not value:
        raise BadEntry(f"{name} is not a non-empty string")
    return value


def _int(doc: Mapping[str, Any], name: str, upper: int) -> int:
    value = doc.get(name)
    if type(value) is not int or not 0 <= value <= upper:
        raise BadEntry(f"{name} is not an integer from 0 to {upper}")
    return value


_FILE = frozenset({"kind", "message", "path"})
_KEPT_BYTES = _FILE | {"sha256", "size", "mode"}
_LOST = _FILE | {"reason"}
_LOST_SEEN = _LOST | {"size", "mtime_ns"}


def decode(line: str) -> Entry:
    """Read back one stored entry; :class:`BadEntry` for any other shape."""
    try:
        doc = json.loads(line)
    except ValueError:
        raise BadEntry("not JSON") from None
    if not isinstance(doc, dict):
        raise BadEntry("not an object")
    start = doc.pop("start", False)
    if start is not True and start is not False:
        raise BadEntry("start is not a boolean")
    kind, members = doc.get("kind"), set(doc)
    if kind == "message" and members == {"kind", "message"} and not start:
        return Mark(_str(doc, "message"))
    if kind == "stopped" and members == {"kind"} and not start:
        return Stopped()
    if kind == "lost" and members in (_LOST, _LOST_SEEN):
        seen = members == _LOST_SEEN
        return Lost(
            message=_str(doc, "message"),
            path=_str(doc, "path"),
            reason=_str(doc, "reason"),
            size=_int(doc, "size", 2**63 - 1) if seen else None,
            mtime_ns=_int(doc, "mtime_ns", _MAX_MTIME_NS) if seen else None,
            start=start,
        )
    if kind == "file" and members == _FILE:
        return Kept(message=_str(doc, "message"), path=_str(doc, "path"), start=start)
    if kind == "file" and members == _KEPT_BYTES:
        digest = _str(doc, "sha256")
        if len(digest) != 64 or digest.strip("0123456789abcdef"):
            raise BadEntry("sha256 is not a SHA-256 in hex")
        return Kept(
            message=_str(doc, "message"),
            path=_str(doc, "path"),
            digest=digest,
            size=_int(doc, "size", MAX_FILE_BYTES),
            mode=_int(doc, "mode", 0o7777),
            start=start,
        )
    raise BadEntry("not a checkpoint entry")


# -- keeping ------------------------------------------------------------------


class Keep(Struct, frozen=True):
    """Keep the state (its bytes count against the session bound unless
    already kept)."""


class Lose(Struct, frozen=True):
    reason: str


class Stop(Struct, frozen=True):
    """The entry bound is reached: write :class:`Stopped`, keep nothing more."""


def admit(*, size: int, new_bytes: bool, used: int, entries: int) -> Keep | Lose | Stop:
    """Whether a prior state of ``size`` bytes may be kept (``new_bytes``:
    those bytes are not kept already) with ``used`` bytes and ``entries``
    entries in the session so far."""
    if entries >= MAX_ENTRIES:
        return Stop()
    if size > MAX_FILE_BYTES:
        return Lose(f"it was larger than {MAX_FILE_BYTES} bytes")
    if new_bytes and used + size > MAX_SESSION_BYTES:
        return Lose(f"the session's checkpoints already held {MAX_SESSION_BYTES} bytes")
    return Keep()


def admit_mark(entries: int) -> bool:
    """Whether another message may be marked (a full session marks none)."""
    return entries < MAX_ENTRIES


# -- rewinding ----------------------------------------------------------------


class Target(Struct, frozen=True, kw_only=True):
    """What one file goes back to: absent (``digest`` None), these bytes, or
    a state that was not kept (``lost``: only an unchanged file passes)."""

    path: str
    digest: str | None
    size: int = 0
    mode: int = 0o644
    lost: str | None = None
    mtime_ns: int | None = None


class Plan(Struct, frozen=True):
    targets: tuple[Target, ...]


class Refusal(Struct, frozen=True):
    error: str


def _named(paths: Sequence[str]) -> str:
    shown = ", ".join(fs_text(p) for p in paths[:MAX_NAMED])
    more = len(paths) - MAX_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _target(entry: Kept | Lost) -> Target:
    if isinstance(entry, Lost):
        return Target(
            path=entry.path,
            digest=None,
            size=entry.size or 0,
            lost=entry.reason,
            mtime_ns=entry.mtime_ns,
        )
    return Target(path=entry.path, digest=entry.digest, size=entry.size, mode=entry.mode)


def plan_rewind(entries: Sequence[Entry], message: str) -> Plan | Refusal:
    """The state each tracked file had when ``message`` began: the state
    kept as it began; else the last one kept before it (a file not kept
    again as a message begins had not changed since); else, for a file
    first changed later, its state before that first change."""
    start = next(
        (i for i, e in enumerate(entries) if isinstance(e, Mark) and e.message == message), None
    )
    if start is None:
        return Refusal(NOT_FOUND)
    if any(isinstance(e, Stopped) for e in entries[start:]):
        return Refusal(
            f"Checkpoints stopped after {MAX_ENTRIES} entries in this session; files "
            "changed after that cannot be restored, so nothing was rewound."
        )
    chosen: dict[str, Kept | Lost] = {}
    for entry in entries[:start]:
        if isinstance(entry, Kept | Lost):
            chosen[entry.path] = entry
    opening = True
    later: dict[str, Kept | Lost] = {}
    for entry in entries[start + 1 :]:
        if not isinstance(entry, Kept | Lost):
            opening = False
            continue
        if opening and entry.start:
            chosen[entry.path] = entry
            continue
        opening = False
        later.setdefault(entry.path, entry)
    for path, entry in later.items():
        chosen.setdefault(path, entry)
    return Plan(tuple(_target(entry) for entry in chosen.values()))


class Now(Struct, frozen=True, kw_only=True):
    """What is at a target's path now: ``absent``, a regular ``file`` (with
    its digest, mode, size and change time, and its bytes when read for the
    counts), or a path the restore must not touch (``refused``, with why)."""

    kind: Literal["absent", "file", "refused"]
    digest: str | None = None
    mode: int = 0
    size: int = 0
    mtime_ns: int = 0
    data: bytes | None = None
    why: str = ""


def line_counts(before: bytes | None, after: bytes | None) -> tuple[int, int]:
    """Lines added and removed going from ``before`` to ``after``, counted
    as multisets of lines (a line that only moved counts as neither)."""
    old = Counter((before or b"").splitlines())
    new = Counter((after or b"").splitlines())
    return sum((new - old).values()), sum((old - new).values())


def _unchanged(target: Target, now: Now) -> bool:
    if target.lost is not None:
        return now.kind == "file" and (now.size, now.mtime_ns) == (target.size, target.mtime_ns)
    if target.digest is None:
        return now.kind == "absent"
    return now.kind == "file" and (now.digest, now.mode) == (target.digest, target.mode)


def judge(items: Sequence[tuple[Target, Now]]) -> tuple[Target, ...] | Refusal:
    """The targets whose file differs from what is on disk now. A path the
    restore must not touch, or a changed file whose state was not kept,
    refuses the whole rewind, naming each."""
    blocked = [(t.path, now.why) for t, now in items if now.kind == "refused"]
    blocked += [
        (t.path, f"its earlier state was not kept: {t.lost}")
        for t, now in items
        if t.lost is not None and now.kind != "refused" and not _unchanged(t, now)
    ]
    if blocked:
        reasons = "; ".join(f"{fs_text(p)}: {why}" for p, why in blocked[:MAX_NAMED])
        return Refusal(
            f"Cannot rewind {_named([p for p, _ in blocked])} ({reasons}); nothing was rewound."
        )
    return tuple(target for target, now in items if not _unchanged(target, now))


def answer(changed: Sequence[str], insertions: int, deletions: int) -> FrozenDict:
    """``rewind_files``'s answer when the rewind can happen (or happened)."""
    return FrozenDict(
        canRewind=True,
        filesChanged=tuple(fs_text(path) for path in changed),
        insertions=insertions,
        deletions=deletions,
    )


def cannot(error: str, *, dry_run: bool) -> FrozenDict | str:
    """The answer when the rewind cannot happen, as Claude Code gives it: a
    dry run's success payload ``canRewind: false`` with the error; a real
    rewind's correlated error (so the Python SDK's ``rewind_files`` raises)."""
    return FrozenDict(canRewind=False, error=error) if dry_run else error


def rewind_request_problem(payload: Mapping[str, Any]) -> str | None:
    """``rewind_files``: a string ``user_message_id`` and an optional
    boolean (or null) ``dry_run``, as both SDKs send it."""
    if set(payload) - {"user_message_id", "dry_run"} or not isinstance(
        payload.get("user_message_id"), str
    ):
        return "rewind_files takes a string user_message_id and an optional boolean dry_run"
    if payload.get("dry_run") is not None and not isinstance(payload["dry_run"], bool):
        return "rewind_files takes a string user_message_id and an optional boolean dry_run"
    return None


__all__ = [
    "DISABLE_VAR",
    "ENABLE_VAR",
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "MAX_SESSION_BYTES",
    "NOT_ENABLED",
    "NOT_FOUND",
    "SETTING",
    "BadEntry",
    "Entry",
    "Keep",
    "Kept",
    "Lose",
    "Lost",
    "Mark",
    "Now",
    "Plan",
    "Refusal",
    "Stop",
    "Stopped",
    "Target",
    "admit",
    "admit_mark",
    "answer",
    "cannot",
    "decode",
    "enabled",
    "encode",
    "judge",
    "line_counts",
    "plan_rewind",
    "rewind_request_problem",
]
