"""``--session-mirror``: the session's transcript entries, mirrored to the
client as ``transcript_mirror`` frames (DEC-STORE-1, DEC-PROFILE-2; the frame
and its ``filePath`` are :mod:`agentx.messages.transcript_mirror`'s).

:class:`TranscriptMirror` takes every batch the session's transcript appends
(and a new session's header) and hands each to the writer as one frame; the
writer's barrier makes the batch durable in agentx's own store before the
frame's bytes leave (DEC-STORE-6: a failed barrier drops the frame with
everything else it held). Batches appended before the writer exists (the
session's setup) wait and leave first. Thread-safe.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agentx.config.start_files import StartFileError, read_start_file
from agentx.messages.frozen import FrozenDict
from agentx.messages.strict_json import StrictJSONError, loads_strict
from agentx.messages.transcript_mirror import mirror_frame, project_key
from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import SessionCorrupt, SessionNotFound, TranscriptRefused
from agentx.sessions.store.header import SessionHeader
from agentx.sessions.store.jsonl import Admit, first_refused

Emit = Callable[[tuple[FrozenDict, ...]], None]


def projects_dir(environ: Mapping[str, str]) -> Path:
    """Where the SDKs look for transcripts: ``$CLAUDE_CONFIG_DIR/projects``,
    else ``~/.claude/projects``."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    base = Path(configured) if configured else Path.home() / ".claude"
    return base / "projects"


def header_entry(header: SessionHeader) -> dict[str, Any]:
    """A session's header as its first mirrored entry (``sessions export``'s line)."""
    return {
        "type": "session_header",
        "session_id": header.session_id,
        "created_at": header.created_at.isoformat(),
        "provider": header.provider_id,
        "provider_type": header.provider_type,
        "model": header.model,
        "cwd": header.cwd,
    }


#: The largest transcript a resume reads back from the client's store.
MAX_MIRRORED_BYTES = 256 * 1024 * 1024


class TranscriptMirror:
    """One session's mirror; :meth:`attach` once the writer runs."""

    def __init__(self, *, projects: Path, cwd: Path) -> None:
        self._folder = projects / project_key(os.path.realpath(cwd))
        self._lock = threading.Lock()
        self._emit: Emit | None = None
        self._pending: list[FrozenDict] = []

    def file_path(self, session_id: str) -> str:
        return str(self._folder / f"{session_id}.jsonl")

    def add(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Mirror ``entries`` of session ``session_id`` (just appended)."""
        if not entries:
            return
        frame = mirror_frame(self.file_path(session_id), entries)
        with self._lock:
            emit = self._emit
            if emit is None:
                self._pending.append(frame)
                return
        emit((frame,))

    def add_header(self, header: SessionHeader, entries: Sequence[Mapping[str, Any]] = ()) -> None:
        """A session created here: its header first, then any entries it starts with."""
        self.add(header.session_id, [header_entry(header), *entries])

    def attach(self, emit: Emit) -> None:
        """The writer runs: what waited leaves now, in order, then each batch as it comes."""
        with self._lock:
            pending, self._pending = tuple(self._pending), []
            if pending:
                emit(pending)
            self._emit = emit


def import_mirrored(
    store: SessionStore,
    session_id: str,
    mirror: TranscriptMirror,
    *,
    route_binding: str,
    admit: Admit | None,
) -> None:
    """``--resume`` with ``--session-mirror`` when agentx's own store lacks
    the session: the transcript the SDK wrote back from its session store
    (at the mirror's ``filePath``, under the ``CLAUDE_CONFIG_DIR`` it
    points agentx at) is copied into the store first, so the resume reads
    it like any stored session (binding, shapes, DEC-STORE-1). The copy
    starts with the session's mirrored header; the route binding is the
    current provider's (the mirror never carries it), so provider, type and
    model must still match (WIRE-025). Without that file nothing happens
    and the resume fails as usual.

    Every line, the header's included, passes the persist guard ``admit``
    before anything is stored (DEC-AUTH-6: no configured credential is
    stored, whoever wrote the file): a refused line ends the resume, naming
    the line, with nothing of the session stored (:class:`TranscriptRefused`),
    never a transcript with a part left out. So does a line that would not
    read back (:class:`SessionCorrupt`)."""
    try:
        store.read(session_id)
        return  # agentx's own copy wins
    except SessionNotFound:
        pass
    path = Path(mirror.file_path(session_id))
    try:
        data = read_start_file(path, MAX_MIRRORED_BYTES, "--resume: the session store's transcript")
    except FileNotFoundError:
        return
    except StartFileError as exc:
        raise SessionCorrupt(str(exc)) from None
    numbered = _entries(data, path)
    entries = [entry for _, entry in numbered]
    try:
        refused = first_refused(entries, admit)
    except ValueError as exc:
        raise SessionCorrupt(f"{path}: the transcript cannot be stored ({exc})") from None
    if refused is not None:
        line = numbered[refused][0]
        raise TranscriptRefused(
            f"{path}: line {line} holds a configured credential; nothing of it was stored"
        )
    first = entries[0] if entries else {}
    if first.get("type") != "session_header" or first.get("session_id") != session_id:
        raise SessionCorrupt(f"{path}: the transcript does not begin with this session's header")
    try:
        header = SessionHeader(
            session_id=session_id,
            provider_id=first["provider"],
            provider_type=first["provider_type"],
            model=first["model"],
            route_binding=route_binding,
            created_at=datetime.fromisoformat(first["created_at"]),
            cwd=first["cwd"],
        )
    except (KeyError, TypeError, ValueError):
        raise SessionCorrupt(f"{path}: the session header cannot be read") from None
    store.create(header)
    if len(entries) > 1:
        store.append(session_id, entries[1:])


def _entries(data: bytes, path: Path) -> list[tuple[int, Mapping[str, Any]]]:
    """The file's entries, each with its line number (blank lines skipped)."""
    entries: list[tuple[int, Mapping[str, Any]]] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = loads_strict(line)
        except StrictJSONError:
            raise SessionCorrupt(f"{path}: line {number} is not one JSON object") from None
        if not isinstance(entry, Mapping):
            raise SessionCorrupt(f"{path}: line {number} is not one JSON object")
        entries.append((number, entry))
    return entries
