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

from loguru import logger


def configure_logging(verbose: bool) -> None:
    """loguru on stderr at INFO (DEBUG with ``--verbose``); the stdlib's
    loggers and Python warnings routed into it."""
    logger.remove()
    logger.add(
        sys.stderr,
        level="DEBUG" if verbose else "INFO",
        format="agentx: {level}: {message}",
        backtrace=False,
        diagnose=False,
    )
    route_stdlib_logging(verbose)


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
