"""Opening the durable session before the protocol starts (DEC-STORE-1,
WIRE-025, DEC-AUTH-5).

``--resume ID`` reopens a stored session: its header must match the frozen
provider selection exactly (id, type, model and the opaque route binding) or
start-up fails closed before any replay or provider I/O. ``--continue``
(DEC-CLI-5) resumes the newest session started in this cwd the same way, and
starts a new session when there is none. ``--session-id UUID`` names a new
session. Either way the history is rebuilt as prior context only (relinked
across compaction boundaries, WIRE-005), and every later turn is appended, and
fsynced before its result leaves (group commit: :class:`StoredTranscript`).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from msgspec import Struct
from msgspec.structs import replace

from agentx.config.home import os_error_line
from agentx.config.registry import ProviderDescriptor, route_binding
from agentx.diagnostics import logger
from agentx.messages.encode import fs_key
from agentx.messages.frozen import FrozenDict
from agentx.messages.session_ledger import LedgerError, StoredTurn, stored_turns
from agentx.sessions.store.base import SessionStore, SessionTaken
from agentx.sessions.store.errors import (
    InvalidSessionId,
    SessionBusy,
    SessionCorrupt,
    SessionError,
    SessionExists,
    SessionNotFound,
    TranscriptRefused,
)
from agentx.sessions.store.files import TRANSCRIPT_FILE_NAME
from agentx.sessions.store.files import SessionStore as FileStore
from agentx.sessions.store.header import SessionHeader, check_binding, validate_session_id
from agentx.sessions.store.jsonl import Admit, first_refused
from agentx.sessions.store.select import open_store
from agentx.sessions.transcript import Recorded, TranscriptError, from_entries

if TYPE_CHECKING:
    from agentx.media.blobs import Blobs
    from agentx.sessions.mirror import TranscriptMirror


class SessionSetupError(ValueError):
    """Start-up refused: exit 2 with this credential-free message."""


class StoredTranscript:
    """The session's durable transcript (the turn engine's ``TranscriptSink``).

    Appends come from the turn worker thread and are written at once;
    :meth:`sync` (the writer actor's barrier before output bytes leave) makes
    them durable, one ``fsync`` for every append since the last. The file is
    opened (and locked against a second writer) at construction and stays
    open until :meth:`close`.
    :meth:`start_new` is ``/clear``: a new session directory bound like this
    one (Claude Code starts a new session file); the old transcript is synced
    and closed first, later appends go to the new one, and the old one stays
    resumable.

    ``admit`` is the output guard's check (DEC-AUTH-6): a batch holding
    anything the guard would refuse to show is never written. With
    ``owns_store`` :meth:`close` closes the store too (its connections).
    An append that finds the session taken by another process
    (:class:`~agentx.sessions.store.base.SessionTaken`) fails its turn and
    calls the :meth:`on_taken` callback, which ends the session (exit 4).
    A failed barrier (DEC-STORE-6) is latched: :meth:`sync` answers False
    from then on, so the writer drops every frame it held and holds later,
    and the :meth:`on_failed` callback (once) ends the session (exit 4, one
    ERROR line naming the store's error).
    """

    def __init__(
        self,
        store: SessionStore,
        header: SessionHeader,
        *,
        cwd: str,
        admit: Admit | None = None,
        owns_store: bool = False,
        mirror: TranscriptMirror | None = None,
    ) -> None:
        self._store = store
        #: ``--session-mirror``: every appended batch also goes to the client.
        self._mirror = mirror
        self._header = header
        self._cwd = cwd
        self._admit = admit
        self._owns_store = owns_store
        self._appender = store.appender(header.session_id, admit=admit)
        self._taken: Callable[[], None] | None = None
        self._on_failed: Callable[[str], None] | None = None
        self._once = threading.Lock()
        #: The store's error once a barrier failed (DEC-STORE-6).
        self._failed: str | None = None

    def on_taken(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (once) when another process took the session."""
        self._taken = callback

    def on_failed(self, callback: Callable[[str], None]) -> None:
        """Call ``callback`` (once) with the store's error when a barrier
        fails (DEC-STORE-6); without one the error is logged here."""
        self._on_failed = callback

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        if self._failed is not None:
            raise SessionError(f"the session store failed: {self._failed}")
        try:
            self._appender.append(entries)
        except SessionTaken:
            taken, self._taken = self._taken, None
            if taken is not None:
                taken()
            raise
        if self._mirror is not None:
            self._mirror.add(self._header.session_id, entries)

    def mirror_to(self, emit: Callable[[tuple[FrozenDict, ...]], None]) -> None:
        """``--session-mirror``: the writer takes the frames from now on."""
        if self._mirror is not None:
            self._mirror.attach(emit)

    def sync(self) -> bool:
        """The output barrier: never raises. True when every append so far is
        durable; False once a ``fsync`` or commit failed (DEC-STORE-6: what the
        caller holds is not stored and must never be acknowledged)."""
        if self._failed is not None:
            return False
        try:
            self._appender.sync()
        except OSError as exc:
            self._fail(f"the transcript could not be made durable: {os_error_line(exc)}")
        except SessionError as exc:
            self._fail(str(exc))
        return self._failed is None

    def _fail(self, reason: str) -> None:
        with self._once:
            if self._failed is not None:
                return
            self._failed = reason
        if self._on_failed is not None:
            self._on_failed(reason)
        else:
            logger.error("session store: {}; nothing after it is acknowledged", reason)

    def start_new(self, session_id: str) -> None:
        header = replace(
            self._header, session_id=session_id, created_at=datetime.now(UTC), cwd=self._cwd
        )
        if not self.sync():  # the old transcript's barrier (DEC-STORE-6)
            raise SessionError(f"the session store failed: {self._failed}")
        self._store.create(header)
        appender = self._store.appender(session_id, admit=self._admit)
        self._appender.close()
        self._appender = appender
        self._header = header
        if self._mirror is not None:
            self._mirror.add_header(header)

    def close(self) -> None:
        """Sync and close (the host's last step; a failure is reported like
        any barrier's, DEC-STORE-6)."""
        self.sync()
        try:
            self._appender.close()
        except SessionError as exc:
            if self._failed is None:
                logger.error("session transcript: close failed ({})", exc)
        finally:
            if self._owns_store:
                self._store.close()


class ResumeAt(Struct, frozen=True, kw_only=True):
    """DEC-CLI-5 ``--resume-session-at`` and ``--resume-drops-turn``."""

    message: str
    drops_turn: str | None = None


class OpenedSession(Struct, frozen=True, kw_only=True):
    session_id: str
    history: tuple[Recorded, ...]
    transcript: StoredTranscript | None
    #: The resumed session's stored turns (``/cost`` after ``--resume``).
    turns: tuple[StoredTurn, ...] = ()


def open_session(
    *,
    home: Path,
    desc: ProviderDescriptor,
    blobs: Blobs,
    resume: str | None,
    session_id: str | None,
    cwd: Path,
    continue_: bool = False,
    persistent: bool = True,
    admit: Admit | None = None,
    store_url: str | None = None,
    fork: bool = False,
    at: ResumeAt | None = None,
    mirror: TranscriptMirror | None = None,
) -> OpenedSession:
    """Open or create the session in the store ``store_url`` names (the
    home's files for ``None``, DEC-STORE-1); ``persistent=False`` keeps
    nothing and opens no store. ``fork`` (``--fork-session``, with
    ``--resume`` or ``--continue``): the resumed session is read, not taken,
    and its entries are copied into a new session (``session_id`` or a new
    id) that this process continues; the original is left as it was.
    ``at`` (with a resume) keeps the stored conversation only up to a message:
    a fork copies just that much; otherwise a ``resume_point`` entry records
    the cut in the session itself (:mod:`agentx.messages.resume_point`).
    ``mirror`` (``--session-mirror``) mirrors a new session's header and
    every entry appended from here on (a fork's copied entries included).

    Every failure is one :class:`SessionSetupError` line; a file-system
    failure names the path and the OS error (DECISIONS section 8); nothing
    names the store URL (DEC-AUTH-3).
    """
    if not persistent:
        chosen = validate_session_id(session_id) if session_id else str(uuid.uuid4())
        return OpenedSession(session_id=chosen, history=(), transcript=None)
    binding = route_binding(desc)
    flag = "--resume" if resume is not None else "--session-id"
    if continue_:
        flag = "--continue"
    try:
        store = open_store(store_url, home)
    except SessionError as exc:
        raise SessionSetupError(f"session store: {exc}") from None
    except OSError as exc:
        raise SessionSetupError(f"session store: {os_error_line(exc)}") from None
    try:
        opened = _open(
            store,
            desc,
            blobs=blobs,
            resume=resume,
            session_id=session_id,
            cwd=cwd,
            flag=flag,
            binding=binding,
            admit=admit,
            fork=fork,
            at=at,
            mirror=mirror,
        )
    except BaseException:
        store.close()
        raise
    return opened


def _resume(
    store: SessionStore,
    desc: ProviderDescriptor,
    resume: str,
    *,
    blobs: Blobs,
    flag: str,
    binding: str,
    fork: bool = False,
    at: ResumeAt | None = None,
) -> tuple[SessionHeader, tuple[Recorded, ...], tuple[StoredTurn, ...], tuple[FrozenDict, ...]]:
    """Open the stored session and replay it, once its binding matches
    ``desc`` exactly (WIRE-025: checked before any replay); a ``fork`` only
    reads it. Also returns the entries the history was read from (a fork
    copies them): every recorded cut applied, then ``at``'s."""
    validate_session_id(resume)
    stored = store.read(resume) if fork else store.open(resume)
    mismatch = check_binding(
        stored.header,
        provider_id=desc.id,
        provider_type=desc.type,
        model=desc.model,
        route_binding=binding,
    )
    if mismatch is not None:
        differs = mismatch.replace("_", " ")
        raise SessionSetupError(
            f"{flag}: the session is bound to another provider (its {differs} differs); "
            "resume it with the --provider it was started with"
        )
    # DEC-STORE-1: every stored entry's shape before any is replayed (loaded
    # by a resume only: DEC-CLI-3's start path stays as it was).
    from agentx.messages.transcript_shape import first_problem  # noqa: PLC0415

    if (problem := first_problem(stored.entries)) is not None:
        index, why = problem
        raise SessionSetupError(
            f"{flag}: session {resume} in {store.location}: {stored.place(index)} of its "
            f"transcript cannot be replayed ({why})"
        )
    entries = _read_point(stored.entries, at, flag=flag, session=resume, location=store.location)
    history = tuple(from_entries(entries, blobs.read))
    return stored.header, history, stored_turns(entries), entries


def _read_point(
    stored: tuple[FrozenDict, ...],
    at: ResumeAt | None,
    *,
    flag: str,
    session: str,
    location: str,
) -> tuple[FrozenDict, ...]:
    """DEC-CLI-5 ``--resume-session-at``: the stored entries with every cut
    already recorded applied, then cut at ``at`` (checked against
    ``--resume-drops-turn``); loaded only by a resume."""
    from agentx.messages.resume_point import ResumePointError, cut, rewound  # noqa: PLC0415

    try:
        entries = rewound(stored)
    except ResumePointError as exc:
        raise SessionSetupError(
            f"{flag}: session {session} in {location} cannot be replayed ({exc})"
        ) from None
    if at is not None:
        try:
            entries = cut(entries, at.message, at.drops_turn)
        except ResumePointError as exc:
            raise SessionSetupError(str(exc)) from None
    return cast(tuple[FrozenDict, ...], entries)


def _open(
    store: SessionStore,
    desc: ProviderDescriptor,
    *,
    blobs: Blobs,
    resume: str | None,
    session_id: str | None,
    cwd: Path,
    flag: str,
    binding: str,
    admit: Admit | None,
    fork: bool = False,
    at: ResumeAt | None = None,
    mirror: TranscriptMirror | None = None,
) -> OpenedSession:
    """The resume (binding checked before any replay), its fork, or the new session."""
    try:
        if flag == "--continue":
            resume = store.newest(fs_key(str(cwd)))
        if resume is not None and mirror is not None and flag == "--resume":
            # DEC-STORE-1: the session the SDK loaded from its session_store.
            from agentx.sessions.mirror import import_mirrored  # noqa: PLC0415

            import_mirrored(
                store, validate_session_id(resume), mirror, route_binding=binding, admit=admit
            )
        if resume is not None:
            header, history, turns, entries = _resume(
                store, desc, resume, blobs=blobs, flag=flag, binding=binding, fork=fork, at=at
            )
            if fork:
                header = replace(
                    header,
                    session_id=validate_session_id(session_id) if session_id else str(uuid.uuid4()),
                    created_at=datetime.now(UTC),
                    cwd=fs_key(str(cwd)),
                )
                # DEC-AUTH-6: the copy passes the persist guard before
                # anything of it is stored (entries stored before a
                # credential was configured hold it now).
                if first_refused(entries, admit) is not None:
                    raise TranscriptRefused(
                        f"session {resume} holds a configured credential; the fork copied nothing"
                    )
                store.create(header)
                if entries:
                    store.append(header.session_id, entries)
                if mirror is not None:
                    mirror.add_header(header, entries)
        else:
            header = SessionHeader(
                session_id=validate_session_id(session_id) if session_id else str(uuid.uuid4()),
                provider_id=desc.id,
                provider_type=desc.type,
                model=desc.model,
                route_binding=binding,
                created_at=datetime.now(UTC),
                cwd=fs_key(str(cwd)),
            )
            store.create(header)
            history, turns = (), ()
            if mirror is not None:
                mirror.add_header(header)
        transcript = StoredTranscript(
            store, header, cwd=fs_key(str(cwd)), admit=admit, owns_store=True, mirror=mirror
        )
        if at is not None and not fork:
            _record_cut(transcript, at)
    except SessionBusy:
        raise SessionSetupError(f"{flag}: the session is open in another agentx process") from None
    except SessionError as exc:
        raise SessionSetupError(f"{flag}: {_sentence(exc, store.location)}") from None
    except (TranscriptError, LedgerError, KeyError):
        path = Path(store.location) / str(resume) / TRANSCRIPT_FILE_NAME
        if not isinstance(store, FileStore):
            path = Path(f"session {resume} of {store.location}")
        raise SessionSetupError(
            f"{flag}: {path}: the stored transcript cannot be replayed"
        ) from None
    except OSError as exc:
        raise SessionSetupError(f"session store: {os_error_line(exc)}") from None
    return OpenedSession(
        session_id=header.session_id, history=history, transcript=transcript, turns=turns
    )


def _record_cut(transcript: StoredTranscript, at: ResumeAt) -> None:
    """A resume at a message without a fork: the cut is an entry of the
    session, made durable before the protocol starts (every later reader
    applies it, DEC-STORE-1)."""
    from agentx.messages.resume_point import resume_point_entry  # noqa: PLC0415

    transcript.append([resume_point_entry(uuid=str(uuid.uuid4()), at=at.message)])
    if not transcript.sync():
        raise SessionError("the resume point could not be stored")


#: ``agentx --resume 123e4567-...``: the shape a session id must have.
_UUID_EXAMPLE = "123e4567-e89b-12d3-a456-426614174000"


def _sentence(exc: SessionError, location: str) -> str:
    """A session-store failure as a sentence (DECISIONS section 8: exit 2)."""
    if isinstance(exc, InvalidSessionId):
        return f"a session id is a UUID in lower case with hyphens, like {_UUID_EXAMPLE}"
    if isinstance(exc, SessionNotFound):
        return f"no stored session has this id in {location}"
    if isinstance(exc, SessionExists):
        return "a session with this id exists already; resume it with --resume"
    if isinstance(exc, SessionCorrupt):
        return f"the stored session cannot be read ({exc})"
    if isinstance(exc, TranscriptRefused):
        return f"{exc} (DEC-AUTH-6)"
    return "the session store failed"
