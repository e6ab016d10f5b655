"""SDK callback hooks on the wire (DEC-PROFILE-2): the request, the answer's
schema and the ``initialize`` check."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.frozen import freeze
from agentx.messages.hooks.callbacks import (
    HookCallbackSchema,
    check_initialize_hooks,
    hook_callback_request,
)
from agentx.messages.hooks.verdicts import Verdict, failed

INPUT = freeze({"hook_event_name": "Stop", "stop_hook_active": False})


def test_the_request() -> None:
    assert hook_callback_request("hook_3", INPUT, None) == {
        "subtype": "hook_callback",
        "callback_id": "hook_3",
        "input": INPUT,
    }
    assert hook_callback_request("hook_3", INPUT, "toolu_1")["tool_use_id"] == "toolu_1"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param(None, Verdict(), id="no-payload"),
        pytest.param({}, Verdict(), id="empty-no-opinion"),
        pytest.param(
            {"decision": "block", "reason": "go on"},
            Verdict(decision="block", reason="go on"),
            id="stop-block",
        ),
        pytest.param(
            {"continue": "yes"},
            failed("hook output: continue must be a boolean"),
            id="bad-type-fails",
        ),
        pytest.param({"async": True, "asyncTimeout": 5}, Verdict(), id="async-decides-nothing"),
    ],
)
def test_the_schema_never_raises(payload: Any, expected: Verdict) -> None:
    schema = HookCallbackSchema(event="Stop")
    assert schema(None if payload is None else freeze(payload)) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"Stop": [{"hookCallbackIds": ["a"]}]}, None, id="valid"),
        pytest.param(
            {"Stop": [{"hookCallbackIds": ["a"], "whenUnanswered": None, "contextOnly": False}]},
            None,
            id="ts-internal-members-unset",
        ),
        pytest.param(
            {"Stop": [{"hookCallbackIds": ["a"], "observesOnly": True}]},
            "Stop[0].observesOnly is not supported",
            id="ts-internal-member-set",
        ),
        pytest.param({"Nope": []}, "Nope is not a hook event", id="unknown-event"),
        pytest.param([], "must be an object", id="not-object"),
    ],
)
def test_the_initialize_check(value: Any, expected: str | None) -> None:
    assert check_initialize_hooks(freeze(value)) == expected
