"""UploadManagerActor: the pykka shell around the upload lifecycle core.

It owns :class:`~agentx.messages.uploads.UploadCore` and carries out its
effects: decoded chunks are appended to one temporary file per lifecycle,
a commit runs media admission (:mod:`agentx.media.admission`, MOD-083..085) and stores
the admitted bytes in the :class:`~agentx.media.blobs.BlobStore`, and every ending
removes the lifecycle's temporary files before its terminal record is handed
to the writer (WIRE-019). Records produced by one call go to the sink as one
ordered batch.

Temporary files live in a per-process directory ``upl-<pid>-*`` under
``temp_dir`` (``$AGENTX_HOME/blobs/tmp``, DEC-HOME-1); directories left by
dead processes are swept at start, and this process's directory is removed
when the actor stops. Paths never appear in a record (WIRE-022).

:mod:`agentx.media.admission` (and Pillow with it) is imported at the first commit: a
session without attachments never loads it. The lifecycle core itself is built
(and its modules imported: the upload core, the reason codes, the session's
committed manifests when ``--attach`` made none) with the first operation or
reference that needs it; until then no lifecycle is open, so a tick, the EOF
and the stop have nothing to settle (start-up, DEC-CLI-3). The sweep of dead
processes' work directories is crash recovery and stays at start.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pykka
from msgspec import Struct

from agentx.actors.base import Actor
from agentx.actors.supervision import ExitLatch
from agentx.config.home import private_dirs, sweep_stale
from agentx.diagnostics import logger
from agentx.messages.inbound_user import AttachmentRef
from agentx.messages.records import Emit, RecordSink

if TYPE_CHECKING:
    from agentx.media.blobs import Blobs
    from agentx.messages.attachments import CommittedManifests
    from agentx.messages.inbound_import import AttachmentImport
    from agentx.messages.upload_lifecycle import AppendChunk, DiscardTemp, Effect, RunCommit
    from agentx.messages.uploads import UploadCore

_WORK_PREFIX = "upl-"


class Tick(Struct, frozen=True):
    """Expire lifecycles past their timeout (the host's upload timer)."""


class _Temp(Struct, kw_only=True):
    """One lifecycle's temporary files: the raw upload and the normalized image."""

    raw: Path
    normalized: Path
    file: IO[bytes] | None = None


class UploadManagerActor(Actor):
    """Attachment import lifecycles of one session (WIRE-018..020)."""

    def __init__(
        self,
        *,
        sink: RecordSink,
        store: Blobs,
        temp_dir: Path,
        session_id: Callable[[], str],
        new_uuid: Callable[[], str],
        clock: Callable[[], float],
        capability_enabled: bool,
        qualified: Callable[[], str | None] | None = None,
        manifests: CommittedManifests | None = None,
        supervision: ExitLatch | None = None,
    ) -> None:
        super().__init__(supervision=supervision)
        #: MOD-A14B: asked once, before the first begin is admitted (None:
        #: already decided, or no capability to qualify).
        self._qualified = qualified
        self._sink = sink
        self._store = store
        self._temp_dir = temp_dir
        self._clock = clock
        self._core_args: dict[str, Any] = {
            "session_id": session_id,
            "new_uuid": new_uuid,
            "capability_enabled": capability_enabled,
            "manifests": manifests,
        }
        self._built: UploadCore | None = None
        self._work: Path | None = None
        self._temps: dict[str, _Temp] = {}
        self._serial = 0

    @property
    def _core(self) -> UploadCore:
        """The lifecycle core, built on first use (module docstring)."""
        if self._built is None:
            from agentx.messages.attachments import CommittedManifests  # noqa: PLC0415
            from agentx.messages.uploads import UploadCore  # noqa: PLC0415

            args = self._core_args
            if args["manifests"] is None:
                args["manifests"] = CommittedManifests()
            self._built = UploadCore(**args)
        return self._built

    # -- pykka lifecycle -------------------------------------------------------

    def on_start(self) -> None:
        private_dirs(self._temp_dir)  # DEC-HOME-1: 0700
        sweep_stale(self._temp_dir, _WORK_PREFIX)

    def on_stop(self) -> None:
        """Host stop: every open lifecycle ends ``failed/host_shutdown`` once,
        then this process's temporary directory goes. Safe to call again."""
        try:
            if self._built is not None:
                self._run(self._built.close("stop"))
        except pykka.ActorDeadError:
            logger.warning("upload manager stopped after the writer; final records dropped")
        if self._work is not None:
            import shutil  # noqa: PLC0415 - only after an upload made the directory

            shutil.rmtree(self._work, ignore_errors=True)
            self._work = None

    # -- messages -------------------------------------------------------------

    def on_receive(self, message: Any) -> Any:
        """Told operations (a failure stops the actor and is supervised)."""
        if isinstance(message, Tick):
            self.tick()
            return None
        # An operation's module was loaded when it was decoded (DEC-CLI-3).
        from agentx.messages.inbound_import import AttachmentImport  # noqa: PLC0415

        if isinstance(message, AttachmentImport):
            self.handle(message)
        else:
            raise TypeError(f"UploadManagerActor got an unknown message {type(message).__name__}")
        return None

    def handle(self, op: AttachmentImport) -> None:
        """One decoded ``attachment_import`` operation (WIRE-018)."""
        from agentx.messages.inbound_import import (  # noqa: PLC0415 - loaded by its decode
            AttachmentBegin,
            AttachmentChunk,
            AttachmentCommit,
        )

        if self._qualified is not None and isinstance(op, AttachmentBegin):
            # MOD-A14B: the check runs here, off the start path, at most once.
            qualified, self._qualified = self._qualified, None
            if qualified() is not None:
                self._core.withdraw()
        now = self._clock()
        if isinstance(op, AttachmentBegin):
            effects = self._core.begin(op, now)
        elif isinstance(op, AttachmentChunk):
            effects = self._core.chunk(op, now)
        elif isinstance(op, AttachmentCommit):
            effects = self._core.commit(op, now)
        else:
            effects = self._core.abort(op, now)
        self._run(effects)

    def tick(self) -> None:
        """Expire lifecycles 120 s past their begin (the supervisor's timer)."""
        if self._built is not None:
            self._run(self._built.expire(self._clock()))

    def on_eof(self) -> None:
        """Input closed: every open lifecycle ends ``aborted/input_closed``."""
        if self._built is not None:
            self._run(self._built.close("eof"))

    def admit_refs(self, prompt_uuid: str | None, refs: tuple[AttachmentRef, ...]) -> str | None:
        """WIRE-020 for one user record: ``None`` admits it, else the reason."""
        reason = self._core.admit_refs(prompt_uuid, refs)
        return None if reason is None else reason.value

    def read_blob(self, storage_id: str) -> bytes:
        """The stored bytes for a committed manifest (provider projection)."""
        return self._store.read(storage_id)

    # -- effects ----------------------------------------------------------------

    def _run(self, effects: tuple[Effect, ...]) -> None:
        """Carry out effects in order; a shell step's follow-up effects run
        in its place, so the emitted batch keeps the core's order."""
        from agentx.messages.upload_lifecycle import AppendChunk, RunCommit  # noqa: PLC0415

        pending: deque[Effect] = deque(effects)
        batch: list[Mapping[str, Any]] = []
        while pending:
            effect = pending.popleft()
            if isinstance(effect, Emit):
                batch.extend(effect.records)
            elif isinstance(effect, AppendChunk):
                pending.extendleft(reversed(self._append(effect)))
            elif isinstance(effect, RunCommit):
                pending.extendleft(reversed(self._commit(effect)))
            else:
                self._discard(effect)
        if batch:
            self._sink(tuple(batch))

    def _temp(self, upload_id: str) -> _Temp:
        temp = self._temps.get(upload_id)
        if temp is None:
            if self._work is None:
                # This process's work directory, made by the first upload
                # rather than at start (DEC-CLI-3).
                import tempfile  # noqa: PLC0415

                prefix = f"{_WORK_PREFIX}{os.getpid()}-"
                self._work = Path(tempfile.mkdtemp(prefix=prefix, dir=self._temp_dir))
            self._serial += 1
            stem = self._work / str(self._serial)
            temp = _Temp(raw=stem.with_suffix(".part"), normalized=stem.with_suffix(".norm"))
            self._temps[upload_id] = temp
        return temp

    def _append(self, effect: AppendChunk) -> tuple[Effect, ...]:
        from agentx.messages.attachments import Reason  # noqa: PLC0415 - module docstring

        temp = self._temp(effect.upload_id)
        try:
            if temp.file is None:
                temp.file = temp.raw.open("xb")
            temp.file.write(effect.data)
        except OSError as error:
            logger.warning("upload temp write failed: {}", error.strerror)
            return self._core.fail(effect.upload_id, Reason.STORAGE_ERROR)
        return ()

    def _commit(self, effect: RunCommit) -> tuple[Effect, ...]:
        """MOD-083..085 on the complete temp file, then the blob store."""
        from agentx.media.admission import Rejected, admit  # noqa: PLC0415 - module docstring
        from agentx.media.blobs import StorageFull  # noqa: PLC0415
        from agentx.messages.attachments import Reason  # noqa: PLC0415

        temp = self._temp(effect.upload_id)
        try:
            if temp.file is not None:
                temp.file.close()
            outcome = admit(temp.raw, effect.mime_type, temp.normalized)
            if isinstance(outcome, Rejected):
                return self._core.fail(effect.upload_id, outcome.reason)
            blob = self._store.put_file(outcome.path)
        except StorageFull:
            return self._core.fail(effect.upload_id, Reason.STORAGE_FULL)
        except OSError as error:
            logger.warning("upload commit IO failed: {}", error.strerror)
            return self._core.fail(effect.upload_id, Reason.STORAGE_ERROR)
        return self._core.commit_succeeded(
            effect.upload_id,
            size_bytes=blob.size_bytes,
            sha256=blob.sha256,
            storage_id=blob.storage_id,
        )

    def _discard(self, effect: DiscardTemp) -> None:
        temp = self._temps.pop(effect.upload_id, None)
        if temp is None:
            return
        if temp.file is not None:
            temp.file.close()
        temp.raw.unlink(missing_ok=True)
        temp.normalized.unlink(missing_ok=True)
