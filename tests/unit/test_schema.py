"""The published schema (issue 9 item 5): a valid draft 2020-12 document that
accepts what the builders emit and refuses what the spec keeps closed."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentx.messages import outbound
from agentx.messages.frozen import thaw
from agentx.messages.schema import document


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(document())
    return Draft202012Validator(document())


def _result(**extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = thaw(
        outbound.result(
            subtype="success",
            is_error=False,
            duration_ms=1,
            duration_api_ms=0,
            num_turns=1,
            result_text="ok",
            stop_reason="end_turn",
            total_cost_usd=None,
            usage={
                "input_tokens": 1,
                "output_tokens": 1,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
            model_usage={},
            permission_denials=(),
            errors=(),
            session_id="s",
            uuid="u",
        )
    )
    record.update(extra)
    return record


@pytest.mark.parametrize(
    ("record", "valid"),
    [
        (thaw(outbound.session_state_changed("idle", session_id="s", uuid="u")), True),
        (
            {
                "type": "system",
                "subtype": "session_state_changed",
                "state": "asleep",
                "uuid": "u",
                "session_id": "s",
            },
            False,
        ),
        (_result(), True),
        (_result(unexpected=1), False),
        (_result(total_cost_usd="free"), False),
        (thaw(outbound.control_response_success("r")), True),
        (thaw(outbound.control_response_error("r", "no")), True),
        ({"type": "control_response", "response": {"subtype": "maybe", "request_id": "r"}}, False),
        ({"type": "control_cancel_request", "request_id": "r"}, True),
        ({"type": "not_a_record"}, False),
    ],
    ids=[
        "state",
        "bad-state",
        "result",
        "result-extra",
        "cost-type",
        "ack",
        "error",
        "bad-subtype",
        "cancel",
        "unknown",
    ],
)
def test_records_against_the_schema(
    validator: Draft202012Validator, record: dict[str, Any], valid: bool
) -> None:
    assert validator.is_valid(record) is valid


def test_versions_are_published() -> None:
    assert document()["x-protocol-versions"]["content_version"] == 1
