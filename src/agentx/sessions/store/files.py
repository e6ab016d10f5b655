"""The durable session store (DEC-HOME-1 ``sessions/``, WIRE-025, DEC-STORE-1).

A session lives at ``<root>/<session_id>/`` (``root`` is
``$AGENTX_HOME/sessions``) and holds two files:

- ``header.json``: the provider id, type, model and opaque route binding
  (DEC-AUTH-5) the session was created with, and the working directory
  (``cwd``, what ``--continue`` matches; absent in headers written before
  it existed, which stay readable), written once. The directory is
  built under a temporary name and renamed into place, so a session either
  exists with its header or does not exist at all.
- ``transcript.jsonl``: the append-only conversation (user, assistant, tool
  results, compaction boundaries, committed attachment manifests), one JSON
  object per ``\\n``-terminated line.

Durability: :class:`TranscriptAppender` writes a batch with one ``os.write``
of the joined lines and makes everything appended so far durable with one
``os.fsync`` when :meth:`~TranscriptAppender.sync` is called: the host syncs
before any output byte leaves (group commit), so a result that depends on a
batch is written only after the batch is on disk. A crash leaves a
readable prefix: a torn last line (no final newline, or undecodable) is
dropped with a WARN and never parsed as data; an undecodable line before the
last is :class:`SessionCorrupt`. Lines are split on the byte ``\\n`` alone and
decoded with the strict decoder (DECISIONS section 1).

Resume fails closed (WIRE-025): :func:`check_binding` names the first of
provider id, type, model or route binding that differs from the header.

One process writes a session at a time; any number of readers may read it
while it is written and each sees a prefix of the appended entries.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import tempfile
import threading
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from loguru import logger

from agentx.config.home import private_dirs, with_path
from agentx.media.blobs import sweep_stale
from agentx.messages.frozen import FrozenDict
from agentx.messages.strict_json import StrictJSONError, loads_strict

#: The store's directory inside the AgentX home (DEC-HOME-1).
SESSIONS_DIR_NAME = "sessions"
HEADER_FILE_NAME = "header.json"
TRANSCRIPT_FILE_NAME = "transcript.jsonl"
HEADER_VERSION = 1

_TEMP_PREFIX = ".partial-"
_HEADER_MEMBERS = frozenset(
    {
        "version",
        "session_id",
        "provider_id",
        "provider_type",
        "model",
        "route_binding",
        "created_at",
    }
)
#: Optional header members (a header without them is still version 1).
_OPTIONAL_HEADER_MEMBERS = frozenset({"cwd"})


class SessionError(Exception):
    """Base of the store's errors; messages never carry entry content."""


class InvalidSessionId(SessionError, ValueError):
    """The session id is not a canonical UUID (checked before any path is built)."""


class SessionNotFound(SessionError, KeyError):
    """No session has this id."""


class SessionExists(SessionError):
    """A session with this id was already created."""


class SessionCorrupt(SessionError):
    """The header is unreadable or a line before the last is undecodable."""


class SessionBusy(SessionError):
    """Another appender (in this or another process) holds the session."""


class TranscriptRefused(SessionError):
    """A batch holds something the output guard would refuse to show
    (DEC-AUTH-6: nothing the guard refused is persisted); nothing was written."""


#: Checks one encoded batch: True when it may be persisted (the output
#: guard's credential validator, :class:`agentx.messages.guard.CredentialValidator`).
Admit = Callable[[bytes], bool]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionHeader:
    """What a session is bound to (WIRE-025, DEC-AUTH-5).

    ``route_binding`` is the opaque sha256 hex of the provider route; it is
    stored and compared, never emitted (kept out of ``repr``).
    """

    session_id: str
    provider_id: str
    provider_type: str
    model: str
    route_binding: str = field(repr=False)
    created_at: datetime
    #: The working directory the session was started in (DEC-CLI-5 ``--continue``).
    cwd: str | None = None

    def __post_init__(self) -> None:
        validate_session_id(self.session_id)
        if self.created_at.tzinfo is None:
            raise ValueError("created_at must be timezone-aware")


@dataclass(frozen=True, slots=True, kw_only=True)
class Transcript:
    """A session read back: its header and the decoded entries, in order.

    ``torn`` says a torn last line was found and dropped.
    """

    header: SessionHeader
    entries: tuple[FrozenDict, ...]
    torn: bool


def validate_session_id(session_id: str) -> str:
    """Return ``session_id`` if it is a canonical (lowercase, hyphenated) UUID.

    Run before any path is built, so an id can never name a path outside the
    store (``..``, separators, NUL).
    """
    try:
        canonical = str(uuid.UUID(session_id))
    except (ValueError, TypeError, AttributeError):
        raise InvalidSessionId("session id is not a UUID") from None
    if canonical != session_id:
        raise InvalidSessionId("session id is not a canonical UUID")
    return session_id


def check_binding(
    header: SessionHeader,
    *,
    provider_id: str,
    provider_type: str,
    model: str,
    route_binding: str,
) -> str | None:
    """WIRE-025: the first of ``provider_id``, ``provider_type``, ``model`` or
    ``route_binding`` that differs from the recorded header, else ``None``.

    Only the field name is returned, never a value: resume fails closed with
    a credential-free reason.
    """
    recorded = (
        ("provider_id", header.provider_id, provider_id),
        ("provider_type", header.provider_type, provider_type),
        ("model", header.model, model),
        ("route_binding", header.route_binding, route_binding),
    )
    for name, stored, offered in recorded:
        if stored != offered:
            return name
    return None


def encode_entries(entries: Sequence[Mapping[str, Any]]) -> bytes:
    """The batch as ``\\n``-terminated UTF-8 lines, refusing anything the
    strict reader would not read back identically (non-finite numbers, lone
    surrogates, non-string or colliding member names)."""
    lines: list[bytes] = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise ValueError("a transcript entry must be a JSON object")
        try:
            line = json.dumps(
                entry, ensure_ascii=False, allow_nan=False, separators=(",", ":")
            ).encode("utf-8")
        except (TypeError, ValueError, RecursionError):
            raise ValueError("a transcript entry is not JSON-encodable") from None
        try:
            loads_strict(line)
        except StrictJSONError as error:
            raise ValueError(f"a transcript entry would not read back: {error.reason}") from None
        lines.append(line)
    lines.append(b"")
    return b"\n".join(lines)


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    while written < len(data):
        written += os.write(fd, data[written:])


def _lock_exclusive(fd: int) -> None:
    """Hold the transcript for this descriptor, or :class:`SessionBusy`."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SessionBusy("the session is open in another agentx process") from None


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _header_bytes(header: SessionHeader) -> bytes:
    document = {
        "version": HEADER_VERSION,
        "session_id": header.session_id,
        "provider_id": header.provider_id,
        "provider_type": header.provider_type,
        "model": header.model,
        "route_binding": header.route_binding,
        "created_at": header.created_at.isoformat(),
    }
    if header.cwd is not None:
        document["cwd"] = header.cwd
    return json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"


def _parse_header(data: bytes, session_id: str) -> SessionHeader:
    try:
        document = loads_strict(data)
    except StrictJSONError as error:
        raise SessionCorrupt(f"session header: {error.reason}") from None
    if not isinstance(document, FrozenDict) or not (
        _HEADER_MEMBERS <= set(document) <= _HEADER_MEMBERS | _OPTIONAL_HEADER_MEMBERS
    ):
        raise SessionCorrupt("session header: wrong members")
    if document["version"] != HEADER_VERSION:
        raise SessionCorrupt("session header: unsupported version")
    text_members = set(document) - {"version"}
    if not all(isinstance(document[name], str) for name in text_members):
        raise SessionCorrupt("session header: a member is not a string")
    if document["session_id"] != session_id:
        raise SessionCorrupt("session header: belongs to another session")
    try:
        return SessionHeader(
            session_id=document["session_id"],
            provider_id=document["provider_id"],
            provider_type=document["provider_type"],
            model=document["model"],
            route_binding=document["route_binding"],
            created_at=datetime.fromisoformat(document["created_at"]),
            cwd=document.get("cwd"),
        )
    except ValueError:
        raise SessionCorrupt("session header: bad created_at") from None


def parse_transcript(data: bytes) -> tuple[tuple[FrozenDict, ...], int | None]:
    """Decode transcript bytes into entries.

    Returns the entries and, when the last line is torn (no final newline,
    or undecodable), the byte length of the intact prefix; else ``None``.
    Raises :class:`SessionCorrupt` for an undecodable line before the last.
    """
    lines = data.split(b"\n")
    # The piece after the last newline: empty for a well-formed file.
    tail = lines.pop()
    entries: list[FrozenDict] = []
    offset = 0
    last = len(lines) - 1
    for number, line in enumerate(lines):
        try:
            entry = loads_strict(line)
        except StrictJSONError as error:
            if number == last and not tail:
                return tuple(entries), offset
            raise SessionCorrupt(f"transcript line {number + 1}: {error.reason}") from None
        if not isinstance(entry, FrozenDict):
            raise SessionCorrupt(f"transcript line {number + 1}: not a JSON object")
        entries.append(entry)
        offset += len(line) + 1
    return tuple(entries), (offset if tail else None)


class SessionStore:
    """Sessions under ``root`` (``$AGENTX_HOME/sessions``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        private_dirs(self.root)
        sweep_stale(self.root, _TEMP_PREFIX)

    def _dir(self, session_id: str) -> Path:
        return self.root / validate_session_id(session_id)

    def create(self, header: SessionHeader) -> None:
        """Create the session with ``header`` and an empty transcript.

        The directory is assembled under ``.partial-<pid>-...``, fsynced and
        renamed into place, so a crash never leaves a session without its
        header. Raises :class:`SessionExists` if the id is taken.
        """
        final = self._dir(header.session_id)
        if final.exists():
            raise SessionExists("session already exists")
        staging = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{os.getpid()}-", dir=self.root))
        try:
            for name, data in (
                (HEADER_FILE_NAME, _header_bytes(header)),
                (TRANSCRIPT_FILE_NAME, b""),
            ):
                fd = os.open(staging / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                try:
                    _write_all(fd, data)
                    os.fsync(fd)
                except OSError as exc:
                    raise with_path(exc, staging / name) from None
                finally:
                    os.close(fd)
            _fsync_dir(staging)
            try:
                os.rename(staging, final)
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise SessionExists("session already exists") from None
                raise
        except BaseException:
            for name in (HEADER_FILE_NAME, TRANSCRIPT_FILE_NAME):
                (staging / name).unlink(missing_ok=True)
            staging.rmdir()
            raise
        _fsync_dir(self.root)

    def _load(self, session_id: str) -> tuple[Transcript, int | None]:
        directory = self._dir(session_id)
        try:
            header_data = (directory / HEADER_FILE_NAME).read_bytes()
            data = (directory / TRANSCRIPT_FILE_NAME).read_bytes()
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        try:
            header = _parse_header(header_data, session_id)
        except SessionCorrupt as exc:
            raise SessionCorrupt(f"{directory / HEADER_FILE_NAME}: {exc}") from None
        try:
            entries, intact = parse_transcript(data)
        except SessionCorrupt as exc:
            raise SessionCorrupt(f"{directory / TRANSCRIPT_FILE_NAME}: {exc}") from None
        if intact is not None:
            logger.warning(
                "session {}: dropped a torn last transcript line ({} bytes)",
                session_id,
                len(data) - intact,
            )
        return Transcript(header=header, entries=entries, torn=intact is not None), intact

    @property
    def location(self) -> str:
        """The store's directory, for diagnostics."""
        return str(self.root)

    def close(self) -> None:
        """Nothing to release: every appender closes its own descriptor."""

    def _stored(self) -> list[tuple[int, SessionHeader]]:
        """Each readable session's transcript change time and header;
        unreadable sessions are skipped with a WARN."""
        found: list[tuple[int, SessionHeader]] = []
        for directory in self.root.iterdir():
            if directory.name.startswith(_TEMP_PREFIX) or not directory.is_dir():
                continue
            try:
                header = _parse_header((directory / HEADER_FILE_NAME).read_bytes(), directory.name)
                changed = (directory / TRANSCRIPT_FILE_NAME).stat().st_mtime_ns
            except (OSError, SessionError):
                logger.warning("sessions: skipped an unreadable session directory")
                continue
            found.append((changed, header))
        return found

    def newest(self, cwd: str) -> str | None:
        """DEC-CLI-5 ``--continue``: the id of the session started in ``cwd``
        whose transcript changed last (ties: the later ``created_at``), or
        ``None``. Unreadable sessions are skipped with a WARN."""
        found = [
            (changed, header.created_at, header.session_id)
            for changed, header in self._stored()
            if header.cwd == cwd
        ]
        return max(found)[2] if found else None

    def headers(self) -> tuple[SessionHeader, ...]:
        """Every readable session's header, oldest first (ties: by id)."""
        stored = [header for _, header in self._stored()]
        return tuple(sorted(stored, key=lambda h: (h.created_at, h.session_id)))

    def read(self, session_id: str) -> Transcript:
        """Read the session without changing it; a torn tail is dropped with a WARN."""
        return self._load(session_id)[0]

    def open(self, session_id: str) -> Transcript:
        """Read the session for resuming and writing: a torn tail is dropped
        with a WARN and cut from the file (fsynced), so the next append starts
        on a line boundary. :class:`SessionBusy` while an appender holds it."""
        path = self._dir(session_id) / TRANSCRIPT_FILE_NAME
        try:
            fd = os.open(path, os.O_WRONLY)
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        try:
            _lock_exclusive(fd)  # never cut a tail another process is writing
            transcript, intact = self._load(session_id)
            if intact is not None:
                try:
                    os.ftruncate(fd, intact)
                    os.fsync(fd)
                except OSError as exc:
                    raise with_path(exc, path) from None
        finally:
            os.close(fd)
        return transcript

    def appender(self, session_id: str, *, admit: Admit | None = None) -> TranscriptAppender:
        """The session's transcript, open for appending (close it when done)."""
        return TranscriptAppender(
            self._dir(session_id) / TRANSCRIPT_FILE_NAME, session_id, admit=admit
        )

    def append(self, session_id: str, entries: Sequence[Mapping[str, Any]]) -> None:
        """Append ``entries`` durably (one write, one ``os.fsync``) in one
        call: :class:`TranscriptAppender`'s rules, synced at once."""
        if not entries:
            return
        appender = self.appender(session_id)
        try:
            appender.append(entries)
            appender.sync()
        finally:
            appender.close()


class TranscriptAppender:
    """One session's transcript, open for appending: group commit (DEC-STORE-1).

    :meth:`append` writes a batch with one ``os.write`` of the joined lines,
    straight through to the operating system; :meth:`sync` makes everything
    appended so far durable with one ``os.fsync``, however many appends it
    covers. The host calls :meth:`sync` from the writer actor before output
    bytes leave (:class:`agentx.actors.writer.FrameBuffer`), so a result is
    never on stdout before the entries it depends on are on disk, and a
    burst of turns shares one disk wait instead of one each.

    The appender holds an exclusive ``flock`` on the transcript for as long
    as it is open: a second appender, in this process or another, gets
    :class:`SessionBusy` (two writers would interleave their lines).

    Appends come from one thread (the turn worker), syncs from another; a
    sync runs without the lock held, so an append never waits for the disk,
    and :meth:`close` waits for a running sync so the descriptor is never
    reused under it. A failed sync is remembered: every later append raises
    :class:`SessionError`, so the next turn's result says its transcript
    write failed (the turn whose result was already queued cannot be
    recalled; the failure is logged at ERROR).

    ``admit`` (DEC-AUTH-6) sees each encoded batch before it is written; a
    batch it refuses raises :class:`TranscriptRefused` and writes nothing.
    """

    def __init__(self, path: Path, session_id: str, *, admit: Admit | None = None) -> None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            raise SessionNotFound(session_id) from None
        try:
            _lock_exclusive(fd)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                raise SessionCorrupt(f"{path}: ends in a torn line; open() the session first")
        except OSError as exc:
            os.close(fd)
            raise with_path(exc, path) from None
        except BaseException:
            os.close(fd)
            raise
        self._admit = admit
        self._fd = fd
        # An appender dropped without close() (an embedding application's
        # failed start-up) still releases its descriptor and lock.
        self._release = weakref.finalize(self, os.close, fd)
        self._size = size
        self._cond = threading.Condition()
        self._dirty = False
        self._syncing = 0
        self._closed = False
        self._failed: str | None = None

    def append(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Write ``entries`` (not yet durable: see :meth:`sync`).

        Raises ``ValueError`` for an entry that would not read back, and
        :class:`SessionError` after a failed sync or once closed; either way
        nothing is written. If the write fails part-way (disk full, file size
        limit) the transcript is cut back to its previous length and the
        error is raised: no partial batch is left behind.
        """
        payload = encode_entries(entries)
        if not entries:
            return
        if self._admit is not None and not self._admit(payload):
            raise TranscriptRefused("an entry holds a configured credential")
        with self._cond:
            if self._closed:
                raise SessionError("transcript closed")
            if self._failed is not None:
                raise SessionError(self._failed)
            try:
                _write_all(self._fd, payload)
            except BaseException:
                self._cut_back()
                raise
            self._size += len(payload)
            self._dirty = True

    def _cut_back(self) -> None:
        """Remove a batch that failed part-way (its lines must never be read
        back: DEC-STORE-1). If even that fails, nothing is appended again."""
        try:
            os.ftruncate(self._fd, self._size)
        except OSError as exc:
            self._failed = f"transcript could not be cut back: {exc.strerror}"

    def sync(self) -> None:
        """Make every append so far durable; nothing new is a no-op.

        Raises the ``OSError`` of a failed ``fsync`` (and remembers it)."""
        with self._cond:
            if self._closed or not self._dirty:
                return
            self._dirty = False
            self._syncing += 1
        try:
            os.fsync(self._fd)
        except OSError as exc:
            with self._cond:
                self._failed = f"transcript sync failed: {exc.strerror}"
            raise
        finally:
            with self._cond:
                self._syncing -= 1
                self._cond.notify_all()

    def close(self) -> None:
        """Close after any running sync; later appends raise, syncs do nothing."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._cond.wait_for(lambda: self._syncing == 0)
            self._release()
