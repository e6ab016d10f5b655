"""``agentx sessions copy``: a session moved between stores and verified (DEC-STORE-5).

Every session (or the named ones) is written with its header into the target
store in one durable append, read back and compared with the source entry by
entry; a session already in the target with the same header and entries is
skipped, a different one is refused. The attachment blobs its entries name
are copied first (content-addressed: a blob already there is kept) and each
is read back from the target and compared byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from agentx.media.blobs import BlobNotFound, Blobs, StorageFull
from agentx.messages.frozen import thaw
from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import SessionError, SessionNotFound
from agentx.sessions.store.header import validate_session_id
from agentx.sessions.store.jsonl import Transcript
from agentx.sessions.store.options import CommandError, Options, blobs_of, store_of


def _verified(source: Transcript, copy: Transcript) -> bool:
    if copy.header != source.header or len(copy.entries) != len(source.entries):
        return False
    return all(a == b for a, b in zip(copy.entries, source.entries, strict=True))


def _storage_ids(value: Any) -> Iterator[str]:
    """The storage IDs of every attachment block in ``value``, at any depth
    (messages, and the summaries of compaction boundaries)."""
    if isinstance(value, Mapping):
        if value.get("type") == "attachment_ref" and isinstance(value.get("storage_id"), str):
            yield value["storage_id"]
        for member in value.values():
            yield from _storage_ids(member)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _storage_ids(item)


def copy_blobs(source: Blobs, target: Blobs, entries: Iterable[Any], session_id: str) -> int:
    """Copy the blobs ``entries`` name, each verified byte for byte; how many."""
    wanted = sorted(set(_storage_ids(list(entries))))
    for storage_id in wanted:
        try:
            data = source.read(storage_id)
        except BlobNotFound:
            raise CommandError(
                f"session {session_id}: {storage_id} is missing in the source"
            ) from None
        try:
            target.put_bytes(data)
        except StorageFull as exc:
            raise CommandError(
                f"session {session_id}: the target's blobs are full ({exc})"
            ) from None
        if target.read(storage_id) != data:
            raise CommandError(f"session {session_id}: {storage_id} does not read back")
    return len(wanted)


def _counted(entries: int, blobs: int) -> str:
    plural = "s" if blobs != 1 else ""
    if not blobs:
        return f"{entries} entries verified"
    if not entries:
        return f"{blobs} blob{plural} verified"
    return f"{entries} entries and {blobs} blob{plural} verified"


def copy_session(
    source: SessionStore,
    target: SessionStore,
    session_id: str,
    *,
    blobs: tuple[Blobs, Blobs] | None = None,
) -> str:
    """Copy one session (and with ``blobs``, from source to target, the
    attachment blobs it names) and verify it entry by entry; what was done,
    in words."""
    original = source.read(session_id)
    copied = 0 if blobs is None else copy_blobs(*blobs, original.entries, session_id)
    try:
        existing = target.read(session_id)
    except SessionNotFound:
        existing = None
    if existing is not None:
        if _verified(original, existing):
            return f"already there, {_counted(0, copied)}" if copied else "already there, verified"
        raise CommandError(f"session {session_id}: the target holds a different session")
    target.create(original.header)
    appender = target.appender(session_id)
    try:
        if original.entries:
            appender.append([thaw(entry) for entry in original.entries])
        appender.sync()
    finally:
        appender.close()
    if not _verified(original, target.read(session_id)):
        raise CommandError(f"session {session_id}: the copy does not read back as the source")
    return f"copied, {_counted(len(original.entries), copied)}"


def run_copy(options: Options, environ: Mapping[str, str], write: Callable[[bytes], None]) -> None:
    """``sessions copy --from URL --to URL [ID...]``: the source is only read."""
    source_url, target_url = options.get("--from"), options.get("--to")
    if source_url is None or target_url is None:
        raise CommandError("sessions copy needs --from URL and --to URL")
    for session_id in options.positional:
        try:
            validate_session_id(session_id)
        except SessionError as exc:
            raise CommandError(f"sessions copy: {exc}") from None
    source = store_of(source_url, environ, read_only=True)
    assert source is not None  # a named URL always names a store
    try:
        target = store_of(target_url, environ, read_only=False)
        assert target is not None
        try:
            blobs = (blobs_of(source_url, environ), blobs_of(target_url, environ))
            chosen = options.positional or tuple(h.session_id for h in source.headers())
            for session_id in chosen:
                try:
                    done = copy_session(source, target, session_id, blobs=blobs)
                except SessionNotFound:
                    raise CommandError(
                        f"sessions copy: session {session_id} is not in the source store"
                    ) from None
                write(f"{session_id}: {done}\n".encode())
        finally:
            target.close()
    finally:
        source.close()


__all__ = ["copy_blobs", "copy_session", "run_copy"]
