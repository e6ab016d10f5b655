"""Initial CLI attachments: ``-p PROMPT --attach PATH...`` (DEC-CLI-1).

The ``file_path`` / ``initial_cli`` source of the advertised capability. Each
file goes through the same admission as a stream import (MOD-083 magic,
MOD-084 image normalization, MOD-085 PDF validation, the item, count and
aggregate limits), is stored content-addressed, and is committed for the one
prompt's UUID, so the prompt is admitted by the same WIRE-020 correlation.
A file path has no MIME claim: the magic bytes choose among the supported
types. Any refusal is a start-up error naming the file's position and the
bounded reason, never its content or path.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from agentx.media.admission import MAGIC, Admitted, admit
from agentx.media.blobs import Blobs, StorageFull
from agentx.messages.attachment_limits import (
    MAX_AGGREGATE_BYTES,
    MAX_ATTACHMENTS_PER_MESSAGE,
    MAX_ITEM_BYTES,
)
from agentx.messages.attachments import MEDIA_KINDS, CommittedManifests, Manifest
from agentx.messages.upload_wire import valid_display_name


class AttachError(ValueError):
    """An --attach file was refused (exit 2)."""


def _mime_of(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(8)
    for mime, magic in MAGIC.items():
        if head.startswith(magic):
            return mime
    raise AttachError("unsupported_mime_type")


def import_initial(
    paths: Sequence[str], *, prompt_uuid: str, store: Blobs, manifests: CommittedManifests
) -> tuple[Manifest, ...]:
    if len(paths) > MAX_ATTACHMENTS_PER_MESSAGE:
        raise AttachError(f"--attach: at most {MAX_ATTACHMENTS_PER_MESSAGE} files")
    committed: list[Manifest] = []
    total = 0
    with tempfile.TemporaryDirectory(prefix="agentx-attach-") as work:
        for index, raw in enumerate(paths, start=1):
            path = Path(raw)
            try:
                committed.append(_one(index, path, Path(work), store))
            except OSError:
                raise AttachError(f"--attach #{index}: the file cannot be read") from None
            except StorageFull:
                raise AttachError(f"--attach #{index}: storage_full") from None
            total += committed[-1].size_bytes
            if total > MAX_AGGREGATE_BYTES:
                raise AttachError(f"--attach #{index}: aggregate_too_large")
    for manifest in committed:
        reason = manifests.add(prompt_uuid, manifest)
        if reason is not None:
            raise AttachError(f"--attach: {reason.value}")
    return tuple(committed)


def _one(index: int, path: Path, work: Path, store: Blobs) -> Manifest:
    if not path.is_file():
        raise AttachError(f"--attach #{index}: not a regular file")
    if path.stat().st_size > MAX_ITEM_BYTES:
        raise AttachError(f"--attach #{index}: item_too_large")
    if not valid_display_name(path.name):
        raise AttachError(f"--attach #{index}: invalid_name")
    try:
        mime = _mime_of(path)
    except AttachError as exc:
        raise AttachError(f"--attach #{index}: {exc}") from None
    outcome = admit(path, mime, work / f"normalized-{index}")
    if not isinstance(outcome, Admitted):
        raise AttachError(f"--attach #{index}: {outcome.reason.value}")
    stored = store.put_file(outcome.path)
    return Manifest(
        attachment_id=f"att_cli{index}",
        kind=MEDIA_KINDS[mime],
        name=path.name,
        mime_type=mime,
        size_bytes=stored.size_bytes,
        sha256=stored.sha256,
        storage_id=stored.storage_id,
    )
