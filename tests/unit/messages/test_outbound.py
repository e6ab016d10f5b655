"""Outbound record builders: exact members and order (spec "Core output records",
DECISIONS section 11, WIRE-010, WIRE-012, DEC-COMPAT-3)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages import outbound
from agentx.messages.frozen import FrozenDict

SID = "session-1"
UID = "uuid-1"

USAGE = {
    "input_tokens": 3,
    "output_tokens": 4,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
MODEL_USAGE = {
    "m": {
        "inputTokens": 3,
        "outputTokens": 4,
        "cacheReadInputTokens": 0,
        "cacheCreationInputTokens": 0,
        "costUSD": None,
    }
}
DENIAL = FrozenDict(tool_name="Bash", tool_use_id="toolu_1", tool_input=FrozenDict(command="ls"))


def result(subtype: outbound.ResultSubtype, **overrides: Any) -> FrozenDict:
    args: dict[str, Any] = {
        "subtype": subtype,
        "is_error": subtype != "success",
        "duration_ms": 12,
        "duration_api_ms": 5,
        "num_turns": 2,
        "result_text": "done",
        "stop_reason": "end_turn",
        "total_cost_usd": None,
        "usage": USAGE,
        "model_usage": MODEL_USAGE,
        "permission_denials": (DENIAL,),
        "errors": ("boom",),
        "session_id": SID,
        "uuid": UID,
    }
    args.update(overrides)
    return outbound.result(**args)


SUCCESS_KEYS = [
    "type",
    "subtype",
    "is_error",
    "duration_ms",
    "duration_api_ms",
    "num_turns",
    "result",
    "stop_reason",
    "total_cost_usd",
    "usage",
    "modelUsage",
    "permission_denials",
    "uuid",
    "session_id",
]
ERROR_KEYS = [k for k in SUCCESS_KEYS if k != "result"]
ERROR_KEYS.insert(ERROR_KEYS.index("uuid"), "errors")


def test_success_result_exact() -> None:
    assert result("success") == {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 12,
        "duration_api_ms": 5,
        "num_turns": 2,
        "result": "done",
        "stop_reason": "end_turn",
        "total_cost_usd": None,
        "usage": USAGE,
        "modelUsage": MODEL_USAGE,
        "permission_denials": (DENIAL,),
        "uuid": UID,
        "session_id": SID,
    }
    assert list(result("success")) == SUCCESS_KEYS


@pytest.mark.parametrize(
    "subtype",
    [
        "error_during_execution",
        "error_max_turns",
        "error_max_budget_usd",
        "error_max_structured_output_retries",
    ],
)
def test_error_result_has_errors_and_no_result_text(subtype: outbound.ResultSubtype) -> None:
    record = result(subtype)
    assert list(record) == ERROR_KEYS
    assert record["subtype"] == subtype
    assert record["is_error"] is True
    assert record["errors"] == ("boom",)


@pytest.mark.parametrize(
    ("result_text", "shown"),
    [pytest.param(None, "", id="none-is-empty"), pytest.param("hi", "hi", id="text")],
)
def test_success_result_text(result_text: str | None, shown: str) -> None:
    assert result("success", result_text=result_text)["result"] == shown


@pytest.mark.parametrize(
    ("cost", "shown"),
    [
        pytest.param(None, None, id="unknown-is-null"),
        pytest.param(0, 0, id="known-zero-is-zero"),
        pytest.param(0.25, 0.25, id="number"),
    ],
)
def test_total_cost_is_passed_through(cost: float | None, shown: float | None) -> None:
    """WIRE-012: null and 0 are different values on the wire."""
    assert result("success", total_cost_usd=cost)["total_cost_usd"] == shown
    assert (result("success", total_cost_usd=cost)["total_cost_usd"] is None) is (shown is None)


def test_prompt_uuid_sits_before_uuid() -> None:
    record = result("error_during_execution", prompt_uuid="p-1")
    assert record["prompt_uuid"] == "p-1"
    assert list(record)[-3:] == ["prompt_uuid", "uuid", "session_id"]


def test_result_is_frozen() -> None:
    record = result("success")
    with pytest.raises(TypeError):
        record["result"] = "changed"
    with pytest.raises(TypeError):
        record["modelUsage"]["m"]["costUSD"] = 1
    assert isinstance(record["usage"], FrozenDict)


def test_assistant_record() -> None:
    """DEC-COMPAT-3: ``message.model`` and list ``content`` always present."""
    message = outbound.api_assistant_message(
        message_id="msg_1",
        model="m",
        content=(FrozenDict(type="text", text="hi"),),
        stop_reason="end_turn",
        usage=USAGE,
    )
    assert list(message) == [
        "id",
        "type",
        "role",
        "model",
        "content",
        "stop_reason",
        "stop_sequence",
        "usage",
    ]
    assert message == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": ({"type": "text", "text": "hi"},),
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": USAGE,
    }
    record = outbound.assistant(message, parent_tool_use_id=None, session_id=SID, uuid=UID)
    assert list(record) == ["type", "message", "parent_tool_use_id", "uuid", "session_id"]
    assert record["type"] == "assistant"
    assert record["message"] == message
    assert record["parent_tool_use_id"] is None


@pytest.mark.parametrize(
    "category",
    [
        "authentication_failed",
        "billing_error",
        "rate_limit",
        "invalid_request",
        "server_error",
        "unknown",
        "max_output_tokens",
    ],
)
def test_assistant_error_category_is_last(category: str) -> None:
    record = outbound.assistant(
        {"content": ()}, parent_tool_use_id="toolu_9", session_id=SID, uuid=UID, error=category
    )
    assert list(record) == ["type", "message", "parent_tool_use_id", "uuid", "session_id", "error"]
    assert (record["parent_tool_use_id"], record["error"]) == ("toolu_9", category)


def test_user_echo_minimal() -> None:
    block = outbound.tool_result_block("toolu_1", "out", is_error=False)
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "out",
        "is_error": False,
    }
    assert list(block) == ["type", "tool_use_id", "content", "is_error"]
    record = outbound.user_echo({"role": "user", "content": [block]}, session_id=SID, uuid=UID)
    assert record == {
        "type": "user",
        "message": {"role": "user", "content": (block,)},
        "parent_tool_use_id": None,
        "uuid": UID,
        "session_id": SID,
    }
    assert list(record) == ["type", "message", "parent_tool_use_id", "uuid", "session_id"]


def test_user_echo_every_optional_member_in_order() -> None:
    """Spec "User": optional synthetic flag, tool-use result, priority, timestamp; replay form."""
    record = outbound.user_echo(
        {"role": "user", "content": "hi"},
        session_id=SID,
        uuid=UID,
        parent_tool_use_id="toolu_1",
        is_replay=True,
        is_synthetic=True,
        tool_use_result={"stdout": "x"},
        priority="next",
        timestamp="2026-01-01T00:00:00Z",
    )
    assert list(record) == [
        "type",
        "message",
        "parent_tool_use_id",
        "uuid",
        "session_id",
        "isReplay",
        "isSynthetic",
        "tool_use_result",
        "priority",
        "timestamp",
    ]
    assert (record["isReplay"], record["isSynthetic"]) == (True, True)
    assert record["tool_use_result"] == {"stdout": "x"}
    assert isinstance(record["message"], FrozenDict)


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            outbound.session_state_changed("requires_action", session_id=SID, uuid=UID),
            {
                "type": "system",
                "subtype": "session_state_changed",
                "state": "requires_action",
                "uuid": UID,
                "session_id": SID,
            },
            id="session_state_changed",
        ),
        pytest.param(
            outbound.control_response_success("r1"),
            {"type": "control_response", "response": {"subtype": "success", "request_id": "r1"}},
            id="control-success-without-payload",
        ),
        pytest.param(
            outbound.control_response_success("r1", FrozenDict(pid=7)),
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": "r1", "response": {"pid": 7}},
            },
            id="control-success-with-payload",
        ),
        pytest.param(
            outbound.control_response_error("r2", "no"),
            {
                "type": "control_response",
                "response": {"subtype": "error", "request_id": "r2", "error": "no"},
            },
            id="control-error",
        ),
        pytest.param(
            outbound.unsupported_control("r3", "rewind_files"),
            {
                "type": "control_response",
                "response": {
                    "subtype": "error",
                    "request_id": "r3",
                    "error": 'unsupported control request "rewind_files"',
                },
            },
            id="generic-unsupported",
        ),
        pytest.param(
            outbound.tool_use_summary("Ran 1 tool use", ("toolu_1",), session_id=SID, uuid=UID),
            {
                "type": "tool_use_summary",
                "summary": "Ran 1 tool use",
                "preceding_tool_use_ids": ("toolu_1",),
                "uuid": UID,
                "session_id": SID,
            },
            id="tool_use_summary",
        ),
        pytest.param(
            outbound.stream_event(
                FrozenDict(type="message_stop"), parent_tool_use_id=None, session_id=SID, uuid=UID
            ),
            {
                "type": "stream_event",
                "event": {"type": "message_stop"},
                "parent_tool_use_id": None,
                "uuid": UID,
                "session_id": SID,
            },
            id="stream_event",
        ),
        pytest.param(
            outbound.rate_limit_event("warning", session_id=SID, uuid=UID),
            {
                "type": "rate_limit_event",
                "rate_limit_info": {"status": "warning"},
                "uuid": UID,
                "session_id": SID,
            },
            id="rate-limit-status-only",
        ),
        pytest.param(
            outbound.rate_limit_event(
                "rejected", session_id=SID, uuid=UID, resets_at=1700, utilization=0.5
            ),
            {
                "type": "rate_limit_event",
                "rate_limit_info": {"status": "rejected", "resetsAt": 1700, "utilization": 0.5},
                "uuid": UID,
                "session_id": SID,
            },
            id="rate-limit-full",
        ),
        pytest.param(
            outbound.tool_progress(
                tool_use_id="toolu_1",
                tool_name="Bash",
                parent_tool_use_id=None,
                elapsed_time_seconds=1.5,
                session_id=SID,
                uuid=UID,
            ),
            {
                "type": "tool_progress",
                "tool_use_id": "toolu_1",
                "tool_name": "Bash",
                "parent_tool_use_id": None,
                "elapsed_time_seconds": 1.5,
                "uuid": UID,
                "session_id": SID,
            },
            id="tool_progress",
        ),
    ],
)
def test_record_exact(record: FrozenDict, expected: dict[str, Any]) -> None:
    assert record == expected
    assert list(record) == list(expected)
    assert isinstance(record, FrozenDict)
