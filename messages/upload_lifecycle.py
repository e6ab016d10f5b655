"""The upload lifecycle's transition table and effects (WIRE-018, WIRE-019).

:class:`~agentx.messages.uploads.UploadCore` moves every lifecycle along this
table and returns effects: records to emit (:class:`~agentx.messages.records.Emit`)
and IO instructions for the shell (:class:`AppendChunk`, :class:`RunCommit`,
:class:`DiscardTemp`).

Rule 1: a lifecycle moves only along :data:`TRANSITIONS`. An operation whose
(state, event) pair is not in the table cannot join the lifecycle and gets an
``attachment_import_rejected`` record; it never changes the lifecycle.

Rule 2: every accepted lifecycle ends in exactly one terminal
``attachment_import_result`` and then lives on only as an ID in the terminal
ledger, so a later duplicate operation is rejected instead of acknowledged
twice (WIRE-019).

Ending causes and their terminal status (WIRE-019, decided here):

=====================  ==========  ==================
cause                  status      reason
=====================  ==========  ==================
``abort`` operation    aborted     client_abort
input EOF              aborted     input_closed
timeout (120 s)        expired     upload_timeout
host stop              failed      host_shutdown
bad chunk / commit     failed      the check's reason
=====================  ==========  ==================

EOF is the client ending the stream, which cancels its pending uploads (an
abort it did not spell); a host stop with uploads still open is a process
failure from the client's point of view.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Literal

from msgspec import Struct, field

from agentx.messages.attachments import Manifest, Reason
from agentx.messages.frozen import repr_without
from agentx.messages.inbound_user import AttachmentKind
from agentx.messages.records import Emit

if TYPE_CHECKING:
    from hashlib import _Hash


def _sha256() -> _Hash:
    """A new SHA-256; hashlib (OpenSSL) loads with the first upload, not at
    start (DEC-CLI-3)."""
    import hashlib  # noqa: PLC0415

    return hashlib.sha256()


# --- effects ---------------------------------------------------------------


class AppendChunk(Struct, frozen=True, kw_only=True):
    """Append decoded bytes to the lifecycle's temporary file."""

    upload_id: str
    data: bytes

    def __repr__(self) -> str:
        return repr_without(self, frozenset({"data"}))


class RunCommit(Struct, frozen=True, kw_only=True):
    """Size and digest matched: validate the media (MOD-083..085), store the
    blob, then report to the core (``commit_succeeded`` or ``fail``)."""

    upload_id: str
    mime_type: str
    kind: AttachmentKind


class DiscardTemp(Struct, frozen=True, kw_only=True):
    """Remove every temporary artifact of the lifecycle (emitted before its
    terminal record, so no artifact outlives the acknowledgement)."""

    upload_id: str


Effect = Emit | AppendChunk | RunCommit | DiscardTemp

# --- the transition table --------------------------------------------------


class State(Enum):
    RECEIVING = "receiving"
    COMMITTING = "committing"


class Event(Enum):
    CHUNK = "chunk"
    COMMIT = "commit"
    ABORT = "abort"
    COMMIT_OK = "commit_ok"
    FAIL = "fail"
    TIMEOUT = "timeout"
    EOF = "eof"
    STOP = "stop"


Status = Literal["committed", "aborted", "expired", "failed"]
Next = State | Status

#: Rule 1: the only legal moves. Terminal statuses leave the active set.
TRANSITIONS: dict[tuple[State, Event], Next] = {
    (State.RECEIVING, Event.CHUNK): State.RECEIVING,
    (State.RECEIVING, Event.COMMIT): State.COMMITTING,
    (State.RECEIVING, Event.ABORT): "aborted",
    (State.RECEIVING, Event.FAIL): "failed",
    (State.RECEIVING, Event.TIMEOUT): "expired",
    (State.RECEIVING, Event.EOF): "aborted",
    (State.RECEIVING, Event.STOP): "failed",
    (State.COMMITTING, Event.COMMIT_OK): "committed",
    (State.COMMITTING, Event.FAIL): "failed",
    (State.COMMITTING, Event.EOF): "aborted",
    (State.COMMITTING, Event.STOP): "failed",
}


#: ``close`` causes -> (event, reason), see the module docstring.
CLOSE_CAUSES: dict[str, tuple[Event, Reason]] = {
    "eof": (Event.EOF, Reason.INPUT_CLOSED),
    "stop": (Event.STOP, Reason.HOST_SHUTDOWN),
}


class Lifecycle(Struct, kw_only=True):
    """One accepted upload (mutable: it is the upload core's private state)."""

    upload_id: str
    attachment_id: str
    prompt_uuid: str
    name: str
    mime_type: str
    kind: AttachmentKind
    size_bytes: int
    sha256: str
    deadline: float
    state: State = State.RECEIVING
    next_sequence: int = 0
    received: int = 0
    digest: _Hash = field(default_factory=_sha256)

    def manifest(self, *, size_bytes: int, sha256: str, storage_id: str) -> Manifest:
        """The committed attachment's manifest, for the bytes the shell stored."""
        return Manifest(
            attachment_id=self.attachment_id,
            kind=self.kind,
            name=self.name,
            mime_type=self.mime_type,
            size_bytes=size_bytes,
            sha256=sha256,
            storage_id=storage_id,
        )
