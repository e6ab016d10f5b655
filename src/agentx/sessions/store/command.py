"""``agentx sessions list|copy``: moving sessions between stores (DEC-STORE-1).

``agentx sessions list [--store URL]`` prints one line per session, oldest
first: the id, ``created_at``, provider id, model and cwd, tab-separated.
``agentx sessions copy --from URL --to URL [ID...]`` copies every session
(or the named ones) with its header into the target store in one durable
append each, then reads the copy back and compares it with the source entry
by entry; a session already in the target with the same header and entries
is skipped, a different one is refused. The attachment blobs its entries
name are copied first (content-addressed: a blob already there is kept) and
each is read back from the target and compared byte for byte. Without ``--store`` / ``--from`` /
``--to`` the store is ``AGENTX_SESSION_STORE``, else the home's files.

A store URL is never printed (DEC-AUTH-3); every failure is one line on
stderr and exit 2 (DECISIONS section 8).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from agentx.config.home import agentx_home, os_error_line
from agentx.media.blobs import BlobNotFound, Blobs, StorageFull
from agentx.messages.frozen import thaw
from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import SessionError, SessionNotFound
from agentx.sessions.store.header import validate_session_id
from agentx.sessions.store.jsonl import Transcript
from agentx.sessions.store.select import open_blobs, open_store, store_url

EXIT_USAGE = 2
USAGE = (
    "usage: agentx sessions list [--store URL]\n"
    "       agentx sessions copy --from URL --to URL [SESSION_ID...]\n"
)


class CommandError(Exception):
    """One line for stderr; exit 2."""


def _options(args: Sequence[str], names: frozenset[str]) -> tuple[dict[str, str], list[str]]:
    """``--name VALUE`` pairs among ``names`` and the positional arguments
    (a value is never repeated in a message: it may be a store URL)."""
    found: dict[str, str] = {}
    rest: list[str] = []
    items = iter(args)
    for arg in items:
        if arg.startswith("--"):
            name = arg.partition("=")[0]
            if name not in names:
                raise CommandError("unknown option (see agentx sessions --help)")
            if name in found:
                raise CommandError(f"{name} is given twice")
            value = arg.partition("=")[2] if "=" in arg else next(items, None)
            if not value:
                raise CommandError(f"{name} needs a URL")
            found[name] = value
        else:
            rest.append(arg)
    return found, rest


def _store(url: str | None, environ: Mapping[str, str]) -> SessionStore:
    try:
        return open_store(store_url(url, environ), agentx_home(environ))
    except SessionError as exc:
        raise CommandError(f"session store: {exc}") from None
    except OSError as exc:
        raise CommandError(f"session store: {os_error_line(exc)}") from None


def _blobs(url: str, environ: Mapping[str, str]) -> Blobs:
    try:
        return open_blobs(store_url(url, environ), agentx_home(environ))
    except SessionError as exc:
        raise CommandError(f"session store: {exc}") from None
    except OSError as exc:
        raise CommandError(f"session store: {os_error_line(exc)}") from None


def _list(args: Sequence[str], environ: Mapping[str, str], write: Callable[[bytes], None]) -> None:
    options, rest = _options(args, frozenset({"--store"}))
    if rest:
        raise CommandError("sessions list takes no arguments")
    store = _store(options.get("--store"), environ)
    try:
        lines = [
            "\t".join(
                (
                    h.session_id,
                    h.created_at.isoformat(),
                    h.provider_id,
                    h.model,
                    h.cwd if h.cwd is not None else "",
                )
            )
            for h in store.headers()
        ]
    finally:
        store.close()
    write("".join(f"{line}\n" for line in lines).encode("utf-8"))


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


def _copy(args: Sequence[str], environ: Mapping[str, str], write: Callable[[bytes], None]) -> None:
    options, ids = _options(args, frozenset({"--from", "--to"}))
    if "--from" not in options or "--to" not in options:
        raise CommandError("sessions copy needs --from URL and --to URL")
    for session_id in ids:
        try:
            validate_session_id(session_id)
        except SessionError as exc:
            raise CommandError(f"sessions copy: {exc}") from None
    source = _store(options["--from"], environ)
    try:
        target = _store(options["--to"], environ)
        try:
            blobs = (_blobs(options["--from"], environ), _blobs(options["--to"], environ))
            chosen = ids or [h.session_id for h in source.headers()]
            for session_id in chosen:
                done = copy_session(source, target, session_id, blobs=blobs)
                write(f"{session_id}: {done}\n".encode())
        finally:
            target.close()
    finally:
        source.close()


def run_sessions(
    args: Sequence[str],
    *,
    environ: Mapping[str, str],
    write: Callable[[bytes], None],
    error: Callable[[str], object],
) -> int:
    """``agentx sessions ...``: 0, or 2 with one line on ``error``."""
    if args[:1] in (["--help"], ["-h"]):
        write(USAGE.encode())
        return 0
    commands = {"list": _list, "copy": _copy}
    command = commands.get(args[0]) if args else None
    try:
        if command is None:
            raise CommandError(f"a sessions command is list or copy\n{USAGE}".rstrip("\n"))
        command(args[1:], environ, write)
    except CommandError as exc:
        error(f"agentx: {exc}\n")
        return EXIT_USAGE
    except SessionError as exc:
        error(f"agentx: session store: {exc}\n")
        return EXIT_USAGE
    except OSError as exc:
        error(f"agentx: session store: {os_error_line(exc)}\n")
        return EXIT_USAGE
    return 0
