"""The attachment upload lifecycle core (WIRE-018, WIRE-019, MOD-083).

Sans-IO, h11 style: operations and time (``now``, seconds) come in as
arguments, effects come out: records to emit and IO instructions for the
shell (:class:`AppendChunk`, :class:`RunCommit`, :class:`DiscardTemp`).

Rule 1 (a lifecycle moves only along the transition table) and Rule 2 (one
terminal ``attachment_import_result`` each, then only an ID in the ledger), the
effects and the ending causes are in :mod:`agentx.messages.upload_lifecycle`;
the name and chunk checks and the two records in :mod:`agentx.messages.upload_wire`.

Where the work lives: the core decodes and checks every chunk (sequence,
canonical base64, limits, cumulative size) and keeps the incremental SHA-256
(hashlib is computation, not IO), so the commit-time size and digest checks of
MOD-083 are decided here and tested without files. Magic bytes, image
normalization, PDF validation and storage are the shell's commit step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from agentx.messages.attachment_limits import (
    MAX_CONCURRENT_UPLOADS,
    MAX_UPLOADS_PER_SESSION,
    UPLOAD_TIMEOUT_MS,
)
from agentx.messages.attachments import MEDIA_KINDS, CommittedManifests, Manifest, Reason
from agentx.messages.inbound_import import (
    AttachmentAbort,
    AttachmentBegin,
    AttachmentChunk,
    AttachmentCommit,
)
from agentx.messages.inbound_user import AttachmentKind, AttachmentRef
from agentx.messages.records import Emit
from agentx.messages.upload_lifecycle import (
    CLOSE_CAUSES,
    TRANSITIONS,
    AppendChunk,
    DiscardTemp,
    Effect,
    Event,
    Lifecycle,
    Next,
    RunCommit,
    State,
    Status,
)
from agentx.messages.upload_wire import (
    begin_shape_rejection,
    decode_chunk,
    import_rejected,
    import_result,
)


class UploadCore:
    """Every upload lifecycle of one session (WIRE-018/019).

    ``session_id`` returns the id records carry now (``/clear`` renews it,
    DEC-COMPAT-2). ``max_active`` and ``ledger_capacity`` default to the spec's 8 and
    100,000; ``manifests`` is the session's committed-manifest store, whose
    own ceiling is independent of the ledger.
    """

    def __init__(
        self,
        *,
        session_id: Callable[[], str],
        new_uuid: Callable[[], str],
        capability_enabled: bool,
        manifests: CommittedManifests,
        max_active: int = MAX_CONCURRENT_UPLOADS,
        ledger_capacity: int = MAX_UPLOADS_PER_SESSION,
        timeout: float = UPLOAD_TIMEOUT_MS / 1000,
    ) -> None:
        self._session_id = session_id
        self._new_uuid = new_uuid
        self._enabled = capability_enabled
        self.manifests = manifests
        self._max_active = max_active
        self._ledger_capacity = ledger_capacity
        self._timeout = timeout
        self._active: dict[str, Lifecycle] = {}
        self._ledger: set[str] = set()

    def withdraw(self) -> None:
        """MOD-A14B: the runtime failed its check after ``input_capabilities``
        were advertised; every later import or reference is rejected
        ``capability_not_advertised`` as if they never had been."""
        self._enabled = False

    # -- queries -------------------------------------------------------------

    @property
    def active_ids(self) -> tuple[str, ...]:
        return tuple(self._active)

    @property
    def ledger_size(self) -> int:
        return len(self._ledger)

    def state_of(self, upload_id: str) -> State | None:
        lifecycle = self._active.get(upload_id)
        return None if lifecycle is None else lifecycle.state

    # -- operations ----------------------------------------------------------

    def begin(self, op: AttachmentBegin, now: float) -> tuple[Effect, ...]:
        """Admit a lifecycle (WIRE-018, MOD-083) or reject the operation."""
        effects = self.expire(now)
        reason = self._begin_rejection(op)
        if reason is not None:
            return (*effects, self._rejected(op.upload_id, "begin", reason, begin=op))
        kind: AttachmentKind = MEDIA_KINDS[op.mime_type]
        lifecycle = Lifecycle(
            upload_id=op.upload_id,
            attachment_id=op.attachment_id,
            prompt_uuid=op.prompt_uuid,
            name=op.name,
            mime_type=op.mime_type,
            kind=kind,
            size_bytes=op.size_bytes,
            sha256=op.sha256,
            deadline=now + self._timeout,
        )
        self._active[op.upload_id] = lifecycle
        return (*effects, self._result(lifecycle, "accepted"))

    def chunk(self, op: AttachmentChunk, now: float) -> tuple[Effect, ...]:
        """Check and append one chunk; a bad chunk fails the lifecycle."""
        effects = self.expire(now)
        lifecycle, rejection = self._join(op.upload_id, Event.CHUNK, "chunk")
        if lifecycle is None:
            return (*effects, *rejection)
        if op.sequence != lifecycle.next_sequence:
            return (*effects, *self._end(lifecycle, Event.FAIL, Reason.CHUNK_OUT_OF_ORDER))
        decoded = decode_chunk(op.data)
        if isinstance(decoded, Reason):
            return (*effects, *self._end(lifecycle, Event.FAIL, decoded))
        if lifecycle.received + len(decoded) > lifecycle.size_bytes:
            return (*effects, *self._end(lifecycle, Event.FAIL, Reason.SIZE_EXCEEDED))
        lifecycle.next_sequence += 1
        lifecycle.received += len(decoded)
        lifecycle.digest.update(decoded)
        return (*effects, AppendChunk(upload_id=op.upload_id, data=decoded))

    def commit(self, op: AttachmentCommit, now: float) -> tuple[Effect, ...]:
        """MOD-083 size and digest, then hand the media check to the shell."""
        effects = self.expire(now)
        lifecycle, rejection = self._join(op.upload_id, Event.COMMIT, "commit")
        if lifecycle is None:
            return (*effects, *rejection)
        if lifecycle.received != lifecycle.size_bytes:
            return (*effects, *self._end(lifecycle, Event.FAIL, Reason.SIZE_MISMATCH))
        if lifecycle.digest.hexdigest() != lifecycle.sha256:
            return (*effects, *self._end(lifecycle, Event.FAIL, Reason.SHA256_MISMATCH))
        committing = self._move(lifecycle, Event.COMMIT)
        assert isinstance(committing, State), "commit keeps the lifecycle open"
        lifecycle.state = committing
        run = RunCommit(upload_id=op.upload_id, mime_type=lifecycle.mime_type, kind=lifecycle.kind)
        return (*effects, run)

    def abort(self, op: AttachmentAbort, now: float) -> tuple[Effect, ...]:
        effects = self.expire(now)
        lifecycle, rejection = self._join(op.upload_id, Event.ABORT, "abort")
        if lifecycle is None:
            return (*effects, *rejection)
        return (*effects, *self._end(lifecycle, Event.ABORT, Reason.CLIENT_ABORT))

    # -- shell reports -------------------------------------------------------

    def commit_succeeded(
        self, upload_id: str, *, size_bytes: int, sha256: str, storage_id: str
    ) -> tuple[Effect, ...]:
        """The shell validated and stored the (normalized) bytes (WIRE-019)."""
        lifecycle = self._active[upload_id]
        manifest = lifecycle.manifest(size_bytes=size_bytes, sha256=sha256, storage_id=storage_id)
        refused = self.manifests.add(lifecycle.prompt_uuid, manifest)
        if refused is not None:
            return self._end(lifecycle, Event.FAIL, refused)
        return self._end(lifecycle, Event.COMMIT_OK, None, manifest=manifest)

    def fail(self, upload_id: str, reason: Reason) -> tuple[Effect, ...]:
        """The shell's IO or validation failed for an active lifecycle."""
        return self._end(self._active[upload_id], Event.FAIL, reason)

    def expire(self, now: float) -> tuple[Effect, ...]:
        """End every lifecycle past its deadline (120 s after begin; a
        lifecycle is still alive at exactly its deadline)."""
        effects: list[Effect] = []
        for lifecycle in tuple(self._active.values()):
            if now > lifecycle.deadline and (lifecycle.state, Event.TIMEOUT) in TRANSITIONS:
                effects += self._end(lifecycle, Event.TIMEOUT, Reason.UPLOAD_TIMEOUT)
        return tuple(effects)

    def close(self, cause: Literal["eof", "stop"]) -> tuple[Effect, ...]:
        """Settle every active lifecycle once: input EOF aborts them, a host
        stop fails them (module docstring)."""
        event, reason = CLOSE_CAUSES[cause]
        effects: list[Effect] = []
        for lifecycle in tuple(self._active.values()):
            effects += self._end(lifecycle, event, reason)
        return tuple(effects)

    def admit_refs(self, prompt_uuid: str | None, refs: tuple[AttachmentRef, ...]) -> Reason | None:
        """WIRE-020 for one user record. While an upload for the same prompt
        is still open the record is rejected: admitting it would drop the
        attachment that is about to commit."""
        if refs and not self._enabled:
            return Reason.CAPABILITY_NOT_ADVERTISED
        if prompt_uuid is not None and any(
            lc.prompt_uuid == prompt_uuid for lc in self._active.values()
        ):
            return Reason.ATTACHMENT_UPLOAD_PENDING
        return self.manifests.check_user_refs(prompt_uuid, refs)

    # -- internals -----------------------------------------------------------

    def _begin_rejection(self, op: AttachmentBegin) -> Reason | None:
        if not self._enabled:
            return Reason.CAPABILITY_NOT_ADVERTISED
        if op.upload_id in self._active or op.upload_id in self._ledger:
            return Reason.DUPLICATE_UPLOAD_ID
        shape = begin_shape_rejection(op)
        if shape is not None:
            return shape
        if op.attachment_id in self.manifests or any(
            lc.attachment_id == op.attachment_id for lc in self._active.values()
        ):
            return Reason.DUPLICATE_ATTACHMENT_ID
        if len(self._active) >= self._max_active:
            return Reason.TOO_MANY_ACTIVE_UPLOADS
        if len(self._ledger) + len(self._active) >= self._ledger_capacity:
            return Reason.UPLOAD_LEDGER_FULL
        # Each open lifecycle reserves one manifest slot, so a commit never
        # finds the ceiling reached by its own siblings.
        if len(self.manifests) + len(self._active) >= self.manifests.capacity:
            return Reason.MANIFEST_LIMIT_REACHED
        return None

    def _join(
        self, upload_id: str, event: Event, operation: str
    ) -> tuple[Lifecycle, tuple[()]] | tuple[None, tuple[Effect, ...]]:
        """The lifecycle ``event`` may move, or the rejection (WIRE-019)."""
        if not self._enabled:
            reason = Reason.CAPABILITY_NOT_ADVERTISED
        elif upload_id in self._ledger:
            reason = Reason.UPLOAD_NOT_ACTIVE
        elif (lifecycle := self._active.get(upload_id)) is None:
            reason = Reason.UNKNOWN_UPLOAD_ID
        elif (lifecycle.state, event) not in TRANSITIONS:
            reason = Reason.UPLOAD_COMMITTING
        else:
            return lifecycle, ()
        return None, (self._rejected(upload_id, operation, reason),)

    @staticmethod
    def _move(lifecycle: Lifecycle, event: Event) -> Next:
        return TRANSITIONS[(lifecycle.state, event)]

    def _end(
        self,
        lifecycle: Lifecycle,
        event: Event,
        reason: Reason | None,
        *,
        manifest: Manifest | None = None,
    ) -> tuple[Effect, ...]:
        """Rule 2: the single terminal acknowledgement of ``lifecycle``."""
        status = self._move(lifecycle, event)
        assert not isinstance(status, State), "terminal events end the lifecycle"
        del self._active[lifecycle.upload_id]
        self._ledger.add(lifecycle.upload_id)
        record = self._result(lifecycle, status, reason=reason, manifest=manifest)
        return (DiscardTemp(upload_id=lifecycle.upload_id), record)

    def _result(
        self,
        lifecycle: Lifecycle,
        status: Literal["accepted"] | Status,
        *,
        reason: Reason | None = None,
        manifest: Manifest | None = None,
    ) -> Emit:
        uuid, session_id = self._new_uuid(), self._session_id()
        record = import_result(
            lifecycle, status, reason, manifest, uuid=uuid, session_id=session_id
        )
        return Emit(records=(record,))

    def _rejected(
        self,
        upload_id: str,
        operation: str,
        reason: Reason,
        *,
        begin: AttachmentBegin | None = None,
    ) -> Emit:
        uuid, session_id = self._new_uuid(), self._session_id()
        record = import_rejected(
            upload_id, operation, reason, begin, uuid=uuid, session_id=session_id
        )
        return Emit(records=(record,))
