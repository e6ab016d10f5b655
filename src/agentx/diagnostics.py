"""Where agentx's diagnostics go: stderr only, through loguru (DECISIONS section 8).

Every line carries its UTC time and, once the session is known, the session
id: ``2026-12-04T15:40:00.123Z session=<id> agentx: WARNING: ...``. With
``--log-format json`` (or ``AGENTX_LOG_FORMAT=json``) each line is one JSON
object instead: ``time``, ``level``, ``session``, ``message``, ``fields``
(what the line was bound with) and, for a logged exception, ``exception``
(its type; its traceback too with ``--verbose``). ``--log-file PATH`` sends
the lines to that file instead of stderr.

Once the launcher knows the credential union (DEC-AUTH-3) every line, its
bound fields and its traceback have the union's literals replaced
(:meth:`LazyLogger.redact_with`): stderr has no encoder to fail closed.

stdout belongs to the writer. Every library's stdlib logger (pykka, httpx,
mcp, ...) is routed into loguru by :class:`_ToLoguru`: a WARNING or worse is
one WARNING line, the rest DEBUG, and a traceback only with ``--verbose``. An
actor failure pykka logs is the supervision tree's to report (its one ERROR
line of status 4), so pykka's own records stay at DEBUG.

This module is the one way to loguru (DEC-CLI-3, start-up): every module
logs through :data:`logger`, which imports loguru (and its asyncio,
multiprocessing and inspect machinery) on the first line that is actually
logged, with the sink :func:`configure_logging` chose. A clean session logs
nothing and never loads it; a DEBUG line without ``--verbose`` is dropped
without loading it.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from loguru import Logger

LOG_FORMATS = ("text", "json")


class _Sink:
    """The sink :func:`configure_logging` chose, installed when loguru loads."""

    def __init__(self, stream: TextIO, verbose: bool, log_format: str = "text") -> None:
        self.stream = stream
        self.verbose = verbose
        self.log_format = log_format
        #: The session id, once known (:meth:`LazyLogger.set_session`).
        self.session: str | None = None
        #: Replaces every credential literal (DEC-AUTH-3), once the union is
        #: known (:meth:`LazyLogger.redact_with`).
        self.redact: Callable[[str], str] | None = None

    def write(self, line: str) -> None:
        self.stream.write(line)
        self.stream.flush()


class LazyLogger:
    """loguru's logger, imported on the first line that is logged.

    Until :func:`configure_logging` runs (the embedding API, tests), loguru
    keeps its own default sink, as when it was imported directly. Each line
    is logged one frame up (``depth=1``), so loguru names the caller.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logger: Logger | None = None
        self._sink: _Sink | None = None

    def configure(self, sink: _Sink) -> None:
        with self._lock:
            self._sink = sink
            if self._logger is not None:
                _install(self._logger, sink)

    def light_warning(self, message: str) -> None:
        """A WARNING line in the configured form, written without loading
        loguru when it is not loaded yet (a notice every offline session
        gives, DEC-CLI-3); ``message`` is plain text, never a template."""
        sink = self._sink
        if self._logger is not None or sink is None:
            self.loaded().opt(depth=1).warning("{}", message)
            return
        sink.write(render_line(sink, datetime.now(UTC), "WARNING", message))

    def redact_with(self, redact: Callable[[str], str]) -> None:
        """Every later line, its fields and its traceback pass through
        ``redact`` (DEC-AUTH-3): stderr has no encoder to fail closed, so the
        credential union is replaced in every diagnostic instead, whatever a
        library, a hook or a server's answer put into it."""
        sink = self._sink
        if sink is not None:
            sink.redact = redact

    def set_session(self, session_id: str) -> None:
        """Every later line names ``session_id``."""
        sink = self._sink
        if sink is not None:
            sink.session = session_id

    def loaded(self) -> Logger:
        """loguru's logger, imported (and given the chosen sink) on first use."""
        found = self._logger
        if found is not None:
            return found
        with self._lock:
            if self._logger is None:
                from loguru import logger  # noqa: PLC0415 - the point of this class

                if self._sink is not None:
                    _install(logger, self._sink)
                self._logger = logger
            return self._logger

    def drops_debug(self) -> bool:
        """A DEBUG line nobody would see: configured without ``--verbose``
        and loguru not loaded yet (once it is, its sinks decide)."""
        sink = self._sink
        return self._logger is None and sink is not None and not sink.verbose

    def debug(self, message: str, *args: Any, **kwargs: Any) -> None:
        if not self.drops_debug():
            self.loaded().opt(depth=1).debug(message, *args, **kwargs)

    def info(self, message: str, *args: Any, **kwargs: Any) -> None:
        self.loaded().opt(depth=1).info(message, *args, **kwargs)

    def warning(self, message: str, *args: Any, **kwargs: Any) -> None:
        self.loaded().opt(depth=1).warning(message, *args, **kwargs)

    def error(self, message: str, *args: Any, **kwargs: Any) -> None:
        self.loaded().opt(depth=1).error(message, *args, **kwargs)

    def exception(self, message: str, *args: Any, **kwargs: Any) -> None:
        """An ERROR line with the exception being handled (its type only
        without ``--verbose``: :func:`render_line`)."""
        self.loaded().opt(depth=1, exception=True).error(message, *args, **kwargs)

    def opt(self, *, exception: BaseException | bool | None = None) -> Logger:
        return self.loaded().opt(depth=1, exception=exception)


#: Every agentx module logs through this (never ``from loguru import logger``).
logger = LazyLogger()


def _install(loaded: Logger, sink: _Sink) -> None:
    loaded.remove()
    level = "DEBUG" if sink.verbose else "INFO"
    loaded.add(Lines(sink), level=level, format="{message}", backtrace=False, diagnose=False)


def configure_logging(
    verbose: bool, *, log_format: str = "text", stream: TextIO | None = None
) -> None:
    """loguru at INFO (DEBUG with ``--verbose``) on ``stream`` (stderr unless
    ``--log-file``), installed when the first line is logged; the stdlib's
    loggers and Python warnings routed into it."""
    logger.configure(_Sink(stream or sys.stderr, verbose, log_format))
    route_stdlib_logging(verbose)


def render_line(
    sink: _Sink,
    time: datetime,
    level: str,
    message: str,
    *,
    fields: Mapping[str, Any] | None = None,
    exception: tuple[type[BaseException], BaseException | None, TracebackType | None] | None = None,
) -> str:
    """One diagnostics line in the sink's form (the module docstring), with
    its newline. A logged exception is named by its type; its traceback,
    which may quote values, follows only with ``--verbose`` (one line per
    fault, DECISIONS section 8)."""
    trace = ""
    if exception is not None and sink.verbose:
        import traceback  # noqa: PLC0415 - only a logged exception needs it

        trace = "".join(traceback.format_exception(*exception))
    field_text = {k: str(v) for k, v in (fields or {}).items()}
    if sink.redact is not None:
        message, trace = sink.redact(message), sink.redact(trace)
        field_text = {k: sink.redact(v) for k, v in field_text.items()}
    if sink.log_format == "json":
        import ujson  # noqa: PLC0415 - loaded already by the host

        line: dict[str, Any] = {
            "time": time.astimezone(UTC).isoformat(timespec="milliseconds"),
            "level": level,
            "session": sink.session,
            "message": message,
            "fields": field_text,
        }
        if exception is not None:
            line["exception"] = exception[0].__name__
            if trace:
                line["traceback"] = trace
        return ujson.dumps(line, ensure_ascii=False) + "\n"
    utc = time.astimezone(UTC)
    stamp = utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
    session = f" session={sink.session}" if sink.session else ""
    head = f"{stamp}{session} agentx: {level}: {message}"
    if exception is None:
        return head + "\n"
    if trace:
        return head + "\n" + trace
    return f"{head} ({exception[0].__name__})\n"


class Lines:
    """The loguru sink of both log forms: each message through :func:`render_line`."""

    def __init__(self, sink: _Sink) -> None:
        self._sink = sink

    def __call__(self, message: Any) -> None:
        record = message.record
        found = record["exception"]
        exception = None
        if found is not None and found.type is not None:
            exception = (found.type, found.value, found.traceback)
        self._sink.write(
            render_line(
                self._sink,
                record["time"],
                record["level"].name,
                record["message"],
                fields=record["extra"],
                exception=exception,
            )
        )


class _ToLoguru(logging.Handler):
    """A library's log record as one loguru line (see the module docstring)."""

    def __init__(self, verbose: bool) -> None:
        super().__init__(logging.DEBUG if verbose else logging.WARNING)
        self._verbose = verbose

    def emit(self, record: logging.LogRecord) -> None:
        level = "WARNING" if record.levelno >= logging.WARNING else "DEBUG"
        if record.name == "pykka" or record.name.startswith("pykka."):
            level = "DEBUG"
        try:
            message = record.getMessage()
        except Exception:  # a library's bad format arguments: still one line
            message = str(record.msg)
        if level == "DEBUG" and logger.drops_debug():
            return
        exception = record.exc_info if self._verbose and record.exc_info else None
        logger.loaded().opt(exception=exception).log(level, "{}: {}", record.name, message)


def route_stdlib_logging(verbose: bool) -> None:
    """Replace the root logger's handlers with :class:`_ToLoguru`; Python
    warnings go the same way."""
    root = logging.getLogger()
    root.handlers[:] = [_ToLoguru(verbose)]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.captureWarnings(True)
