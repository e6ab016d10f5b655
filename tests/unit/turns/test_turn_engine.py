"""The turn engine (DEC-TURN-1..4, spec "Core output records", WIRE-012, WIRE-PERM-002).

Driven by the real :class:`ScriptedClient`, small real tools, a real policy
object and a permission gate made of :class:`concurrent.futures.Future` values
the test resolves. Threads are synchronised with events, never sleeps.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, fields
from typing import Any

import pytest

from agentx.messages.accounting import Pricing
from agentx.messages.frozen import FrozenDict, FrozenJSON, freeze
from agentx.messages.outbound import SessionState
from agentx.messages.session_state import SessionStateCore
from agentx.providers.base import (
    Cancelled,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
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
from agentx.turns.results import INTERRUPTED, input_error_result

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


ALLOW = PolicyDecision(behavior="allow")


@dataclass
class RulePolicy:
    """Decides by tool name; anything unnamed is asked. ``addRules`` updates allow."""

    rules: dict[str, PolicyDecision] = field(default_factory=dict)

    def evaluate(self, tool: Any, tool_input: FrozenDict) -> PolicyDecision:
        return self.rules.get(tool.name, PolicyDecision(behavior="ask", blocked_path="/outside"))

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
        return self._record({f.name: getattr(ask, f.name) for f in fields(ask)})

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
    **config: Any,
) -> Rig:
    data = json.dumps({"version": 1, "turns": list(turns)}).encode()
    sink, state, gate = Sink(), StateLog(), gate or FutureGate()
    counter = itertools.count(1)
    engine = TurnEngine(
        config=EngineConfig(session_id=SID, model=MODEL, pricing=pricing, **config),
        provider=ScriptedClient(model=MODEL, turns=parse_script_document(data).turns),
        tools=tools,
        policy=RulePolicy(rules if rules is not None else {}),
        ports=EnginePorts(
            gate=gate,
            state=state,
            emit=sink.emit,
            new_uuid=lambda: uuid_n(next(counter)),
            clock=lambda: 100.0,
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


# -- plain turns -------------------------------------------------------------------


def test_echo_turn_exact_records() -> None:
    r = rig()
    r.run("hello")
    assistant, result = r.sink.records
    assert assistant == {
        "type": "assistant",
        "message": {
            "id": "msg_000000010000400080000000",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": ({"type": "text", "text": "hello"},),
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {**ZERO_USAGE, "input_tokens": 2, "output_tokens": 2},
        },
        "parent_tool_use_id": None,
        "uuid": uuid_n(2),
        "session_id": SID,
    }
    assert result == {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "num_turns": 1,
        "result": "hello",
        "stop_reason": "end_turn",
        "total_cost_usd": None,
        "usage": {**ZERO_USAGE, "input_tokens": 2, "output_tokens": 2},
        "modelUsage": {
            MODEL: {
                "inputTokens": 2,
                "outputTokens": 2,
                "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0,
                "costUSD": None,
            }
        },
        "permission_denials": (),
        "uuid": uuid_n(3),
        "session_id": SID,
    }


def test_prompt_uuid_reaches_the_result() -> None:
    r = rig()
    r.run(prompt_uuid="p-9")
    assert r.result["prompt_uuid"] == "p-9"


def test_partial_messages_stream_events_precede_the_assistant() -> None:
    r = rig(text_turn("a b"), include_partial_messages=True)
    r.run()
    assert shape(r.sink.records) == ["stream_event"] * 7 + ["assistant", "result:success"]
    deltas = [
        rec["event"]["delta"]["text"]
        for rec in r.sink.records
        if rec["type"] == "stream_event" and rec["event"]["type"] == "content_block_delta"
    ]
    assert deltas == ["a ", "b"]


# -- tools -------------------------------------------------------------------------


def test_tool_round_trip_sequence_and_history() -> None:
    echo = EchoTool()
    r = rig(
        tool_turn(("Echo", {"text": "a"}), ("Echo", {"text": "b"}), text="Running"),
        text_turn("done"),
        tools=(echo,),
        rules={"Echo": ALLOW},
    )
    r.run()
    assert shape(r.sink.records) == [
        "assistant",
        "tool_result",
        "tool_result",
        "tool_use_summary",
        "assistant",
        "result:success",
    ]
    first = r.sink.records[0]["message"]
    ids = r.tool_use_ids()
    assert first["stop_reason"] == "tool_use"
    assert first["content"] == (
        {"type": "text", "text": "Running"},
        {"type": "tool_use", "id": ids[0], "name": "Echo", "input": {"text": "a"}},
        {"type": "tool_use", "id": ids[1], "name": "Echo", "input": {"text": "b"}},
    )
    assert tool_results(r.sink.records) == [(ids[0], "echo a", False), (ids[1], "echo b", False)]
    summary = r.sink.records[3]
    assert summary["summary"] == "Ran 2 tool uses: Echo ok, Echo ok"
    assert summary["preceding_tool_use_ids"] == tuple(ids)
    assert r.sink.records[1]["parent_tool_use_id"] is None
    assert (r.result["num_turns"], r.result["result"], r.result["permission_denials"]) == (
        2,
        "done",
        (),
    )
    assert r.state.published == ["running"]
    assert r.engine.history == (
        Message(role="user", content=(TextBlock(text="go"),)),
        Message(
            role="assistant",
            content=(
                TextBlock(text="Running"),
                ToolUseBlock(id=ids[0], name="Echo", input=freeze({"text": "a"})),
                ToolUseBlock(id=ids[1], name="Echo", input=freeze({"text": "b"})),
            ),
        ),
        Message(
            role="user",
            content=(
                ToolResultBlock(tool_use_id=ids[0], content="echo a"),
                ToolResultBlock(tool_use_id=ids[1], content="echo b"),
            ),
        ),
        Message(role="assistant", content=(TextBlock(text="done"),)),
    )


def test_failed_tool_is_an_error_result_and_the_loop_goes_on() -> None:
    r = rig(
        tool_turn(("Fail", {"text": "x"})),
        text_turn("after"),
        tools=(EchoTool("Fail", fail=True),),
        rules={"Fail": ALLOW},
    )
    r.run()
    assert shape(r.sink.records) == [
        "assistant",
        "tool_result!",
        "tool_use_summary",
        "assistant",
        "result:success",
    ]
    assert r.sink.records[2]["summary"] == "Ran 1 tool use: Fail failed"


@pytest.mark.parametrize(
    ("rules", "tools", "message"),
    [
        pytest.param(
            {"Bash": PolicyDecision(behavior="deny", reason="Bash is denied by rule")},
            (EchoTool("Bash"),),
            "Bash is denied by rule",
            id="policy-deny-with-reason",
        ),
        pytest.param(
            {"Bash": PolicyDecision(behavior="deny")},
            (EchoTool("Bash"),),
            "Permission denied",
            id="policy-deny-default-message",
        ),
        pytest.param({}, (), "No such tool available: Bash", id="unknown-tool"),
    ],
)
def test_denied_tool_use(
    rules: dict[str, PolicyDecision], tools: tuple[EchoTool, ...], message: str
) -> None:
    """Each denial records tool name, tool-use id and effective input; the tool never runs."""
    r = rig(
        tool_turn(("Bash", {"command": "rm -rf /"})),
        text_turn("ok"),
        tools=tools,
        rules=rules,
    )
    r.run()
    (tid,) = r.tool_use_ids()
    assert tool_results(r.sink.records) == [(tid, message, True)]
    assert r.result["subtype"] == "success"
    assert r.result["permission_denials"] == (
        {"tool_name": "Bash", "tool_use_id": tid, "tool_input": {"command": "rm -rf /"}},
    )
    assert all(not t.ran for t in tools)
    assert r.gate.asks == []


def test_asked_permission_runs_with_updated_input() -> None:
    """WIRE-PERM-042: ``updatedInput`` is what the tool runs with; the ask
    carries the policy's view."""
    echo = EchoTool()
    gate = FutureGate(
        (PermissionOutcome(behavior="allow", updated_input=freeze({"text": "changed"})),)
    )
    r = rig(tool_turn(("Echo", {"text": "orig"})), text_turn("ok"), tools=(echo,), gate=gate)
    r.run()
    (tid,) = r.tool_use_ids()
    assert echo.ran == [{"text": "changed"}]
    assert tool_results(r.sink.records) == [(tid, "echo changed", False)]
    (asked,) = gate.asks
    assert set(asked) == {
        "tool_name",
        "tool_input",
        "tool_use_id",
        "description",
        "suggestions",
        "blocked_path",
        "cancel",
    }
    assert (asked["tool_name"], asked["tool_input"], asked["tool_use_id"]) == (
        "Echo",
        {"text": "orig"},
        tid,
    )
    assert asked["description"] == "echo orig"
    assert asked["suggestions"] == ({"type": "addRules", "rules": ({"toolName": "Echo"},)},)
    assert asked["blocked_path"] == "/outside"
    assert r.state.published == ["running", "requires_action", "running"]
    assert r.state.core.pending_permissions == 0


def test_updated_permissions_apply_to_later_tool_uses() -> None:
    """WIRE-PERM-022: an allow's session updates reach the policy; the next use is not asked."""
    echo = EchoTool()
    gate = FutureGate(
        (
            PermissionOutcome(
                behavior="allow",
                updated_permissions=(
                    freeze({"type": "addRules", "rules": [{"toolName": "Echo"}]}),
                ),
            ),
        )
    )
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        tool_turn(("Echo", {"text": "b"})),
        text_turn("ok"),
        tools=(echo,),
        gate=gate,
    )
    r.run()
    assert len(gate.asks) == 1
    assert echo.ran == [{"text": "a"}, {"text": "b"}]
    assert r.result["subtype"] == "success"


def test_allow_without_updated_input_runs_the_original() -> None:
    echo = EchoTool()
    gate = FutureGate((PermissionOutcome(behavior="allow"),))
    r = rig(tool_turn(("Echo", {"text": "orig"})), text_turn("ok"), tools=(echo,), gate=gate)
    r.run()
    assert echo.ran == [{"text": "orig"}]


def test_summary_failure_falls_back_to_the_tool_name() -> None:
    """WIRE-PERM-003: the prompt's description is the tool name when summarizing fails."""
    gate = FutureGate((PermissionOutcome(behavior="deny", message="no"),))
    r = rig(tool_turn(("Block", {})), text_turn("ok"), tools=(BlockingTool(),), gate=gate)
    r.run()
    assert gate.asks[0]["description"] == "Block"


def test_deny_with_interrupt_ends_the_turn() -> None:
    """A deny with ``interrupt: true`` aborts: later tool uses get one interrupted result."""
    echo = EchoTool()
    gate = FutureGate(
        (
            PermissionOutcome(behavior="deny", message="stop here", interrupt=True),
            PermissionOutcome(behavior="allow"),
        )
    )
    r = rig(
        tool_turn(("Echo", {"text": "a"}), ("Echo", {"text": "b"})),
        text_turn("never"),
        tools=(echo,),
        gate=gate,
    )
    r.run()
    first, second = r.tool_use_ids()
    assert shape(r.sink.records) == [
        "assistant",
        "tool_result!",
        "tool_result!",
        "tool_use_summary",
        "result:error_during_execution",
    ]
    assert tool_results(r.sink.records) == [(first, "stop here", True), (second, INTERRUPTED, True)]
    assert echo.ran == []
    result = r.result
    assert (result["num_turns"], result["stop_reason"], result["errors"]) == (
        1,
        None,
        (INTERRUPTED,),
    )
    assert result["permission_denials"] == (
        {"tool_name": "Echo", "tool_use_id": first, "tool_input": {"text": "a"}},
    )
    assert "result" not in result
    assert r.state.core.pending_permissions == 0


def _run_in_thread(r: Rig, scope: CancelScope) -> threading.Thread:
    thread = threading.Thread(target=r.run, kwargs={"scope": scope})
    thread.start()
    return thread


def test_interrupt_while_permissions_are_pending() -> None:
    """Every tool use still gets exactly one tool_result, in order, and the turn ends."""
    echo = EchoTool()
    gate = FutureGate(expect=3)
    r = rig(
        tool_turn(("Echo", {"text": "a"}), ("Echo", {"text": "b"}), ("Echo", {"text": "c"})),
        text_turn("never"),
        tools=(echo,),
        gate=gate,
    )
    scope = CancelScope()
    thread = _run_in_thread(r, scope)
    assert gate.all_asked.wait(WAIT)
    assert r.state.published == ["running", "requires_action"]
    scope.cancel()
    # The broker rejects an aborted waiter; a late allow must not run the tool.
    gate.futures[0].set_exception(RuntimeError("permission request aborted"))
    gate.futures[1].set_result(PermissionOutcome(behavior="allow"))
    gate.futures[2].set_result(PermissionOutcome(behavior="deny", message="Interrupted"))
    thread.join(WAIT)
    assert not thread.is_alive()
    ids = r.tool_use_ids()
    assert tool_results(r.sink.records) == [
        (ids[0], "permission request failed", True),
        (ids[1], INTERRUPTED, True),
        (ids[2], "Interrupted", True),
    ]
    assert echo.ran == []
    assert shape(r.sink.records)[-2:] == ["tool_use_summary", "result:error_during_execution"]
    assert r.result["errors"] == (INTERRUPTED,)
    assert [d["tool_use_id"] for d in r.result["permission_denials"]] == [ids[0], ids[2]]
    assert r.state.published == ["running", "requires_action", "running"]
    assert r.state.core.pending_permissions == 0


def test_interrupt_while_a_tool_runs() -> None:
    block = BlockingTool()
    r = rig(tool_turn(("Block", {})), text_turn("never"), tools=(block,), rules={"Block": ALLOW})
    scope = CancelScope()
    thread = _run_in_thread(r, scope)
    assert block.started.wait(WAIT)
    scope.cancel()
    thread.join(WAIT)
    assert not thread.is_alive()
    (tid,) = r.tool_use_ids()
    assert tool_results(r.sink.records) == [(tid, INTERRUPTED, True)]
    assert r.sink.records[-2]["summary"] == "Ran 1 tool use: Block failed"
    assert (r.result["subtype"], r.result["stop_reason"], r.result["num_turns"]) == (
        "error_during_execution",
        None,
        1,
    )


# -- cancellation mid-stream ---------------------------------------------------------


class _ObservedScope(CancelScope):
    """A real CancelScope that reports when the provider starts an interruptible sleep."""

    __slots__ = ("sleeping",)

    def __init__(self) -> None:
        super().__init__()
        self.sleeping = threading.Event()

    def wait(self, timeout: float) -> bool:
        self.sleeping.set()
        return super().wait(timeout)


def test_cancel_mid_stream_is_cancelled_never_success() -> None:
    """Spec "Error result": cancellation while consuming the stream gives stop_reason cancelled."""
    r = rig({"steps": [{"text": "partial"}, {"sleep_ms": 60_000}, {"text": "never"}]})
    scope = _ObservedScope()
    thread = threading.Thread(target=r.run, kwargs={"scope": scope})
    thread.start()
    assert scope.sleeping.wait(WAIT)
    scope.cancel()
    thread.join(WAIT)
    assert not thread.is_alive()
    assert shape(r.sink.records) == ["result:error_during_execution"]
    result = r.result
    assert (result["is_error"], result["stop_reason"], result["errors"]) == (
        True,
        "cancelled",
        (INTERRUPTED,),
    )
    assert "result" not in result
    assert result["num_turns"] == 1


def test_cancelled_before_the_call() -> None:
    r = rig(text_turn("never"))
    scope = CancelScope()
    scope.cancel()
    r.run(scope=scope)
    assert shape(r.sink.records) == ["result:error_during_execution"]
    assert r.result["stop_reason"] == "cancelled"


# -- provider errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "shown"),
    [
        pytest.param([{"text": "partial"}, {"error": "rate_limit"}], "partial", id="after-text"),
        pytest.param([{"error": "rate_limit"}], "scripted rate_limit error", id="no-text"),
    ],
)
def test_provider_error(steps: list[dict[str, Any]], shown: str) -> None:
    r = rig({"steps": steps}, text_turn("never"))
    r.run()
    assert shape(r.sink.records) == ["assistant", "result:error_during_execution"]
    assistant = r.sink.records[0]
    assert assistant["error"] == "rate_limit"
    assert assistant["message"]["content"] == ({"type": "text", "text": shown},)
    assert assistant["message"]["stop_reason"] is None
    assert (r.result["errors"], r.result["stop_reason"], r.result["num_turns"]) == (
        ("rate_limit: scripted rate_limit error",),
        None,
        1,
    )


# -- limits --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("max_turns", "subtype", "records"),
    [
        pytest.param(
            2,
            "success",
            ["assistant", "tool_result", "tool_use_summary", "assistant", "result:success"],
            id="at-the-limit",
        ),
        pytest.param(
            1,
            "error_max_turns",
            ["assistant", "tool_result", "tool_use_summary", "result:error_max_turns"],
            id="one-past-the-limit",
        ),
    ],
)
def test_max_turns(max_turns: int, subtype: str, records: list[str]) -> None:
    """DEC-TURN-4: ``--max-turns`` bounds the model requests of one turn."""
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("done"),
        tools=(EchoTool(),),
        rules={"Echo": ALLOW},
        max_turns=max_turns,
    )
    r.run()
    assert shape(r.sink.records) == records
    assert r.result["num_turns"] == max_turns
    if subtype == "error_max_turns":
        assert r.result["errors"] == ("Reached maximum number of turns (1)",)


def _priced_turn(tokens: int) -> dict[str, Any]:
    return {"steps": [{"text": "hi"}, {"usage": {"input_tokens": tokens, "output_tokens": tokens}}]}


ONE_USD_PER_MTOK = Pricing(input_per_mtok=1.0, output_per_mtok=1.0)


@pytest.mark.parametrize(
    ("pricing", "budget", "subtype", "cost"),
    [
        pytest.param(ONE_USD_PER_MTOK, 1.0, "success", 1.0, id="cost-at-the-budget"),
        pytest.param(
            ONE_USD_PER_MTOK, 0.999999, "error_max_budget_usd", 1.0, id="cost-past-the-budget"
        ),
        pytest.param(None, 0.000001, "success", None, id="unknown-cost-never-trips"),
    ],
)
def test_max_budget_usd(
    pricing: Pricing | None, budget: float, subtype: str, cost: float | None
) -> None:
    """DEC-TURN-4 and WIRE-012: only known cost counts against the budget."""
    r = rig(_priced_turn(500_000), pricing=pricing, max_budget_usd=budget)
    r.run()
    assert shape(r.sink.records) == ["assistant", f"result:{subtype}"]
    assert r.result["total_cost_usd"] == cost
    assert r.result["modelUsage"][MODEL]["costUSD"] == cost
    assert r.result["usage"] == {**ZERO_USAGE, "input_tokens": 500_000, "output_tokens": 500_000}
    if subtype == "error_max_budget_usd":
        assert r.result["errors"] == (f"Reached maximum budget (${budget})",)


def test_cost_accumulates_across_model_calls() -> None:
    r = rig(
        {
            "steps": [
                {"tool_use": {"name": "Echo", "input": {"text": "a"}}},
                {"usage": {"input_tokens": 100_000, "output_tokens": 50_000}},
            ]
        },
        _priced_turn(100_000),
        tools=(EchoTool(),),
        rules={"Echo": ALLOW},
        pricing=ONE_USD_PER_MTOK,
    )
    r.run()
    assert r.result["total_cost_usd"] == pytest.approx(0.35)
    assert r.result["modelUsage"][MODEL]["inputTokens"] == 200_000
    assert r.result["modelUsage"][MODEL]["outputTokens"] == 150_000


# -- input errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pricing", "cost"),
    [pytest.param(None, None, id="unknown-null"), pytest.param(ONE_USD_PER_MTOK, 0, id="zero")],
)
def test_input_error_result_shape(pricing: Pricing | None, cost: float | None) -> None:
    record = input_error_result(
        "queue_full", pricing=pricing, session_id=SID, uuid="u-1", prompt_uuid="p-1"
    )
    assert record == {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "duration_ms": 0,
        "duration_api_ms": 0,
        "num_turns": 0,
        "stop_reason": None,
        "total_cost_usd": cost,
        "usage": ZERO_USAGE,
        "modelUsage": {},
        "permission_denials": (),
        "errors": ("input_error: queue_full",),
        "prompt_uuid": "p-1",
        "uuid": "u-1",
        "session_id": SID,
    }
    assert (record["total_cost_usd"] is None) is (cost is None)
