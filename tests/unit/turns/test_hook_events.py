"""The hook events in the turn loop (DECISIONS section 3): where each fires, with what
input, and what each output does to the turn; over a scripted HookPort
(the hooks themselves run for real in tests/unit/hooks and tests/e2e)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.hooks.aggregate import NOTHING, EventOutcome
from agentx.messages.slash_commands import SlashCommand
from agentx.providers.base import TextBlock, ToolResultBlock
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionOutcome, PolicyDecision
from tests.unit.turns.engine_rig import (
    ALLOW,
    EchoTool,
    FutureGate,
    RulePolicy,
    rig,
    shape,
    text_turn,
    tool_results,
    tool_turn,
)


@dataclass
class ScriptedHooks:
    """Answers each event with the next scripted outcome (else nothing)."""

    script: dict[str, list[EventOutcome]] = field(default_factory=dict)
    fired: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)
    start_source: str = "startup"

    def fire(
        self,
        event: str,
        fields: Mapping[str, Any],
        *,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> EventOutcome:
        self.fired.append((event, dict(fields)))
        queue = self.script.get(event, [])
        return queue.pop(0) if queue else NOTHING

    def events(self) -> list[str]:
        return [event for event, _ in self.fired]

    def fields(self, event: str) -> list[Mapping[str, Any]]:
        return [f for e, f in self.fired if e == event]


class InputPolicy(RulePolicy):
    """Denies any Echo whose text is ``rm`` (a deny rule on the input)."""

    def evaluate(self, tool: Any, tool_input: FrozenDict) -> PolicyDecision:
        if tool_input.get("text") == "rm":
            return PolicyDecision(behavior="deny", source="rule", reason="denied by rule Echo(rm)")
        return super().evaluate(tool, tool_input)


MODE_ASK = PolicyDecision(behavior="ask", source="mode", reason="default mode asks for Echo")
RULE_ASK = PolicyDecision(behavior="ask", source="rule", reason="rule Echo asks")


def _pre(**kw: Any) -> dict[str, list[EventOutcome]]:
    return {"PreToolUse": [EventOutcome(**kw)]}


def _model_texts(r: Any) -> list[str]:
    """Every text and tool-result block the model saw in the history."""
    return [
        block.text if isinstance(block, TextBlock) else block.content
        for message in r.engine.history
        for block in message.content
        if isinstance(block, TextBlock | ToolResultBlock)
    ]


# -- PreToolUse --------------------------------------------------------------------


def test_pre_tool_use_input_and_a_block_keeps_the_tool_from_running() -> None:
    echo = EchoTool()
    hooks = ScriptedHooks(_pre(decision="block", reasons=("no echo",)))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": ALLOW},
        hooks=hooks,
    )
    r.run()
    assert echo.ran == []
    (tool_use_id,) = r.tool_use_ids()
    assert hooks.fields("PreToolUse") == [
        {"tool_name": "Echo", "tool_input": {"text": "a"}, "tool_use_id": tool_use_id}
    ]
    assert tool_results(r.sink.records) == [(tool_use_id, "no echo", True)]
    assert r.result["permission_denials"][0]["tool_name"] == "Echo"


def test_pre_tool_use_updated_input_is_evaluated_against_every_deny_rule() -> None:
    """A hook that allows with an input a policy denies: the policy wins."""
    echo = EchoTool()
    hooks = ScriptedHooks(_pre(decision="allow", updated_input=freeze({"text": "rm"})))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        policy=InputPolicy({"Echo": ALLOW}),
        hooks=hooks,
    )
    r.run()
    assert echo.ran == []
    assert tool_results(r.sink.records)[0][1:] == ("denied by rule Echo(rm)", True)


def test_pre_tool_use_updated_input_runs_when_the_policy_allows_it() -> None:
    echo = EchoTool()
    hooks = ScriptedHooks(_pre(decision="allow", updated_input=freeze({"text": "b"})))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": ALLOW},
        hooks=hooks,
    )
    r.run()
    assert echo.ran == [{"text": "b"}]


def test_pre_tool_use_allow_skips_the_modes_ask() -> None:
    echo, gate = EchoTool(), FutureGate()
    hooks = ScriptedHooks(_pre(decision="allow"))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": MODE_ASK},
        gate=gate,
        hooks=hooks,
    )
    r.run()
    assert gate.asks == []
    assert echo.ran == [{"text": "a"}]


def test_pre_tool_use_allow_never_skips_an_ask_rule() -> None:
    echo = EchoTool()
    gate = FutureGate((PermissionOutcome(behavior="deny", message="person said no"),))
    hooks = ScriptedHooks(_pre(decision="allow", updated_input=freeze({"text": "b"})))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": RULE_ASK},
        gate=gate,
        hooks=hooks,
    )
    r.run()
    (asked,) = gate.asks
    assert asked["tool_input"] == {"text": "b"}  # the person sees what would run
    assert echo.ran == []
    # A Notification (permission_prompt) went out before the ask.
    assert hooks.fields("Notification") == [
        {
            "message": "Claude needs your permission to use Echo",
            "notification_type": "permission_prompt",
        }
    ]


def test_pre_tool_use_ask_asks_even_where_the_policy_allows() -> None:
    echo = EchoTool()
    gate = FutureGate((PermissionOutcome(behavior="allow"),))
    hooks = ScriptedHooks(_pre(decision="ask", updated_input=freeze({"text": "c"})))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": ALLOW},
        gate=gate,
        hooks=hooks,
    )
    r.run()
    assert len(gate.asks) == 1
    assert echo.ran == [{"text": "c"}]  # the host allowed without its own updatedInput


def test_pre_tool_use_context_reaches_the_model_with_the_result() -> None:
    echo = EchoTool()
    hooks = ScriptedHooks(_pre(contexts=("remember X",)))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": ALLOW},
        hooks=hooks,
    )
    r.run()
    assert "echo a\n\nremember X" in _model_texts(r)


def test_continue_false_ends_the_turn_after_the_step() -> None:
    echo = EchoTool()
    hooks = ScriptedHooks(_pre(stop=True, stop_reason="halted by policy"))
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("never"),
        tools=(echo,),
        rules={"Echo": ALLOW},
        hooks=hooks,
    )
    r.run()
    assert echo.ran == []
    assert (r.result["subtype"], r.result["result"], r.result["num_turns"]) == (
        "success",
        "halted by policy",
        1,
    )


# -- PostToolUse, PostToolUseFailure -------------------------------------------------


def test_post_tool_use_sees_the_response_and_adds_context() -> None:
    echo = EchoTool()
    hooks = ScriptedHooks(
        {
            "PostToolUse": [
                EventOutcome(decision="block", reasons=("lint failed",), contexts=("ctx",))
            ]
        }
    )
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": ALLOW},
        hooks=hooks,
    )
    r.run()
    (tool_use_id,) = r.tool_use_ids()
    assert hooks.fields("PostToolUse") == [
        {
            "tool_name": "Echo",
            "tool_input": {"text": "a"},
            "tool_use_id": tool_use_id,
            "tool_response": "echo a",
        }
    ]
    assert "echo a\n\nlint failed\n\nctx" in _model_texts(r)
    assert "PostToolUseFailure" not in hooks.events()


def test_post_tool_use_failure_on_an_error_result() -> None:
    echo = EchoTool(fail=True)
    hooks = ScriptedHooks()
    r = rig(
        tool_turn(("Echo", {"text": "a"})),
        text_turn("ok"),
        tools=(echo,),
        rules={"Echo": ALLOW},
        hooks=hooks,
    )
    r.run()
    (tool_use_id,) = r.tool_use_ids()
    assert hooks.fields("PostToolUseFailure") == [
        {
            "tool_name": "Echo",
            "tool_input": {"text": "a"},
            "tool_use_id": tool_use_id,
            "error": "echo a",
            "is_interrupt": False,
        }
    ]
    assert "PostToolUse" not in hooks.events()


# -- UserPromptSubmit ------------------------------------------------------------------


def test_user_prompt_submit_block_keeps_the_prompt_from_the_model() -> None:
    hooks = ScriptedHooks(
        {"UserPromptSubmit": [EventOutcome(decision="block", reasons=("secrets",))]}
    )
    r = rig(text_turn("never"), hooks=hooks)
    r.run("my password is hunter2")
    assert hooks.fields("UserPromptSubmit") == [{"prompt": "my password is hunter2"}]
    assert shape(r.sink.records) == ["result:error_during_execution"]
    assert r.result["errors"] == ("prompt blocked by a UserPromptSubmit hook: secrets",)
    assert r.result["num_turns"] == 0
    assert r.engine.history == ()


def test_user_prompt_submit_context_joins_the_prompt() -> None:
    hooks = ScriptedHooks({"UserPromptSubmit": [EventOutcome(contexts=("today is Friday",))]})
    r = rig(text_turn("ok"), hooks=hooks)
    r.run("hi")
    assert _model_texts(r)[:2] == ["hi", "today is Friday"]


# -- Stop ------------------------------------------------------------------------------


def test_stop_block_continues_the_turn_once_with_stop_hook_active() -> None:
    hooks = ScriptedHooks({"Stop": [EventOutcome(decision="block", reasons=("run the tests",))]})
    r = rig(text_turn("first"), text_turn("second"), hooks=hooks)
    r.run()
    assert hooks.fields("Stop") == [
        {"stop_hook_active": False, "last_assistant_message": "first"},
        {"stop_hook_active": True, "last_assistant_message": "second"},
    ]
    assert "Stop hook feedback:\nrun the tests" in _model_texts(r)
    assert (r.result["result"], r.result["num_turns"]) == ("second", 2)


def test_stop_continuation_is_bounded_by_max_turns() -> None:
    always = EventOutcome(decision="block", reasons=("again",))
    hooks = ScriptedHooks({"Stop": [always] * 10})
    r = rig(*(text_turn(f"t{i}") for i in range(10)), hooks=hooks, max_turns=3)
    r.run()
    assert (r.result["subtype"], r.result["num_turns"]) == ("error_max_turns", 3)
    assert len(hooks.fields("Stop")) == 3


def test_stop_continue_false_wins_over_its_block() -> None:
    hooks = ScriptedHooks({"Stop": [EventOutcome(decision="block", reasons=("x",), stop=True)]})
    r = rig(text_turn("first"), text_turn("never"), hooks=hooks)
    r.run()
    assert (r.result["result"], r.result["num_turns"]) == ("first", 1)


def test_stop_failure_on_a_failed_model_call() -> None:
    hooks = ScriptedHooks()
    r = rig({"steps": [{"text": "part"}, {"error": "rate_limit"}]}, hooks=hooks)
    r.run()
    assert r.result["subtype"] == "error_during_execution"
    (fired,) = hooks.fields("StopFailure")
    assert (fired["error"], fired["last_assistant_message"]) == ("rate_limit", "part")
    assert "Stop" not in hooks.events()


# -- SessionStart, SessionEnd ------------------------------------------------------------


def test_session_start_context_reaches_the_first_request() -> None:
    hooks = ScriptedHooks(
        {"SessionStart": [EventOutcome(contexts=("project rules",))]}, start_source="resume"
    )
    r = rig(text_turn("ok"), text_turn("ok"), hooks=hooks)
    r.engine.begin()
    r.run("one")
    r.run("two")
    assert hooks.fields("SessionStart") == [{"source": "resume", "model": "scripted-1"}]
    assert _model_texts(r)[:2] == ["one", "project rules"]
    assert _model_texts(r).count("project rules") == 1


def test_clear_ends_the_old_session_and_starts_the_new_one() -> None:
    hooks = ScriptedHooks({"SessionStart": [EventOutcome(contexts=("fresh",))]})
    r = rig(text_turn("ok"), hooks=hooks)
    r.engine.run_command(SlashCommand(name="clear"), CancelScope())
    assert hooks.events() == ["SessionEnd", "SessionStart"]
    assert hooks.fired == [
        ("SessionEnd", {"reason": "clear"}),
        ("SessionStart", {"source": "clear", "model": "scripted-1"}),
    ]
    r.run("next")
    assert _model_texts(r)[:2] == ["next", "fresh"]


def test_no_hooks_no_events() -> None:
    """A session with no hook port pays nothing (the port is None)."""
    echo = EchoTool()
    r = rig(
        tool_turn(("Echo", {"text": "a"})), text_turn("ok"), tools=(echo,), rules={"Echo": ALLOW}
    )
    r.engine.begin()
    r.run()
    assert echo.ran == [{"text": "a"}]
