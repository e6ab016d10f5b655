"""``agentx sessions list|show|export|delete|copy`` (DEC-STORE-5, DEC-STORE-1).

``list`` prints a header row and one tab-separated row per session, oldest
first: id, created, last activity, turn count, provider, model, cwd and the
first prompt's opening words (``--output-format json``: one JSON document).
``show ID`` prints a session's header and each turn with its time, duration,
result and cost (from the transcript's ledger entries). ``export ID`` writes
the session as JSONL on stdout, a header line then every stored entry, each
line checked by the output guard against the credential union (auth.json
and the store's passwords, DEC-AUTH-3) like every other output. ``delete
ID...`` or ``delete --older-than DAYS`` removes whole sessions (never one
that a writer holds). ``copy --from URL --to URL [ID...]`` copies every
session (or the named ones) with its header into the target store in one
durable append each, then reads the copy back and compares it with the
source entry by entry; a session already in the target with the same header
and entries is skipped, a different one is refused. The attachment blobs its
entries name are copied first (content-addressed: a blob already there is
kept) and each is read back from the target and compared byte for byte.
Without ``--store`` / ``--from`` / ``--to`` the store is
``AGENTX_SESSION_STORE``, else the home's files.

The read-only commands create nothing: a home without sessions lists none,
and a ``file://`` URL must name an existing sessions folder. A store URL is
never printed (DEC-AUTH-3); every failure is one line on stderr and exit 2
(DECISIONS section 8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

from agentx.config.home import agentx_home, os_error_line
from agentx.messages.guard import CredentialValidator
from agentx.messages.session_ledger import LedgerError
from agentx.sessions.store.base import SessionStore
from agentx.sessions.store.errors import SessionBusy, SessionError, SessionNotFound
from agentx.sessions.store.header import validate_session_id
from agentx.sessions.store.options import CommandError, Options, parse, store_of
from agentx.sessions.store.select import store_secrets, store_url
from agentx.sessions.store.transfer import run_copy
from agentx.sessions.store.views import (
    SessionSummary,
    export_lines,
    render_list,
    render_show,
    summarize,
)

EXIT_USAGE = 2
Write = Callable[[bytes], None]

_STORE = {"--store": "a URL"}
_FORMAT = {"--output-format": "text or json"}
#: Each subcommand: its synopsis and the options it takes.
COMMANDS: dict[str, tuple[str, dict[str, str]]] = {
    "list": ("list [--store URL] [--output-format text|json]", {**_STORE, **_FORMAT}),
    "show": ("show SESSION_ID [--store URL] [--output-format text|json]", {**_STORE, **_FORMAT}),
    "export": ("export SESSION_ID [--store URL]", dict(_STORE)),
    "delete": (
        "delete (SESSION_ID... | --older-than DAYS) [--store URL]",
        {**_STORE, "--older-than": "a number of days"},
    ),
    "copy": ("copy --from URL --to URL [SESSION_ID...]", {"--from": "a URL", "--to": "a URL"}),
}
USAGE = "".join(
    f"{'usage:' if i == 0 else '      '} agentx sessions {synopsis}\n"
    for i, (synopsis, _) in enumerate(COMMANDS.values())
)


def _as_json(options: Options) -> bool:
    chosen = options.get("--output-format") or "text"
    if chosen not in ("text", "json"):
        raise CommandError("--output-format is text or json")
    return chosen == "json"


def _one_id(command: str, options: Options) -> str:
    if len(options.positional) != 1:
        raise CommandError(f"sessions {command} takes one SESSION_ID")
    try:
        return validate_session_id(options.positional[0])
    except SessionError as exc:
        raise CommandError(f"sessions {command}: {exc}") from None


def _summary(store: SessionStore, session_id: str) -> SessionSummary:
    try:
        return summarize(store.read(session_id))
    except SessionNotFound:
        raise CommandError(f"session {session_id} is not in the store") from None
    except LedgerError as exc:
        raise CommandError(f"session {session_id}: {exc}") from None


def _list(options: Options, environ: Mapping[str, str], write: Write) -> None:
    if options.positional:
        raise CommandError("sessions list takes no arguments")
    as_json = _as_json(options)
    store = store_of(options.get("--store"), environ, read_only=True)
    if store is None:
        write(render_list((), as_json=as_json))
        return
    try:
        summaries = [_summary(store, h.session_id) for h in store.headers()]
    finally:
        store.close()
    write(render_list(summaries, as_json=as_json))


def _show(options: Options, environ: Mapping[str, str], write: Write) -> None:
    session_id = _one_id("show", options)
    as_json = _as_json(options)
    store = store_of(options.get("--store"), environ, read_only=True)
    if store is None:
        raise CommandError(f"session {session_id} is not in the store (it holds no sessions)")
    try:
        write(render_show(_summary(store, session_id), as_json=as_json))
    finally:
        store.close()


def _guard(environ: Mapping[str, str], url: str | None) -> CredentialValidator:
    """DEC-AUTH-3: the union an export is checked against, as a session's
    output is: auth.json (or the environment's registry), the provider key
    variables and the store's passwords."""
    from agentx.config.env_registry import (  # noqa: PLC0415 - export only
        environment_secrets,
        resolve_registry,
    )
    from agentx.config.registry import credential_literals  # noqa: PLC0415 - export only

    try:
        registry = resolve_registry(agentx_home(environ), environ)
    except ValueError as exc:
        raise CommandError(f"sessions export: {exc}") from None
    return CredentialValidator(
        credential_literals(registry)
        | environment_secrets(environ)
        | store_secrets(store_url(url, environ), environ)
    )


def _export(options: Options, environ: Mapping[str, str], write: Write) -> None:
    session_id = _one_id("export", options)
    guard = _guard(environ, options.get("--store"))
    store = store_of(options.get("--store"), environ, read_only=True)
    if store is None:
        raise CommandError(f"session {session_id} is not in the store (it holds no sessions)")
    try:
        transcript = store.read(session_id)
    except SessionNotFound:
        raise CommandError(f"session {session_id} is not in the store") from None
    finally:
        store.close()
    lines = export_lines(transcript)
    for number, line in enumerate(lines):
        if not guard.check(line):
            raise CommandError(
                f"sessions export: session {session_id}: "
                + ("its header" if number == 0 else f"entry {number}")
                + " holds a credential agentx knows; nothing was written (WIRE-013)"
            )
    write(b"".join(lines))


def _older_than(value: str) -> timedelta:
    try:
        days = float(value)
    except ValueError:
        days = -1.0
    if not 0 <= days < 100_000:
        raise CommandError("sessions delete: --older-than takes a number of days (0 or more)")
    return timedelta(days=days)


def _doomed(store: SessionStore, age: timedelta, now: datetime) -> list[str]:
    cutoff = now - age
    chosen = []
    for header in store.headers():
        last = _summary(store, header.session_id).last_activity
        if datetime.fromisoformat(last.replace("Z", "+00:00")) < cutoff:
            chosen.append(header.session_id)
    return chosen


def _delete(options: Options, environ: Mapping[str, str], write: Write) -> None:
    age = options.get("--older-than")
    if (age is None) == (not options.positional):
        raise CommandError("sessions delete takes SESSION_IDs or --older-than DAYS, not both")
    ids = [_checked(session_id) for session_id in options.positional]
    older = None if age is None else _older_than(age)
    store = store_of(options.get("--store"), environ, read_only=True)
    if store is None:
        if ids:
            raise CommandError(f"session {ids[0]} is not in the store (it holds no sessions)")
        return
    try:
        if older is not None:
            ids = _doomed(store, older, datetime.now(UTC))
        for session_id in ids:
            try:
                store.delete(session_id)
            except SessionNotFound:
                raise CommandError(f"session {session_id} is not in the store") from None
            except SessionBusy:
                raise CommandError(
                    f"session {session_id} is open in another agentx process; not deleted"
                ) from None
            write(f"{session_id}: deleted\n".encode())
    finally:
        store.close()


def _checked(session_id: str) -> str:
    try:
        return validate_session_id(session_id)
    except SessionError as exc:
        raise CommandError(f"sessions delete: {exc}") from None


_RUN: dict[str, Callable[[Options, Mapping[str, str], Write], None]] = {
    "list": _list,
    "show": _show,
    "export": _export,
    "delete": _delete,
    "copy": run_copy,
}


def run_sessions(
    args: Sequence[str],
    *,
    environ: Mapping[str, str],
    write: Write,
    error: Callable[[str], object],
) -> int:
    """``agentx sessions ...``: 0, or 2 with one line on ``error``."""
    if not args or args[0] in ("--help", "-h"):
        write(USAGE.encode())
        return 0 if args else EXIT_USAGE
    name, rest = args[0], args[1:]
    try:
        if name not in COMMANDS:
            shown = f" {name!r}" if name.isalpha() and len(name) <= 40 else ""
            raise CommandError(
                f"unknown sessions command{shown}: one of {', '.join(COMMANDS)}"
                " (see agentx sessions --help)"
            )
        synopsis, names = COMMANDS[name]
        if any(arg in ("--help", "-h") for arg in rest):
            write(f"usage: agentx sessions {synopsis}\n".encode())
            return 0
        _RUN[name](parse(name, rest, names), environ, write)
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
