"""The tool uses of a turn (spec "Permission race", hard-interrupt order,
WIRE-PERM-002): one tool_result per accepted tool-use id, permission asks and
their outcomes, interrupts while asks are pending or a tool runs; over
:mod:`tests.unit.turns.engine_rig`.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentx.messages.frozen import freeze
from agentx.providers.base import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import (
    PermissionOutcome,
    PolicyDecision,
)
from agentx.turns.results import INTERRUPTED
from tests.unit.turns.engine_rig import (
    ALLOW,
    WAIT,
    BlockingTool,
    EchoTool,
    FutureGate,
    Rig,
    RulePolicy,
    rig,
    shape,
    text_turn,
    tool_results,
    tool_turn,
)

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
            {
                "Bash": PolicyDecision(
                    behavior="deny", source="rule", reason="Bash is denied by rule"
                )
            },
            (EchoTool("Bash"),),
            "Bash is denied by rule",
            id="policy-deny-with-reason",
        ),
        pytest.param(
            {"Bash": PolicyDecision(behavior="deny", source="mode")},
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
        "agent",
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


class DenyEvilInput(RulePolicy):
    """Asks for everything; a deny rule refuses the input ``{"text": "evil"}``."""

    def denied_before_run(self, tool: Any, tool_input: Any) -> str | None:
        return "denied by rule Echo(evil)" if tool_input.get("text") == "evil" else None


@pytest.mark.parametrize(("updated", "runs"), [("evil", False), ("fine", True)])
def test_an_updated_input_meets_the_deny_rules_before_it_runs(updated: str, runs: bool) -> None:
    """DEC-SET-1: an allow whose updatedInput a deny rule refuses does not run,
    and the refusal is one of the turn's permission denials."""
    echo = EchoTool()
    gate = FutureGate(
        (PermissionOutcome(behavior="allow", updated_input=freeze({"text": updated})),)
    )
    r = rig(
        tool_turn(("Echo", {"text": "harmless"})),
        text_turn("ok"),
        tools=(echo,),
        gate=gate,
        policy=DenyEvilInput(),
    )
    r.run()
    (tid,) = r.tool_use_ids()
    if runs:
        assert echo.ran == [{"text": updated}]
        assert r.result["permission_denials"] == ()
    else:
        assert echo.ran == []
        assert tool_results(r.sink.records) == [(tid, "denied by rule Echo(evil)", True)]
        assert r.result["permission_denials"] == (
            {"tool_name": "Echo", "tool_use_id": tid, "tool_input": {"text": "evil"}},
        )


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


class RaisingTool(EchoTool):
    """A tool whose run raises what a bug would (spec "Ordering")."""

    def execute(
        self, tool_input: Any, cancel: CancelScope, *, tool_use_id: str
    ) -> tuple[str, bool]:
        raise ValueError("embedded null byte")


class RaisingPolicy:
    def evaluate(self, tool: Any, tool_input: Any) -> PolicyDecision:
        raise RuntimeError("the matcher broke")


def test_a_tool_that_raises_still_gets_one_result_and_the_loop_goes_on() -> None:
    echo = EchoTool()
    r = rig(
        tool_turn(("Boom", {"text": "a\x00b"}), ("Echo", {"text": "b"})),
        text_turn("after"),
        tools=(RaisingTool("Boom"), echo),
        rules={"Boom": ALLOW, "Echo": ALLOW},
    )
    r.run()
    assert shape(r.sink.records) == [
        "assistant",
        "tool_result!",
        "tool_result",
        "tool_use_summary",
        "assistant",
        "result:success",
    ]
    ids = r.tool_use_ids()
    assert tool_results(r.sink.records) == [
        (ids[0], "Boom failed: internal error (ValueError)", True),
        (ids[1], "echo b", False),
    ]
    stored = r.engine.history[2]
    assert [b.tool_use_id for b in stored.content if isinstance(b, ToolResultBlock)] == ids
    assert r.result["result"] == "after"


def test_a_permission_check_that_raises_denies_and_answers_the_tool_use() -> None:
    echo = EchoTool()
    r = rig(tool_turn(("Echo", {"text": "a"})), text_turn("after"), tools=(echo,))
    r.engine._tool_calls._policy = RaisingPolicy()  # type: ignore[assignment]
    r.run()
    assert echo.ran == []
    ids = r.tool_use_ids()
    assert tool_results(r.sink.records) == [
        (ids[0], "permission check failed (RuntimeError)", True)
    ]
    assert r.result["subtype"] == "success"


def test_a_turn_that_fails_after_the_model_asked_for_tools_answers_them() -> None:
    """A failure between the assistant message and its results (here: the
    progress port raises outside any one tool use) still leaves every tool
    use answered, on stdout and in the history."""
    echo = EchoTool()
    r = rig(tool_turn(("Echo", {"text": "a"}), ("Echo", {"text": "b"})), tools=(echo,))
    r.engine._tool_calls._decide_safely = None  # type: ignore[assignment,method-assign]
    r.run()
    ids = r.tool_use_ids()
    assert tool_results(r.sink.records) == [
        (ids[0], "Tool not run: the turn that asked for it ended before its result", True),
        (ids[1], "Tool not run: the turn that asked for it ended before its result", True),
    ]
    assert r.result["subtype"] == "error_during_execution"
    last = r.engine.history[-1]
    assert [b.tool_use_id for b in last.content if isinstance(b, ToolResultBlock)] == ids
