"""Where agentx's diagnostics go: stderr only, through loguru (DECISIONS section 8).

stdout belongs to the writer. Every library's stdlib logger (pykka, httpx,
mcp, ...) is routed into loguru by :class:`_ToLoguru`: a WARNING or worse is
one WARNING line, the rest DEBUG, and a traceback only with ``--verbose``. An
actor failure pykka logs is the supervision tree's to report (its one ERROR
line of status 4), so pykka's own records stay at DEBUG.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from loguru import logger

if TYPE_CHECKING:
    from loguru import Record

#: The line of every diagnostic with ``--verbose``: loguru appends the
#: traceback of a logged exception to a string format.
VERBOSE_FORMAT = "agentx: {level}: {message}"


def configure_logging(verbose: bool) -> None:
    """loguru on stderr at INFO (DEBUG with ``--verbose``); the stdlib's
    loggers and Python warnings routed into it."""
    logger.remove()
    logger.add(
        sys.stderr,
        level="DEBUG" if verbose else "INFO",
        format=line_format(verbose),
        backtrace=False,
        diagnose=False,
    )
    route_stdlib_logging(verbose)


def line_format(verbose: bool) -> str | Callable[[Record], str]:
    """The stderr line format: with ``--verbose`` a logged exception's
    traceback follows its line; without, the line names the exception's type
    and nothing follows it (one line per fault, DECISIONS section 8)."""
    return VERBOSE_FORMAT if verbose else _one_line


def _one_line(record: Record) -> str:
    exception = record["exception"]
    if exception is not None and exception.type is not None:
        # A class name holds no braces, so it is safe inside the template.
        return VERBOSE_FORMAT + " (" + exception.type.__name__ + ")\n"
    return VERBOSE_FORMAT + "\n"


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
        exception = record.exc_info if self._verbose and record.exc_info else None
        logger.opt(exception=exception).log(level, "{}: {}", record.name, message)


def route_stdlib_logging(verbose: bool) -> None:
    """Replace the root logger's handlers with :class:`_ToLoguru`; Python
    warnings go the same way."""
    root = logging.getLogger()
    root.handlers[:] = [_ToLoguru(verbose)]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.captureWarnings(True)
