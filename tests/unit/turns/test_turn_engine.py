"""The turn engine (DEC-TURN-1..4, spec "Core output records", WIRE-012).

Plain turns, cancellation mid-stream, provider errors, the turn limits and
the input-error result, over :mod:`tests.unit.turns.engine_rig`.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentx.messages.accounting import Pricing
from agentx.turns.cancel import CancelScope
from agentx.turns.results import INTERRUPTED, input_error_result
from tests.unit.turns.engine_rig import (
    ALLOW,
    MODEL,
    SID,
    WAIT,
    ZERO_USAGE,
    EchoTool,
    rig,
    shape,
    text_turn,
    tool_turn,
    uuid_n,
)

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
