"""The operator's view of a real session's diagnostics (DECISIONS section 8):
each line carries its UTC time and the session id; ``--log-format json`` and
``AGENTX_LOG_FORMAT=json`` give one JSON object a line; ``--log-file`` moves
the lines to a file; a bad value is one usage line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.agentx_process import (
    DUPLEX,
    LOG_HEAD,
    base_env,
    encode,
    log_lines,
    records_of,
    run_once,
    user,
)

#: An invalid stream-json line: one WARNING line, and the session goes on.
BAD_LINE = b'{"type": "user", "message": \n'


def _session_id(stdout: bytes) -> str:
    return str(records_of(stdout)[0]["session_id"])


def test_text_lines_carry_the_time_and_the_session(home: Path) -> None:
    done = run_once(DUPLEX, BAD_LINE + encode(user("after")), home=home)
    assert done.returncode in (0, 1), done.stderr
    session = _session_id(done.stdout)
    lines = done.stderr.decode().splitlines()
    assert lines, "the invalid line is reported"
    for line in lines:
        head = LOG_HEAD.match(line)
        assert head is not None, line
        assert f"session={session} " in head.group(0)
    assert all(line.startswith("agentx: ") for line in log_lines(done.stderr))


def test_json_lines_by_flag_and_by_environment(home: Path) -> None:
    for args, extra in (
        ([*DUPLEX, "--log-format", "json"], {}),
        (DUPLEX, {"AGENTX_LOG_FORMAT": "json"}),
    ):
        done = run_once(
            args, BAD_LINE + encode(user("after")), home=home, env=base_env(home, extra)
        )
        session = _session_id(done.stdout)
        lines = [json.loads(line) for line in done.stderr.decode().splitlines()]
        assert lines, done.stderr
        for line in lines:
            assert set(line) >= {"time", "level", "session", "message", "fields"}
            assert line["session"] == session
            assert line["level"] in ("WARNING", "ERROR", "INFO")


def test_log_file_takes_the_lines_instead_of_stderr(home: Path, tmp_path: Path) -> None:
    log = tmp_path / "agentx.log"
    done = run_once([*DUPLEX, "--log-file", str(log)], BAD_LINE + encode(user("x")), home=home)
    assert done.stderr == b""
    written = log.read_text().splitlines()
    assert written and all(LOG_HEAD.match(line) for line in written)


def test_bad_log_settings_are_one_usage_line(home: Path, tmp_path: Path) -> None:
    wrong = run_once(DUPLEX, b"", home=home, env=base_env(home, {"AGENTX_LOG_FORMAT": "xml"}))
    assert (wrong.returncode, wrong.stdout) == (2, b"")
    assert wrong.stderr == b'agentx: AGENTX_LOG_FORMAT is "text" or "json"\n'
    folder = tmp_path / "missing" / "agentx.log"
    unopenable = run_once([*DUPLEX, "--log-file", str(folder)], b"", home=home)
    assert (unopenable.returncode, unopenable.stdout) == (2, b"")
    assert unopenable.stderr.decode().startswith(f"agentx: --log-file: {folder}")
    assert len(unopenable.stderr.splitlines()) == 1
