"""The published schema (WIRE-021): a valid draft 2020-12 document that
accepts what the builders emit and refuses what the spec keeps closed; one
document for both directions, printed by ``agentx schema``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentx.config.registry import BUILTIN_REGISTRY
from agentx.messages import outbound
from agentx.messages.attachment_limits import input_capabilities
from agentx.messages.frozen import thaw
from agentx.messages.schema import OUTBOUND, document
from agentx.sessions.info import SessionInfo, init_record


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(document())
    return Draft202012Validator(document("outbound"))


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


def _init(capabilities: Any) -> dict[str, Any]:
    info = SessionInfo(
        session_id="s",
        cwd=Path("/work"),
        registry=BUILTIN_REGISTRY,
        selected=BUILTIN_REGISTRY.providers[0],
        tools=("Read",),
        permission_mode="default",
        control_profile="standalone",
        input_capabilities=capabilities,
    )
    record: dict[str, Any] = thaw(init_record(info, uuid="u"))
    return record


def _tampered_capabilities() -> Any:
    capabilities = thaw(input_capabilities())
    capabilities["attachments"]["protocol_version"] = 2
    return capabilities


@pytest.mark.parametrize(
    ("record", "valid"),
    [
        (_init(None), True),
        (_init(input_capabilities()), True),
        (_init(_tampered_capabilities()), False),
        (_init({}), False),
    ],
    ids=["no-capabilities", "advertised-capabilities", "other-version", "empty-object"],
)
def test_init_carries_exactly_the_advertised_capabilities(
    validator: Draft202012Validator, record: dict[str, Any], valid: bool
) -> None:
    assert validator.is_valid(record) is valid


def test_versions_are_published() -> None:
    assert document()["x-protocol-versions"]["content_version"] == 1


PRIOR_SYSTEM = {
    "type": "system",
    "subtype": "status",
    "status": "busy",
    "uuid": "u",
    "session_id": "s",
}
INPUT_USER = {"type": "user", "message": "hi", "parentToolUseId": None}


@pytest.mark.parametrize(
    ("direction", "record", "valid"),
    [
        pytest.param(None, PRIOR_SYSTEM, True, id="whole-prior-context"),
        pytest.param("outbound", PRIOR_SYSTEM, False, id="outbound-status-vocabulary"),
        pytest.param("inbound", PRIOR_SYSTEM, True, id="inbound-prior-context"),
        pytest.param(None, INPUT_USER, True, id="whole-alias-user"),
        pytest.param("outbound", INPUT_USER, False, id="outbound-user-closed"),
        pytest.param("inbound", thaw(outbound.control_response_success("r")), True, id="both-ack"),
        pytest.param("outbound", thaw(outbound.control_response_success("r")), True, id="ack"),
        pytest.param(None, {"type": "not_a_record"}, False, id="whole-unknown"),
    ],
)
def test_each_direction_has_its_half(direction: Any, record: dict[str, Any], valid: bool) -> None:
    """The top level is the anyOf of two oneOf unions: a record valid in both
    directions (a control_response ack) is still valid."""
    assert Draft202012Validator(document(direction)).is_valid(record) is valid


def test_definitions_are_namespaced_by_direction() -> None:
    schema = document()
    assert schema["anyOf"] == [{"$ref": "#/$defs/outbound"}, {"$ref": "#/$defs/inbound"}]
    assert document("inbound")["$ref"] == "#/$defs/inbound"
    names = set(schema["$defs"])
    assert {f"outbound.{name}" for name in OUTBOUND} <= names
    assert {"inbound.user", "inbound.control_request", "inbound.attachment_import"} <= names


def test_each_call_returns_a_fresh_document() -> None:
    first = document()
    first["$defs"]["inbound.user"]["additionalProperties"] = True
    assert document()["$defs"]["inbound.user"]["additionalProperties"] is False


def test_agentx_schema_prints_the_document() -> None:
    """``agentx schema``: one JSON document on stdout, exit status 0."""
    done = subprocess.run(
        [sys.executable, "-m", "agentx", "schema"], capture_output=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(b"\n") and done.stdout.count(b"\n") == 1
    assert json.loads(done.stdout) == json.loads(json.dumps(document()))
