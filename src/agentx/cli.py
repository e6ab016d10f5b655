"""The ``agentx`` entry point (DECISIONS sections 8 and 9).

Start-up order: parse the command line; answer ``--version``/``--help`` and
``--list-providers`` without starting anything heavy (lazy imports); load the
registry, settings and selection (any failure is exit 2 with a
credential-free diagnostic and nothing on stdout); keep the real stdout file
descriptor for the writer and point ``sys.stdout`` and fd 1 at stderr so a
stray ``print`` anywhere cannot corrupt the protocol; then run the host.

Signals (DECISIONS section 8): SIGINT, SIGTERM and SIGHUP are handed to the
running host's supervisor, which ends the session the one ordered way and
exits 128+N; a second signal during that shutdown exits at once. Before the
host runs, nothing needs stopping: a signal exits 128+N at once. Only the CLI
installs handlers (:class:`agentx.actors.signals.SignalGate`); the embedding API
never does.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Mapping, Sequence

from agentx import __version__

#: ``typing`` is not imported at run time: ``--version`` loads nothing else.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn, TextIO

    from agentx.config.cli_args import Options

EXIT_ERROR_RESULT = 1
EXIT_USAGE = 2
#: DEC-CLI-6: what ``claude -p`` says, as a sentence of agentx's own.
MISSING_PROMPT = "a prompt is missing: give it after -p, or on stdin"
EXIT_OUTPUT_FAILED = 3
#: SIGINT before the handlers are installed (DECISIONS section 8).
EXIT_SIGINT = 130
#: The interpreter's status when flushing stdout at exit fails.
EXIT_FLUSH_FAILED = 120


def _stdout_open() -> bool:
    try:
        os.fstat(1)
    except OSError:
        return False
    return True


def _write_all(fd: int, data: bytes) -> int:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    return len(data)


def _print(data: bytes, what: str) -> int:
    """Write a command's text answer to stdout; a closed or broken stdout is
    one line and status 3, as with ``--list-providers`` (DECISIONS section 8)."""
    try:
        _write_all(sys.stdout.fileno(), data)
    except OSError:
        sys.stderr.write(f"agentx: writing the {what} to stdout failed\n")
        return EXIT_OUTPUT_FAILED
    return 0


def _stdout_writer() -> Callable[[bytes], None]:
    fd = sys.stdout.fileno()

    def write(data: bytes) -> None:
        _write_all(fd, data)

    return write


def run() -> NoReturn:
    """The console script (``agentx``, ``python -m agentx``): :func:`main`,
    then leave at once (DECISIONS section 8).

    By the time :func:`main` returns, the host's shutdown has drained the
    writer, synced and closed the transcript and stopped every actor and
    child within its deadline; the interpreter's own teardown (freeing every
    module of a loaded session) would only add tens of milliseconds between
    stdin's EOF and the exit the client waits for. So the standard streams
    are flushed and the process exits without it. A flush that fails is
    status 120, as the interpreter's own exit would make it.
    """
    status = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: its descriptor was closed at start
                stream.flush()
        except OSError:
            status = status or EXIT_FLUSH_FAILED
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    answered = _fast_path(args)
    if answered is not None:
        return answered
    # Start-up allocates some hundred thousand objects that all stay alive
    # (modules, classes, functions): the cyclic collector, run every 700
    # allocations, would walk them again and again for nothing (about 5% of
    # a start's CPU). It is back on once the host has started (DEC-CLI-3).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(args, resume_gc=_resume_collector if collecting else _nothing)
    finally:
        if collecting:
            gc.enable()


def _resume_collector() -> None:
    """The collector back on, the start's objects moved out of its reach
    (``gc.freeze``): otherwise its first pass, in the first turn, would walk
    every one of them at once. They are the session's modules, classes and
    fixed state; reference counting still frees any of them that is let go,
    only a cycle among them would stay."""
    gc.freeze()
    gc.enable()


def _nothing() -> None:
    return None


def _main(args: list[str], *, resume_gc: Callable[[], None]) -> int:
    _import_msgspec()
    from agentx.config.cli_args import USAGE, UsageError, help_text, parse_args

    try:
        options = parse_args(args)
    except UsageError as exc:
        sys.stderr.write(f"agentx: {exc}\n{USAGE}")
        return EXIT_USAGE
    if options.version:
        return _print(f"agentx {__version__}\n".encode(), "version")
    if options.help:
        return _print(help_text().encode(), "help")
    prompt = None
    if options.input_format == "text":
        # DEC-CLI-2: text input is -p PROMPT, else stdin to EOF, as one prompt,
        # read before anything starts (DEC-CLI-6: none is a usage error).
        prompt = options.prompt
        if prompt is None:
            prompt = sys.stdin.buffer.read().decode("utf-8", "replace")
        if not prompt.strip():
            sys.stderr.write(f"agentx: {MISSING_PROMPT}\n")
            return EXIT_USAGE
    if not _stdout_open():
        # DECISIONS section 8: no record can be written. Checked before any
        # file is opened, which could otherwise take descriptor 1.
        sys.stderr.write("agentx: stdout is closed; no record can be written\n")
        return EXIT_OUTPUT_FAILED
    return _session(options, prompt, resume_gc=resume_gc)


def _import_msgspec() -> None:
    """msgspec's first import, without ``typing_extensions`` (start-up, DEC-CLI-3).

    msgspec takes ``get_type_hints``, ``Required`` and ``NotRequired`` from
    ``typing_extensions`` when it can import it and from ``typing`` otherwise;
    on Python 3.11 and later both give the same for agentx's types (the
    message types use neither ``ReadOnly`` nor typing_extensions' own
    ``TypedDict``). Importing typing_extensions, with ``inspect``, ``ast`` and
    ``dis`` under it, costs about 8 ms of CPU, a tenth of a whole start. So
    for msgspec's first import it is marked missing, and unmarked at once: a
    library that imports it later (httpx, mcp) loads it as usual. Should a
    msgspec need it, its import fails here and runs again as usual."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]
    try:
        import msgspec  # noqa: F401
    except ImportError:
        pass  # imported again, with typing_extensions, by the first user
    finally:
        del sys.modules["typing_extensions"]


def _fast_path(args: list[str]) -> int | None:
    """The commands answered without parsing a session's options (lazy
    imports: none of them loads the runtime); None for everything else."""
    if args == ["schema"]:
        # The published record schema (closed as WIRE-021 decodes), one JSON document.
        from agentx.messages.encode import encode_record
        from agentx.messages.schema import document

        return _print(encode_record(document()), "schema")
    if args in (["--version"], ["-v"]):
        # Start-up fast path: nothing else on the line, nothing to validate.
        return _print(f"agentx {__version__}\n".encode(), "version")
    if args[:1] == ["sessions"]:
        # DEC-STORE-1: list and copy sessions between stores.
        from agentx.sessions.store.command import run_sessions

        return run_sessions(
            args[1:], environ=os.environ, write=_stdout_writer(), error=sys.stderr.write
        )
    if "--list-providers" in args:
        # Lazy: discovery must not import pykka, Pillow, pypdf or httpx.
        from agentx.config.discovery import run_list_providers

        return run_list_providers(args, env=os.environ, write=_stdout_writer())
    return None


def _log_file(path: str | None) -> TextIO | None:
    """``--log-file``: appended to, line-buffered (DECISIONS section 8)."""
    if path is None:
        return None
    return open(path, "a", encoding="utf-8", buffering=1)


def _session(options: Options, prompt: str | None, *, resume_gc: Callable[[], None]) -> int:
    """Launch the session and run its host; ``prompt`` is text input's one
    prompt (None: the stream-json protocol on stdin)."""
    try:
        from agentx.actors.signals import SignalGate
        from agentx.config.home import os_error_line
        from agentx.diagnostics import LOG_FORMATS, configure_logging
        from agentx.launch import LaunchError, launch
        from agentx.tools.orphans import Orphans
    except KeyboardInterrupt:
        return EXIT_SIGINT
    signals = SignalGate()
    signals.install()
    # DEC-EXIT-1: the CLI owns its process, so everything its children leave
    # behind (setsid, double forks) is reparented to it and ended with it.
    orphans = Orphans()

    log_format = options.log_format or os.environ.get("AGENTX_LOG_FORMAT") or "text"
    if log_format not in LOG_FORMATS:
        sys.stderr.write('agentx: AGENTX_LOG_FORMAT is "text" or "json"\n')
        return EXIT_USAGE
    try:
        stream = _log_file(options.log_file)
    except OSError as exc:
        sys.stderr.write(f"agentx: --log-file: {os_error_line(exc)}\n")
        return EXIT_USAGE
    configure_logging(options.debug, log_format=log_format, stream=stream)
    try:
        session = launch(options, environ=dict(os.environ), cwd=os.getcwd())
    except LaunchError as exc:
        sys.stderr.write(f"agentx: {exc}\n")
        return exc.status
    results = _Results(one_shot=prompt is not None)
    if prompt is None:
        read_chunk: Callable[[], bytes] = lambda: os.read(0, 65536)  # noqa: E731
    else:
        pending = [session.one_shot(prompt)]
        read_chunk = lambda: pending.pop() if pending else b""  # noqa: E731
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    host = session.host(
        read_chunk=read_chunk,
        write=lambda data: _write_all(out_fd, data),
        on_result=results.seen,
        orphans=orphans,
    )
    signals.attach(host.supervision)
    status = host.run(on_started=resume_gc)
    # DEC-CLI-6: a one-shot run whose result is an error exits 1; so does the
    # duplex protocol when the last turn's result was an error (as Claude
    # Code does: the SDKs then raise their result error).
    if status == 0 and results.failed:
        return EXIT_ERROR_RESULT
    return status


class _Results:
    """DEC-CLI-6: whether the run ends in an error result. One-shot: any
    error result; duplex: the last result that ended a model turn."""

    def __init__(self, *, one_shot: bool) -> None:
        self.failed = False
        self._one_shot = one_shot

    def seen(self, result: Mapping[str, object]) -> None:
        if self._one_shot:
            self.failed = self.failed or result.get("is_error") is True
            return
        from agentx.messages.output_modes import turn_failed  # loaded with the host

        failed = turn_failed(result)
        if failed is not None:
            self.failed = failed


if __name__ == "__main__":  # pragma: no cover
    run()
