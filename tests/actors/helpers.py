"""Shared rig for the actor tests that drive a real turn runner: a recording
sink, a gated provider, user records and a runner wired as the host wires it.

Every wait is on a condition, an event or a future; nothing sleeps.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pykka

from agentx.actors.broker import ControlBroker
from agentx.actors.turn_output import TurnOutput
from agentx.actors.turn_runner import CancelQueued, TurnRunnerActor
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_user import TextPart, UserRecord
from agentx.messages.prompt_queue import Priority
from agentx.providers.base import (
    Cancelled,
    CancelToken,
    ModelRequest,
    Stop,
    StreamItem,
    TextBlock,
    TextDelta,
    Usage,
)
from agentx.sessions.identity import SessionIdentity
from agentx.turns.contracts import EngineConfig, EnginePorts, PolicyDecision, TurnInput
from agentx.turns.engine import TurnEngine

WAIT = 10.0
SID = "session-actors"

Record = Mapping[str, Any]


def uuids() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"00000000-0000-4000-8000-{next(counter):012d}"


class Recorder:
    """The writer's stand-in: keeps every record in the order it was handed
    over; ``mark`` adds a non-record event (a hook ran, the runner drained)
    into the same order."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.records: list[Record] = []

    def emit(self, records: tuple[Record, ...]) -> None:
        with self._cond:
            self.records.extend(records)
            self._cond.notify_all()

    __call__ = emit

    def mark(self, name: str) -> None:
        self.emit((FrozenDict(type="mark", name=name),))

    def wait_for(self, predicate: Callable[[Record], bool], count: int = 1) -> list[Record]:
        """Block until ``count`` records match; returns the matching ones."""
        with self._cond:
            assert self._cond.wait_for(
                lambda: sum(1 for r in self.records if predicate(r)) >= count, WAIT
            ), f"timed out waiting for {count} matching record(s): {self.records[-5:]}"
            return [r for r in self.records if predicate(r)]

    def snapshot(self) -> list[Record]:
        with self._cond:
            return list(self.records)


def is_result(record: Record) -> bool:
    return bool(record["type"] == "result")


def is_mark(name: str) -> Callable[[Record], bool]:
    return lambda record: record["type"] == "mark" and record["name"] == name


def user(text: str, *, uuid: str | None = None, priority: Priority | None = None) -> UserRecord:
    return UserRecord(
        line=1,
        raw_size=len(text),
        content=(TextPart(text=text),),
        content_version=None,
        parent_tool_use_id=None,
        uuid=uuid,
        session_id=None,
        priority=priority,
        is_synthetic=None,
        timestamp=None,
        is_replay=False,
        tool_use_result=None,
        warnings=(),
    )


class GatedProvider:
    """A real :class:`~agentx.providers.base.ProviderClient`: answers
    ``answer <prompt>``; a prompt named in ``hold`` stays in its model call
    until the test releases it or the turn is cancelled."""

    def __init__(self, *hold: str) -> None:
        self._gates = {prompt: threading.Event() for prompt in hold}
        self.started: queue.SimpleQueue[str] = queue.SimpleQueue()
        self.seen: list[str] = []

    def release(self, prompt: str) -> None:
        self._gates[prompt].set()

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamItem]:
        prompt = "".join(
            block.text for block in request.messages[-1].content if isinstance(block, TextBlock)
        )
        self.seen.append(prompt)
        self.started.put(prompt)
        gate = self._gates.get(prompt)
        if gate is not None:
            cancel.on_cancel(gate.set)
            assert gate.wait(WAIT)
        if cancel.is_set():
            raise Cancelled
        yield TextDelta(text=f"answer {prompt}")
        yield Usage(input_tokens=1, output_tokens=1)
        yield Stop(stop_reason="end_turn")


class AllowAll:
    """A permission policy with nothing to ask (the runner tests run no tools)."""

    mode = "default"

    def evaluate(self, tool: Any, tool_input: FrozenDict) -> PolicyDecision:
        return PolicyDecision(behavior="allow", source="rule")

    def denied_before_run(self, tool: Any, tool_input: FrozenDict) -> str | None:
        return None

    def suggestions(self, tool: Any, tool_input: FrozenDict) -> tuple[Any, ...]:
        return ()

    def apply(self, updates: tuple[Any, ...]) -> None:
        raise AssertionError("no permission updates in these tests")


class NoGate:
    def ask(self, ask: Any) -> Any:
        raise AssertionError("nothing asks in these tests")

    def ask_network(self, host: str, port: int, *, cancel: Any) -> Any:
        raise AssertionError("nothing asks in these tests")


def to_turn(record: UserRecord) -> TurnInput:
    """Text parts to blocks; the record's uuid becomes the result's
    ``prompt_uuid`` so each result names the prompt it answers."""
    text = "".join(part.text for part in record.content if isinstance(part, TextPart))
    return TurnInput(uuid=record.uuid, content=(TextBlock(text=text),), prompt_uuid=record.uuid)


class RunnerRig:
    """A real TurnRunnerActor over a real TurnEngine, wired as the host wires
    it: the turn output (which also publishes the session state) and the
    interrupt's permission cancels, through a real ControlBroker, write into
    one recording sink."""

    def __init__(
        self,
        provider: GatedProvider,
        *,
        on_drained: Callable[[], None] | None = None,
        check_refs: Callable[[UserRecord], str | None] = lambda record: None,
        abort_permissions: Callable[[Callable[[tuple[Record, ...]], None]], object] | None = None,
        suggest: Callable[[Any], str | None] | None = None,
        actor: type[TurnRunnerActor] = TurnRunnerActor,
    ) -> None:
        self.sink = Recorder()
        self.provider = provider
        identity = SessionIdentity(SID)
        new_uuid = uuids()
        self.output = TurnOutput(self.sink, identity, new_uuid)
        self.broker = ControlBroker.start(emit=self.sink, new_request_id=uuids())
        engine = TurnEngine(
            config=EngineConfig(session_id=SID, model="gated", pricing=None),
            provider=provider,
            tools=(),
            policy=AllowAll(),
            ports=EnginePorts(
                gate=NoGate(), state=self.output, emit=self.output, new_uuid=new_uuid
            ),
            identity=identity,
        )
        self.drained = threading.Event()
        self.ref: pykka.ActorRef[TurnRunnerActor] = actor.start(
            engine=engine,
            turn_output=self.output,
            emit=self.sink,
            session=identity,
            new_uuid=new_uuid,
            pricing=None,
            to_turn=to_turn,
            check_refs=check_refs,
            abort_permissions=abort_permissions or self.broker.abort_all_permissions,
            on_drained=on_drained or self._drained,
            suggest=suggest,
        )

    def _drained(self) -> None:
        self.sink.mark("drained")
        self.drained.set()

    def handled(self) -> None:
        """Return once every message told before was handled: the inbox is
        FIFO, and cancelling an unknown uuid changes nothing."""
        assert self.ref.ask(CancelQueued("no-such-uuid"), timeout=WAIT) is False

    def started(self) -> str:
        """The prompt whose model call began next."""
        return self.provider.started.get(timeout=WAIT)

    def results(self) -> list[Record]:
        return [r for r in self.sink.snapshot() if is_result(r)]
