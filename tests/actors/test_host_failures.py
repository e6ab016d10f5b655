"""Failure injection, one actor at a time, in a real host (DECISIONS section 8).

Each test runs a whole :class:`~agentx.actors.host.Host` in this process
over in-memory pipes and makes one collaborator of one actor (or of a thread
agentx starts) raise. Whatever fails, the session ends the one way: the host
returns status 4, stderr holds exactly one ERROR line naming the actor and
the exception type (never its text, never a traceback), and an active turn
still ends with its ``result``. Every wait is on a future or a condition.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any, ClassVar

import msgspec.structs
import pytest
from loguru import logger

from agentx.actors import host_turns
from agentx.actors.arbiter import PermissionArbiterActor
from agentx.actors.broker import ControlBrokerActor
from agentx.actors.embedded import run_in_thread
from agentx.actors.host_wiring import Router
from agentx.actors.mcp_manager import McpManagerActor
from agentx.actors.turn_runner import TurnRunnerActor
from agentx.actors.upload_manager import UploadManagerActor
from agentx.actors.writer import WriterActor
from agentx.config.cli_args import parse_args
from agentx.launch import launch
from agentx.turns.engine import TurnEngine
from tests.actors.helpers import WAIT, GatedProvider

DUPLEX = ("--input-format", "stream-json", "--output-format", "stream-json")
SECRET = "sk-failure-text-never-printed"
Record = Mapping[str, Any]


class Boom(RuntimeError):
    pass


def boom(*args: Any, **kwargs: Any) -> Any:
    raise Boom(SECRET)


class HostRig:
    """A host over a queue of input chunks and a list of output records."""

    started: ClassVar[list[HostRig]] = []

    def __init__(
        self,
        home: Path,
        *args: str,
        provider: GatedProvider | None = None,
        read_chunk: Callable[[], bytes] | None = None,
    ) -> None:
        session = launch(
            parse_args([*DUPLEX, *args]),
            environ={"AGENTX_HOME": str(home), "PATH": os.environ.get("PATH", "")},
            cwd=str(home),
        )
        if provider is not None:
            session = msgspec.structs.replace(session, client=provider)
        self.input: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._cond = threading.Condition()
        self.records: list[Record] = []
        host = session.host(read_chunk=read_chunk or self.input.get, write=self._write)
        self.done: Future[int] = run_in_thread(host.run, name="test-host")
        HostRig.started.append(self)

    def _write(self, data: bytes) -> int:
        with self._cond:
            self.records.extend(json.loads(line) for line in data.splitlines())
            self._cond.notify_all()
        return len(data)

    def send(self, record: Record) -> None:
        self.input.put(json.dumps(record).encode() + b"\n")

    def close(self) -> None:
        self.input.put(b"")

    def wait_for(self, predicate: Callable[[Record], bool]) -> Record:
        with self._cond:
            assert self._cond.wait_for(lambda: any(predicate(r) for r in self.records), WAIT)
            return next(r for r in self.records if predicate(r))

    def status(self) -> int:
        """The host returned (the process would end) with this status."""
        return self.done.result(WAIT)


def user(text: str) -> Record:
    return {
        "type": "user",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
        "session_id": "",
    }


def control(subtype: str, **fields: Any) -> Record:
    return {
        "type": "control_request",
        "request_id": "r1",
        "request": {"subtype": subtype, **fields},
    }


def is_result(record: Record) -> bool:
    return record.get("type") == "result"


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "home"
    path.mkdir()
    yield path
    for rig in HostRig.started:
        rig.close()  # the reader's daemon thread may still wait on a read
    HostRig.started.clear()


@pytest.fixture
def stderr() -> Iterator[list[str]]:
    """What the CLI would print at its default level (INFO and above)."""
    lines: list[str] = []
    sink = logger.add(
        lambda m: lines.append(f"{m.record['level'].name}: {m.record['message']}"), level="INFO"
    )
    yield lines
    logger.remove(sink)


def assert_one_error(stderr: list[str], where: str) -> None:
    errors = [line for line in stderr if line.startswith("ERROR")]
    assert errors == [f"ERROR: internal failure in {where}: Boom"], stderr
    assert not any(SECRET in line or "Traceback" in line for line in stderr), stderr


def test_the_reader_fails_on_a_read(home: Path, stderr: list[str]) -> None:
    rig = HostRig(home, read_chunk=boom)
    assert rig.status() == 4
    assert rig.records[0]["subtype"] == "init"
    assert_one_error(stderr, "ReaderActor")


def test_the_reader_fails_routing_a_record(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A defect in the router runs on the reader's thread: the reader's failure."""
    monkeypatch.setattr(Router, "__call__", boom)
    rig = HostRig(home)
    rig.send(user("hello"))
    assert rig.status() == 4
    assert not any(is_result(record) for record in rig.records)
    assert_one_error(stderr, "ReaderActor")


def test_the_writer_fails(home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(WriterActor, "_write", boom)
    rig = HostRig(home)
    assert rig.status() == 4
    assert rig.records == []
    assert_one_error(stderr, "WriterActor")


def test_the_runner_fails_admitting_a_prompt(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reproduction: ``_submit`` raises on examples/hello.ndjson's first
    prompt; the session no longer hangs."""
    monkeypatch.setattr(TurnRunnerActor, "_submit", boom)
    rig = HostRig(home)
    rig.send(user("hello"))
    assert rig.status() == 4
    assert_one_error(stderr, "TurnRunnerActor")


def test_the_runner_fails_during_a_turn_the_turn_still_gets_its_result(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TurnRunnerActor, "_interrupt", boom)
    provider = GatedProvider("active")
    rig = HostRig(home, provider=provider)
    rig.send(user("active"))
    assert provider.started.get(timeout=WAIT) == "active"
    rig.send(control("interrupt"))
    assert rig.status() == 4
    assert rig.wait_for(is_result)["subtype"] == "error_during_execution"
    assert_one_error(stderr, "TurnRunnerActor")


def test_the_turn_worker_thread_fails(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An uncaught exception in a thread agentx started (threading.excepthook)."""
    monkeypatch.setattr(TurnRunnerActor, "_run", boom)
    rig = HostRig(home)
    rig.send(user("hello"))
    assert rig.status() == 4
    assert_one_error(stderr, "agentx-turns")


def test_the_supervisor_fails_in_an_operation(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TurnEngine, "context_usage", boom)
    rig = HostRig(home)
    rig.send(control("get_context_usage"))
    assert rig.status() == 4
    assert_one_error(stderr, "SupervisorActor")


def test_the_upload_manager_fails(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(UploadManagerActor, "handle", boom)
    rig = HostRig(home)
    data = b"\x89PNG"
    rig.send(
        {
            "type": "attachment_import",
            "version": 1,
            "upload_id": "upl_1",
            "operation": "begin",
            "prompt_uuid": "11111111-1111-4111-8111-111111111111",
            "attachment_id": "att_1",
            "name": "x.png",
            "size_bytes": len(data),
            "mime_type": "image/png",
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    )
    assert rig.status() == 4, stderr
    assert_one_error(stderr, "UploadManagerActor")


def test_the_broker_fails_on_a_response(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ControlBrokerActor, "on_response", boom)
    rig = HostRig(home)
    rig.send(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": "nobody", "response": {}},
        }
    )
    assert rig.status() == 4
    assert_one_error(stderr, "ControlBrokerActor")


def test_the_arbiter_fails_to_start(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """pykka calls no on_failure for on_start: reported all the same."""
    monkeypatch.setattr(PermissionArbiterActor, "on_start", boom)
    rig = HostRig(home)
    assert rig.status() == 4
    assert_one_error(stderr, "PermissionArbiterActor")


def test_the_mcp_manager_fails_to_start(
    home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(McpManagerActor, "on_start", boom)
    rig = HostRig(home, "--control-profile", "extended")
    assert rig.status() == 4
    assert_one_error(stderr, "McpManagerActor")


def test_a_start_step_fails(home: Path, stderr: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """What started is stopped; ``system/init`` was already written."""
    monkeypatch.setattr(host_turns, "start_turns", boom)
    rig = HostRig(home)
    assert rig.status() == 4
    assert [r["subtype"] for r in rig.records] == ["init"]
    assert_one_error(stderr, "the host's start")


def test_a_clean_end_is_status_0_without_error_lines(home: Path, stderr: list[str]) -> None:
    """The control: the same rig without an injected failure."""
    rig = HostRig(home)
    rig.send(user("hello"))
    rig.close()
    assert rig.status() == 0
    assert rig.wait_for(is_result)["subtype"] == "success"
    assert not [line for line in stderr if line.startswith("ERROR")]
