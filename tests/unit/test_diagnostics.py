"""Library loggers routed into loguru (DECISIONS section 8): a WARNING or
worse is one WARNING line, the traceback only with ``--verbose``; pykka's own
records stay at DEBUG (an actor failure is the supervision tree's one line)."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from loguru import logger

from agentx.diagnostics import Lines, _Sink, route_stdlib_logging
from agentx.diagnostics import logger as agentx_logger

#: A text line's head: its UTC time with milliseconds (DECISIONS section 8).
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


class _Seen(list[str]):
    """A stream that keeps each write: one diagnostics line (and, with
    ``--verbose``, its traceback) per entry."""

    def write(self, text: str) -> None:
        self.append(text)

    def flush(self) -> None:
        pass


def _line_sink(verbose: bool) -> tuple[_Seen, int]:
    seen = _Seen()
    return seen, logger.add(
        Lines(_Sink(seen, verbose)),  # type: ignore[arg-type]
        level="DEBUG",
        format="{message}",
    )


def _untimed(line: str) -> str:
    assert STAMP.match(line), line
    return STAMP.sub("", line, count=1)


@pytest.fixture
def lines() -> Iterator[list[str]]:
    """What a loguru sink at DEBUG sees, one string per message (the
    traceback, when there is one, is part of its message's string). The
    CLI's sink is at INFO without ``--verbose``: a DEBUG line is not shown."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    seen: list[str] = []
    sink = logger.add(lambda m: seen.append(str(m)), level="DEBUG", format="{level}: {message}")
    yield seen
    logger.remove(sink)
    root.handlers[:], level = saved
    root.setLevel(level)
    logging.captureWarnings(False)


def _raise_and_log(name: str) -> None:
    try:
        raise ValueError("sk-secret-in-the-text")
    except ValueError:
        logging.getLogger(name).exception("bad line from server")


def test_a_library_error_is_one_warning_line_without_a_traceback(lines: list[str]) -> None:
    route_stdlib_logging(verbose=False)
    _raise_and_log("mcp.client.stdio")
    assert lines == ["WARNING: mcp.client.stdio: bad line from server\n"]


def test_verbose_keeps_the_traceback(lines: list[str]) -> None:
    route_stdlib_logging(verbose=True)
    _raise_and_log("httpx")
    [line] = lines
    assert line.startswith("WARNING: httpx: bad line from server\n")
    assert "Traceback" in line and "ValueError" in line


@pytest.mark.parametrize("verbose", [False, True])
def test_pykka_is_debug_whatever_its_level(lines: list[str], verbose: bool) -> None:
    route_stdlib_logging(verbose=verbose)
    logging.getLogger("pykka").error("Unhandled exception in ThreadingActor")
    assert [line.split(":")[0] for line in lines] == ["DEBUG"]


def test_info_is_debug_and_only_seen_with_verbose(lines: list[str]) -> None:
    route_stdlib_logging(verbose=False)
    logging.getLogger("httpx").info("HTTP Request: POST")
    logging.getLogger("httpx").warning("retrying")
    assert lines == ["WARNING: httpx: retrying\n"]
    route_stdlib_logging(verbose=True)
    logging.getLogger("httpx").info("HTTP Request: POST")
    assert lines[1:] == ["DEBUG: httpx: HTTP Request: POST\n"]


def test_bad_format_arguments_are_still_one_line(lines: list[str]) -> None:
    route_stdlib_logging(verbose=False)
    logging.getLogger("mcp").warning("%d servers", "not a number")
    assert lines == ["WARNING: mcp: %d servers\n"]


def test_python_warnings_go_the_same_way(lines: list[str]) -> None:
    route_stdlib_logging(verbose=False)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
    [line] = lines
    assert line.startswith("WARNING: py.warnings: ")
    assert "old API" in line


@pytest.mark.parametrize("verbose", [False, True])
def test_an_exception_agentx_logs_is_one_line_unless_verbose(verbose: bool) -> None:
    """A contained failure logged with its exception (``logger.exception``)
    is one line naming the exception's type; the traceback, which may quote
    values, only with ``--verbose``."""
    seen, sink = _line_sink(verbose)
    try:
        try:
            raise ValueError("sk-secret-in-the-text")
        except ValueError:
            logger.exception("turn failed")
    finally:
        logger.remove(sink)
    [message] = map(_untimed, seen)
    if verbose:
        assert message.startswith("agentx: ERROR: turn failed\n")
        assert "Traceback" in message and "sk-secret-in-the-text" in message
    else:
        assert message == "agentx: ERROR: turn failed (ValueError)\n"


LAZY = """
import sys
from agentx.diagnostics import configure_logging, logger
configure_logging(verbose={verbose})
logger.debug("debug line {{}}", 1)
loaded_after_debug = "loguru" in sys.modules
sys.stderr.write(f"after debug: {{loaded_after_debug}}\\n")
logger.warning("first real line {{}}", 2)
sys.stderr.write(f"after warning: {{'loguru' in sys.modules}}\\n")
"""


@pytest.mark.parametrize("verbose", [False, True])
def test_loguru_loads_on_the_first_line_actually_logged(verbose: bool) -> None:
    """DEC-CLI-3: a session that logs nothing never imports loguru; a DEBUG
    line without ``--verbose`` is dropped without importing it; the first
    line that is shown imports it and goes to the configured sink."""
    done = subprocess.run(
        [sys.executable, "-c", LAZY.format(verbose=verbose)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    err = [
        _untimed(line) if STAMP.match(line) else line
        for line in done.stderr.decode("utf-8").splitlines()
    ]
    if verbose:
        assert err == [
            "agentx: DEBUG: debug line 1",
            "after debug: True",
            "agentx: WARNING: first real line 2",
            "after warning: True",
        ]
    else:
        assert err == [
            "after debug: False",
            "agentx: WARNING: first real line 2",
            "after warning: True",
        ]


def test_a_logged_exception_keeps_its_type_through_the_lazy_logger() -> None:
    seen, sink = _line_sink(False)
    try:
        try:
            raise KeyError("k")
        except KeyError:
            agentx_logger.exception("lookup failed")
    finally:
        logger.remove(sink)
    assert list(map(_untimed, seen)) == ["agentx: ERROR: lookup failed (KeyError)\n"]


SESSION = "0b6c2a51-5d1c-4d5e-9b1e-2f1f4c1a9e77"
FORMATS = """
import sys
from agentx.diagnostics import configure_logging, logger
configure_logging(verbose={verbose}, log_format={form!r})
logger.warning("before the session")
logger.set_session({session!r})
try:
    raise KeyError("sk-not-shown")
except KeyError:
    logger.exception("after {{}}", "it")
"""


def _formats(form: str, verbose: bool = False) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", FORMATS.format(verbose=verbose, form=form, session=SESSION)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    return done.stderr.decode("utf-8").splitlines()


def test_text_lines_carry_the_time_and_once_known_the_session() -> None:
    before, after = _formats("text")
    assert _untimed(before) == "agentx: WARNING: before the session"
    assert _untimed(after) == f"session={SESSION} agentx: ERROR: after it (KeyError)"


@pytest.mark.parametrize("verbose", [False, True])
def test_json_lines_are_one_object_each(verbose: bool) -> None:
    import json

    lines = _formats("json", verbose)
    before, after = (json.loads(line) for line in lines[:1] + lines[-1:])
    assert len(lines) == 2
    assert set(before) == {"time", "level", "session", "message", "fields"}
    assert (before["level"], before["session"], before["message"]) == (
        "WARNING",
        None,
        "before the session",
    )
    assert before["time"].endswith("+00:00")
    assert (after["session"], after["message"], after["exception"]) == (
        SESSION,
        "after it",
        "KeyError",
    )
    assert ("traceback" in after) is verbose
    assert ("sk-not-shown" in lines[-1]) is verbose


REDACTED = """
import logging, sys
from agentx.diagnostics import configure_logging, logger
from agentx.providers.errors import Redactor
configure_logging(verbose=True, log_format={form!r})
logger.warning("before the union is known: {{}}", "sk-live-42")
logger.redact_with(Redactor(("sk-live-42", 'quo"te')))
logger.light_warning("a notice naming sk-live-42")
logger.warning("a line naming {{}} and {{}}", "sk-live-42", 'quo"te')
logger.loaded().bind(header="Bearer sk-live-42").warning("a bound field")
logging.getLogger("somelib").warning("a library saw %s", "sk-live-42")
try:
    raise ValueError("sk-live-42 in an exception")
except ValueError:
    logger.exception("a traceback")
"""


@pytest.mark.parametrize("form", ["text", "json"])
def test_once_the_union_is_known_no_line_carries_a_credential(form: str) -> None:
    """DEC-AUTH-3: stderr has no encoder to fail closed, so every line after
    :meth:`~agentx.diagnostics.LazyLogger.redact_with` has the union's
    literals replaced: its message, bound fields and traceback, agentx's
    own lines and the libraries' alike (in JSON, the escaped spelling too)."""
    done = subprocess.run(
        [sys.executable, "-c", REDACTED.format(form=form)],
        capture_output=True,
        timeout=60,
        check=True,
    )
    err = done.stderr.decode("utf-8")
    before, after = err.split("\n", 1)
    assert "sk-live-42" in before  # the control case: nothing redacts yet
    assert "sk-live-42" not in after and 'quo"te' not in after and 'quo\\"te' not in after
    for seen in ("a notice naming", "a line naming", "a bound field", "a library saw"):
        assert seen in after
    assert after.count("[redacted]") >= (6 if form == "json" else 5)  # fields: JSON only
    assert "ValueError" in after  # the traceback is there, redacted


AFTER_START = """
import sys
import agentx.cli as cli
from agentx.diagnostics import logger
write_all = cli._write_all

def observed(fd, data):
    if b'"subtype":"init"' in data:
        logger.warning("a line quoting {}", "sk-from-auth-json")
    return write_all(fd, data)

cli._write_all = observed
sys.exit(cli.main(sys.argv[1:]))
"""


def test_the_cli_redacts_stderr_from_the_start_of_the_protocol(tmp_path: Path) -> None:
    """DEC-AUTH-3: the launcher hands the credential union to the diagnostics
    before ``system/init``, the first record, is written."""
    (tmp_path / "auth.json").write_text(
        json.dumps(
            {
                "version": 2,
                "providers": [
                    {
                        "id": "a",
                        "type": "anthropic",
                        "model": "m",
                        "endpoint": "http://127.0.0.1:9",
                        "api_key": "sk-from-auth-json",
                    }
                ],
            }
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            AFTER_START,
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ],
        input=b"",
        check=False,
        capture_output=True,
        timeout=60,
        env={**os.environ, "AGENTX_HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    err = done.stderr.decode("utf-8")
    assert done.returncode == 0, err
    assert "a line quoting [redacted]" in err
    assert "sk-from-auth-json" not in err + done.stdout.decode("utf-8")
