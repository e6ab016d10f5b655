"""The background task shell and the end of a turn, with real threads, real
subprocesses and a real internal-event log (DEC-TURN-3,
WIRE-004, DEC-TURN-5, the hard-interrupt order, scenario 15). Tests synchronise on the
records they wait for, never on sleeps."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentx.actors.task_manager import BackgroundTasks
from agentx.actors.turn_output import TurnOutput
from agentx.actors.turn_runner import InputClosed, Submit, TurnRunnerActor
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_user import TextPart, UserRecord
from agentx.messages.tasks import TaskBoard
from agentx.providers.base import TextBlock, ToolSpec
from agentx.providers.scripted import ScriptedClient
from agentx.sessions.event_log import InternalEventLog, read_events
from agentx.sessions.identity import SessionIdentity
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import EngineConfig, EnginePorts, TurnInput
from agentx.turns.engine import TurnEngine
from agentx.turns.suggestions import PromptSuggester
from tests.actors.helpers import AllowAll, NoGate

WAIT = 20.0
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}


class Recorder:
    """The writer's stand-in: keeps every record with the number of flushed
    internal events at the moment it was emitted (scenario 15's observation)."""

    def __init__(self, events_file: Path | None = None) -> None:
        self._cond = threading.Condition()
        self._events_file = events_file
        self.records: list[tuple[Mapping[str, Any], int]] = []

    def emit(self, records: tuple[Mapping[str, Any], ...]) -> None:
        flushed = len(read_events(self._events_file)) if self._events_file else 0
        with self._cond:
            self.records += [(record, flushed) for record in records]
            self._cond.notify_all()

    def wait_for(
        self, predicate: Callable[[Mapping[str, Any]], bool], count: int = 1
    ) -> Mapping[str, Any]:
        """The first matching record, once ``count`` records match."""
        with self._cond:
            assert self._cond.wait_for(
                lambda: sum(1 for r, _ in self.records if predicate(r)) >= count, WAIT
            )
            return next(r for r, _ in self.records if predicate(r))

    def kinds(self) -> list[str]:
        with self._cond:
            return [_kind(record) for record, _ in self.records]


def _kind(record: Mapping[str, Any]) -> str:
    if record.get("subtype") == "session_state_changed":
        return str(record["state"])
    return str(record.get("subtype") if record["type"] == "system" else record["type"])


def _ids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


class Rig:
    def __init__(self, tmp_path: Path) -> None:
        self.events_file = tmp_path / "events.jsonl"
        self.events = InternalEventLog(self.events_file)
        self.sink = Recorder(self.events_file)
        self.identity = SessionIdentity("sid")
        new_uuid = _ids()
        self.output = TurnOutput(
            self.sink.emit, self.identity, new_uuid, events=self.events, hold_result=self._hold
        )
        self.ended: list[tuple[str, str]] = []
        self.tasks = BackgroundTasks(
            new_board=lambda: TaskBoard(
                session_id=lambda: self.identity.id, new_uuid=new_uuid, progress_interval=0.0
            ),
            emit=self.output,
            tasks_dir=tmp_path / "tasks",
            new_uuid=new_uuid,
            on_started=self.output.task_started,
            on_ended=self._on_ended,
        )
        self.cwd = tmp_path

    def _hold(self) -> None:
        self.tasks.hold_result()

    def _on_ended(self, task_id: str, status: str) -> None:
        self.ended.append((task_id, status))
        self.output.task_finished(task_id, status)

    def start(self, command: str) -> str:
        return self.tasks.start(
            command=command,
            description="gated",
            tool_use_id="toolu_1",
            cwd=self.cwd,
            env=ENV,
            timeout_ms=60_000,
        ).task_id


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path)
    yield rig
    rig.tasks.shutdown()


def _gate(tmp_path: Path) -> Path:
    fifo = tmp_path / "gate"
    os.mkfifo(fifo)
    return fifo


def _release(fifo: Path) -> None:
    fd = os.open(fifo, os.O_WRONLY)
    os.write(fd, b"go\n")
    os.close(fd)


def _subtype(name: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda record: record.get("subtype") == name


def test_idle_waits_for_the_task_and_follows_the_flush(rig: Rig, tmp_path: Path) -> None:
    """WIRE-004: the turn ends while its task runs: no idle until the task's
    notification; the internal events are flushed right before idle."""
    fifo = _gate(tmp_path)
    rig.output.turn_started("go")
    task_id = rig.start(f"printf 'step 1\\n'; read line < {fifo}")
    rig.output.turn_finished(more_queued=False, after_result=True)
    rig.sink.wait_for(_subtype("task_progress"))
    assert "idle" not in rig.sink.kinds()
    _release(fifo)
    rig.sink.wait_for(lambda r: r.get("state") == "idle")
    kinds = rig.sink.kinds()
    assert kinds[0:2] == ["running", "task_started"]
    assert kinds[-2:] == ["task_notification", "idle"]
    assert rig.ended == [(task_id, "completed")]
    flushed_at = {_kind(record): flushed for record, flushed in rig.sink.records}
    assert (flushed_at["task_notification"], flushed_at["idle"]) == (0, 1)


def test_the_result_is_held_until_the_task_ends(rig: Rig, tmp_path: Path) -> None:
    """DEC-TURN-5: a turn's result waits for its finite task's notification
    (interrupted or not: the output does not ask); while it waits the task's
    progress goes on."""
    fifo = _gate(tmp_path)
    rig.output.turn_started("go")
    rig.start(f"read line < {fifo}")
    writer = threading.Thread(
        target=rig.output.emit, args=((FrozenDict(type="result", subtype="x", uuid="r1"),),)
    )
    writer.start()
    seen = rig.sink.kinds().count("task_progress")
    rig.sink.wait_for(_subtype("task_progress"), seen + 2)
    assert writer.is_alive() and "result" not in rig.sink.kinds()
    _release(fifo)
    writer.join(WAIT)
    assert not writer.is_alive()
    named = [k for k in rig.sink.kinds() if k in ("result", "task_notification")]
    assert named == ["task_notification", "result"]


def test_a_task_that_ended_before_the_result_does_not_hold_it(rig: Rig) -> None:
    rig.output.turn_started("go")
    rig.start("true")
    rig.sink.wait_for(_subtype("task_notification"))
    rig.output.emit((FrozenDict(type="result", subtype="success", uuid="r0"),))
    assert rig.sink.kinds()[-1] == "result"


def test_stop_task_and_shutdown_end_tasks_stopped(rig: Rig, tmp_path: Path) -> None:
    fifo = _gate(tmp_path)
    first = rig.start(f"read line < {fifo}")
    second = rig.start(f"read line < {fifo}")
    assert rig.tasks.stop("task_nope") == "no background task with id 'task_nope'"
    assert rig.tasks.stop(first) is None
    rig.sink.wait_for(lambda r: r.get("status") == "stopped" and r["task_id"] == first)
    assert rig.tasks.stop(first) == f"background task {first!r} is not running (stopped)"
    rig.tasks.shutdown()
    assert sorted(rig.ended) == sorted([(first, "stopped"), (second, "stopped")])
    with pytest.raises(OSError, match="shutting down"):
        rig.start("true")


def test_background_work_is_a_task_stop_task_and_its_timeout_reach(rig: Rig) -> None:
    """DEC-TURN-3: work that is not a process (a background subagent) is a
    row of the task table: stop_task and its timeout cancel its scope, the
    board writes no records for it (it writes its own), the result waits."""
    started = threading.Event()
    seen: list[bool] = []

    def work(scope: CancelScope) -> bool:
        started.set()
        seen.append(scope.wait(30))
        return False

    rig.tasks.start_work(
        task_id="a1",
        description="d",
        tool_use_id="t",
        task_type="local_agent",
        timeout=60,
        work=work,
    )
    assert started.wait(10)
    assert rig.tasks.stop("a1") is None
    rig.tasks.start_work(
        task_id="a2",
        description="d",
        tool_use_id="t",
        task_type="local_agent",
        timeout=0.05,
        work=lambda scope: scope.wait(30),
    )
    rig.tasks.hold_result()
    rig.tasks.shutdown()  # joins the task threads: every end is reported
    assert seen == [True]
    assert sorted(rig.ended) == [("a1", "stopped"), ("a2", "completed")]
    assert not [r for r, _ in rig.sink.records if str(r.get("subtype", "")).startswith("task_")]


def _user(text: str) -> UserRecord:
    return UserRecord(
        line=1,
        raw_size=len(text),
        content=(TextPart(text=text),),
        content_version=None,
        parent_tool_use_id=None,
        uuid=None,
        session_id=None,
        priority=None,
        is_synthetic=None,
        timestamp=None,
        is_replay=False,
        tool_use_result=None,
        warnings=(),
    )


def test_scenario_15_result_suggestion_summary_flush_idle(rig: Rig) -> None:
    """Scenario 15 (WIRE-004): after the result come the suggestion and the
    summary, then the internal-event flush (observed through the store at the
    moment each record is emitted), then idle; no record claims delivery."""
    new_uuid = _ids()
    client = ScriptedClient(model="m", suggestions=("and then?",))
    engine = TurnEngine(
        config=EngineConfig(session_id="sid", model="m", pricing=None),
        provider=client,
        tools=(),
        policy=AllowAll(),
        ports=EnginePorts(gate=NoGate(), state=rig.output, emit=rig.output, new_uuid=new_uuid),
        identity=rig.identity,
    )
    drained = threading.Event()
    runner = TurnRunnerActor.start(
        engine=engine,
        turn_output=rig.output,
        emit=rig.sink.emit,
        session=rig.identity,
        new_uuid=new_uuid,
        pricing=None,
        to_turn=lambda record: TurnInput(uuid=None, content=(TextBlock(text="hello"),)),
        check_refs=lambda record: None,
        abort_permissions=lambda write_cancels: None,
        on_drained=drained.set,
        suggest=PromptSuggester(
            provider=client,
            model="m",
            system=lambda: "",
            tools=tuple[ToolSpec, ...](),
            effort=None,
            history=lambda: engine.history,
        ),
        post_turn_summaries=True,
    )
    runner.tell(Submit(_user("hello")))
    runner.tell(InputClosed())
    assert drained.wait(WAIT)
    order = [(_kind(record), flushed) for record, flushed in rig.sink.records]
    assert order[-4:] == [
        ("result", 0),
        ("prompt_suggestion", 0),
        ("post_turn_summary", 0),
        ("idle", 1),
    ]
    (turn_end,) = read_events(rig.events_file)
    result = next(record for record, _ in rig.sink.records if record["type"] == "result")
    suggestion = next(r for r, _ in rig.sink.records if r["type"] == "prompt_suggestion")
    assert turn_end == {
        "type": "turn_end",
        "result_uuid": result["uuid"],
        "subtype": "success",
        "prompt_suggestion_uuid": suggestion["uuid"],
    }
    assert suggestion["suggestion"] == "and then?"
    for record, _ in rig.sink.records:
        text = str(record).lower()
        assert "deliver" not in text and "acknowledg" not in text


def test_an_ephemeral_session_removes_its_task_dir_and_an_empty_parent(tmp_path: Path) -> None:
    from agentx.actors.task_manager import remove_task_dir

    parent = tmp_path / "agentx-tasks"
    mine, other = parent / "session-a", parent / "session-b"
    for folder in (mine, other):
        folder.mkdir(parents=True)
        (folder / "t1.output").write_text("x")
    remove_task_dir(mine)
    assert not mine.exists() and other.exists()  # another session's tasks stay
    remove_task_dir(other)
    assert not parent.exists()
    remove_task_dir(other)  # nothing left to remove: no error
