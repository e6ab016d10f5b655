"""The turn engine's test rig: the real :class:`ScriptedClient`, small real
tools, a real policy object and a permission gate made of
:class:`concurrent.futures.Future` values the test resolves, and helpers that
picture the record sequence. Threads are synchronised with events, never sleeps.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import msgspec.structs

from agentx.messages.accounting import Pricing
from agentx.messages.frozen import FrozenDict, FrozenJSON, freeze
from agentx.messages.outbound import SessionState
from agentx.messages.session_state import SessionStateCore
from agentx.providers.base import (
    Cancelled,
    TextBlock,
    ToolSpec,
)
from agentx.providers.scripted import ScriptedClient, parse_script_document
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import (
    EngineConfig,
    EnginePorts,
    PermissionAsk,
    PermissionOutcome,
    PolicyDecision,
    TurnInput,
)
from agentx.turns.engine import TurnEngine

SID = "session-1"
MODEL = "scripted-1"
ZERO_USAGE = {
    "input_tokens": 0,
    "output_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
WAIT = 30.0  # generous bound for event waits; a pass never gets near it


# -- real collaborators ----------------------------------------------------------


class EchoTool:
    """Answers ``echo <text>``; remembers every input it ran with."""

    def __init__(self, name: str = "Echo", *, fail: bool = False) -> None:
        self._name = name
        self._fail = fail
        self.ran: list[FrozenDict] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self._name, description="echo", input_schema=FrozenDict(type="object"))

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        return f"echo {tool_input.get('text', '')}"

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str
    ) -> tuple[str, bool]:
        self.ran.append(tool_input)
        return f"echo {tool_input.get('text', '')}", self._fail


class BlockingTool:
    """Waits for the turn's cancel, then raises Cancelled (a long tool interrupted)."""

    def __init__(self) -> None:
        self.started = threading.Event()

    @property
    def name(self) -> str:
        return "Block"

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name="Block", description="block", input_schema=FrozenDict(type="object"))

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        raise RuntimeError("no summary")

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str
    ) -> tuple[str, bool]:
        self.started.set()
        if cancel.wait(WAIT):
            raise Cancelled
        return "finished", False


ALLOW = PolicyDecision(behavior="allow", source="rule")


@dataclass
class RulePolicy:
    """Decides by tool name; anything unnamed is asked. ``addRules`` updates allow."""

    rules: dict[str, PolicyDecision] = field(default_factory=dict)
    mode: str = "default"

    def evaluate(self, tool: Any, tool_input: FrozenDict) -> PolicyDecision:
        return self.rules.get(
            tool.name, PolicyDecision(behavior="ask", source="boundary", blocked_path="/outside")
        )

    def denied_before_run(self, tool: Any, tool_input: FrozenDict) -> str | None:
        """A deny-by-name rule also holds when the input was replaced (DEC-SET-1)."""
        decision = self.rules.get(tool.name)
        return decision.reason if decision is not None and decision.behavior == "deny" else None

    def suggestions(self, tool: Any, tool_input: FrozenDict) -> tuple[FrozenJSON, ...]:
        return (freeze({"type": "addRules", "rules": [{"toolName": tool.name}]}),)

    def apply(self, updates: tuple[Any, ...]) -> None:
        for update in updates:
            for rule in update["rules"]:
                self.rules[rule["toolName"]] = ALLOW


class FutureGate:
    """Hands out futures; preset answers resolve them at once, otherwise the test does."""

    def __init__(self, answers: tuple[PermissionOutcome, ...] = (), *, expect: int = 0) -> None:
        self._answers = list(answers)
        self._expect = expect
        self.asks: list[dict[str, Any]] = []
        self.futures: list[Future[PermissionOutcome]] = []
        self.all_asked = threading.Event()

    def ask_network(self, host: str, port: int, *, cancel: Any) -> Future[PermissionOutcome]:
        return self._record({"tool_name": "SandboxNetworkAccess", "host": host, "port": port})

    def ask(self, ask: PermissionAsk) -> Future[PermissionOutcome]:
        return self._record(msgspec.structs.asdict(ask))

    def _record(self, asked: dict[str, Any]) -> Future[PermissionOutcome]:
        future: Future[PermissionOutcome] = Future()
        if self._answers:
            future.set_result(self._answers.pop(0))
        self.asks.append(asked)
        self.futures.append(future)
        if len(self.asks) == self._expect:
            self.all_asked.set()
        return future


class StateLog:
    """The real session state core; records what would be published."""

    def __init__(self) -> None:
        self.core = SessionStateCore()
        self.published: list[SessionState] = []
        self._record(self.core.turn_started())

    def _record(self, state: SessionState | None) -> None:
        if state is not None:
            self.published.append(state)

    def permission_opened(self) -> None:
        self._record(self.core.permission_opened())

    def permission_closed(self) -> None:
        self._record(self.core.permission_closed())


class Sink:
    def __init__(self) -> None:
        self.records: list[Mapping[str, Any]] = []

    def emit(self, records: tuple[Mapping[str, Any], ...]) -> None:
        self.records.extend(records)


def uuid_n(n: int) -> str:
    return f"{n:08x}-0000-4000-8000-000000000000"


@dataclass
class Rig:
    engine: TurnEngine
    sink: Sink
    state: StateLog
    gate: FutureGate
    tools: dict[str, Any]

    def run(self, text: str = "go", scope: CancelScope | None = None, **turn: Any) -> None:
        self.engine.run_turn(
            TurnInput(uuid="prompt-1", content=(TextBlock(text=text),), **turn),
            scope or CancelScope(),
        )

    @property
    def result(self) -> Mapping[str, Any]:
        assert self.sink.records[-1]["type"] == "result"
        return self.sink.records[-1]

    def tool_use_ids(self) -> list[str]:
        return [
            block["id"]
            for record in self.sink.records
            if record["type"] == "assistant"
            for block in record["message"]["content"]
            if block["type"] == "tool_use"
        ]


def rig(
    *turns: dict[str, Any],
    tools: tuple[Any, ...] = (),
    rules: dict[str, PolicyDecision] | None = None,
    gate: FutureGate | None = None,
    pricing: Pricing | None = None,
    hooks: Any = None,
    policy: Any = None,
    **config: Any,
) -> Rig:
    data = json.dumps({"version": 1, "turns": list(turns)}).encode()
    sink, state, gate = Sink(), StateLog(), gate or FutureGate()
    counter = itertools.count(1)
    engine = TurnEngine(
        config=EngineConfig(session_id=SID, model=MODEL, pricing=pricing, **config),
        provider=ScriptedClient(model=MODEL, turns=parse_script_document(data).turns),
        tools=tools,
        policy=policy or RulePolicy(rules if rules is not None else {}),
        ports=EnginePorts(
            gate=gate,
            state=state,
            emit=sink.emit,
            new_uuid=lambda: uuid_n(next(counter)),
            clock=lambda: 100.0,
            hooks=hooks,
        ),
    )
    return Rig(engine, sink, state, gate, {t.name: t for t in tools})


def shape(records: list[Mapping[str, Any]]) -> list[str]:
    """A compact picture of the record sequence."""
    out: list[str] = []
    for r in records:
        if r["type"] == "user":
            (block,) = r["message"]["content"]
            out.append(f"tool_result{'!' if block['is_error'] else ''}")
        elif r["type"] == "result":
            out.append(f"result:{r['subtype']}")
        else:
            out.append(r["type"])
    return out


def tool_results(records: list[Mapping[str, Any]]) -> list[tuple[str, str, bool]]:
    return [
        (b["tool_use_id"], b["content"], b["is_error"])
        for r in records
        if r["type"] == "user"
        for b in r["message"]["content"]
    ]


def tool_turn(*uses: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"text": text}] if text else []
    steps += [{"tool_use": {"name": name, "input": inp}} for name, inp in uses]
    return {"steps": steps}


def text_turn(text: str) -> dict[str, Any]:
    return {"steps": [{"text": text}]}
