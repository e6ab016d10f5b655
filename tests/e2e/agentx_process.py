"""Drive the real ``agentx`` executable over pipes (the end-to-end harness).

Every test talks to a real process: records go to its stdin as bytes, a
reader thread parses each stdout line strictly, and tests wait for records
with timeouts on a queue (never sleeps).
"""

from __future__ import annotations

import functools
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

Record = dict[str, Any]

DEFAULT_TIMEOUT = 20.0


def agentx_command() -> list[str]:
    """The installed console script, else ``python -m agentx``."""
    script = Path(sys.executable).with_name("agentx")
    if script.exists():
        return [str(script)]
    found = shutil.which("agentx")
    return [found] if found else [sys.executable, "-m", "agentx"]


def _strict_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate member in agentx output")
    return obj


@functools.cache
def _validator() -> Any:
    from jsonschema import Draft202012Validator

    from agentx.messages.schema import document

    return Draft202012Validator(document("outbound"))


def parse_line(line: bytes) -> Record:
    """One stdout record: exactly one JSON object per physical line, valid
    against the published schema (WIRE-021: the schema cannot drift)."""
    assert line.endswith(b"\n"), "every record ends with a newline"
    body = line[:-1]
    assert b"\n" not in body and b"\r" not in body
    value = json.loads(body.decode("utf-8"), object_pairs_hook=_strict_pairs)
    assert isinstance(value, dict)
    errors = sorted(_validator().iter_errors(value), key=lambda e: list(e.path))
    assert not errors, f"record does not match the published schema: {errors[0].message[:300]}"
    return value


def encode(record: Mapping[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False).encode("utf-8") + b"\n"


def user(text: str, **extra: Any) -> Record:
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "",
        **extra,
    }


def control(request_id: str, subtype: str, **fields: Any) -> Record:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": subtype, **fields},
    }


#: Variables that would make or steer a provider (DEC-AUTH-4): a test sets
#: them itself, so a developer's own key never reaches a test run.
PROVIDER_ENV_PREFIXES = ("AGENTX_", "ANTHROPIC_", "OPENAI_", "AZURE_OPENAI_")


def base_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test's environment without provider variables, and without
    ``CLAUDE_CODE_ENTRYPOINT`` (an SDK's would choose the sdk profile,
    DEC-PROFILE-2): the spec's standalone host unless a test asks."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(PROVIDER_ENV_PREFIXES) and k != "CLAUDE_CODE_ENTRYPOINT"
    }
    env["AGENTX_HOME"] = str(home)
    env.update(extra or {})
    return env


def run_once(
    args: Iterable[str],
    stdin: bytes,
    *,
    home: Path,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run agentx to completion with all of ``stdin`` and return raw output;
    ``env`` adds variables to :func:`base_env`."""
    return subprocess.run(
        [*agentx_command(), *args],
        input=stdin,
        capture_output=True,
        env=base_env(home, env),
        cwd=cwd or home,
        timeout=timeout,
        check=False,
    )


def records_of(stdout: bytes) -> list[Record]:
    lines = stdout.splitlines(keepends=True)
    return [parse_line(line) for line in lines]


DUPLEX = ("--input-format", "stream-json", "--output-format", "stream-json")


class AgentxProcess:
    """An interactive agentx over pipes."""

    def __init__(
        self,
        args: Iterable[str] = DUPLEX,
        *,
        home: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.proc = subprocess.Popen(
            [*agentx_command(), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=base_env(home, env),
            cwd=cwd or home,
        )
        self.records: queue.Queue[Record | None] = queue.Queue()
        self.seen: list[Record] = []
        self.raw = bytearray()
        self._stderr = bytearray()
        self._stderr_grew = threading.Condition()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._err_reader.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.raw += line
            self.records.put(parse_line(line))
        self.records.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._stderr_grew:
                self._stderr += line
                self._stderr_grew.notify_all()

    def send(self, *records: Mapping[str, Any]) -> None:
        self.send_bytes(b"".join(encode(r) for r in records))

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def next(self, timeout: float = DEFAULT_TIMEOUT) -> Record:
        record = self.records.get(timeout=timeout)
        assert record is not None, "agentx closed stdout"
        self.seen.append(record)
        return record

    def until(
        self, predicate: Callable[[Record], bool], timeout: float = DEFAULT_TIMEOUT
    ) -> list[Record]:
        """Records up to and including the first one matching ``predicate``."""
        got: list[Record] = []
        while True:
            record = self.next(timeout)
            got.append(record)
            if predicate(record):
                return got

    def rest(self, timeout: float = DEFAULT_TIMEOUT) -> list[Record]:
        """Every record until stdout closes."""
        got: list[Record] = []
        while True:
            record = self.records.get(timeout=timeout)
            if record is None:
                return got
            self.seen.append(record)
            got.append(record)

    def wait(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        code = self.proc.wait(timeout=timeout)
        self._err_reader.join(timeout)
        return code

    def until_stderr(self, text: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Wait until ``text`` has appeared on stderr (a deadline, no polling)."""
        with self._stderr_grew:
            found = self._stderr_grew.wait_for(lambda: text.encode() in self._stderr, timeout)
        assert found, f"{text!r} not on stderr within {timeout} s: {self.stderr}"

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def is_result(record: Record) -> bool:
    return record.get("type") == "result"


def is_can_use_tool(record: Record) -> bool:
    """A ``can_use_tool`` permission request (WIRE-PERM-001)."""
    request = record.get("request") or {}
    return record.get("type") == "control_request" and request.get("subtype") == "can_use_tool"


def allow(request: Record) -> Record:
    """The host's plain ``allow`` answer to a ``can_use_tool`` request."""
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request["request_id"],
            "response": {"behavior": "allow"},
        },
    }


def is_control_response(request_id: str) -> Callable[[Record], bool]:
    def match(record: Record) -> bool:
        response = record.get("response") or {}
        return record.get("type") == "control_response" and response.get("request_id") == request_id

    return match


def is_state(state: str) -> Callable[[Record], bool]:
    def match(record: Record) -> bool:
        return record.get("subtype") == "session_state_changed" and record.get("state") == state

    return match


def write_auth(home: Path, providers: list[Record]) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "auth.json"
    path.write_text(json.dumps({"version": 2, "providers": providers}))
    return path


def write_script(path: Path, turns: list[Record], *, suggestions: tuple[str, ...] = ()) -> Path:
    document: Record = {"version": 1, "turns": turns}
    if suggestions:
        document["suggestions"] = list(suggestions)
    path.write_text(json.dumps(document))
    return path


def scripted_session(
    home: Path,
    turns: list[Record],
    processes: list[AgentxProcess],
    *extra: str,
    suggestions: tuple[str, ...] = (),
) -> AgentxProcess:
    """A duplex ``agentx`` on one scripted profile, run in ``home``'s sibling
    ``work`` directory and registered in ``processes`` for cleanup."""
    script = write_script(home / "script.json", turns, suggestions=suggestions)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    work = home.parent / "work"
    work.mkdir(exist_ok=True)
    proc = AgentxProcess((*DUPLEX, *extra), home=home, cwd=work)
    processes.append(proc)
    return proc


#: A diagnostic line's head: its UTC time and, once known, the session
#: (DECISIONS section 8).
LOG_HEAD = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (?:session=[0-9a-f-]{36} )?")


def log_lines(stderr: str | bytes) -> list[str]:
    """The diagnostic lines of ``stderr`` without their time and session."""
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    return [LOG_HEAD.sub("", line, count=1) for line in text.splitlines()]


def write_anthropic_auth(home: Path, url: str, api_key: str) -> None:
    """One ``anthropic`` profile ``a`` (model ``model-x``) at the loopback ``url``."""
    write_auth(
        home,
        [{"id": "a", "type": "anthropic", "model": "model-x", "endpoint": url, "api_key": api_key}],
    )
