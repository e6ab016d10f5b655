"""The small inbound record kinds through decode_line: environment updates,
prior context and unknown types (WIRE-002)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentx.messages.decode import InboundRecord, decode_line
from agentx.messages.framing import Line
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound import (
    InvalidEnvUpdate,
    PriorContextRecord,
    UnknownRecord,
    UpdateEnvironmentVariables,
)


def decode(record: dict[str, Any] | bytes) -> InboundRecord:
    data = record if isinstance(record, bytes) else json.dumps(record).encode()
    return decode_line(Line(number=4, data=data))


# --- update_environment_variables -------------------------------------------


def test_environment_update() -> None:
    record = decode({"type": "update_environment_variables", "variables": {"A": "1", "B": ""}})
    assert record == UpdateEnvironmentVariables(line=4, variables=FrozenDict(A="1", B=""))


@pytest.mark.parametrize(
    "variables",
    [
        pytest.param(None, id="missing"),
        pytest.param(["A"], id="array"),
        pytest.param({"A": 1}, id="int-value"),
        pytest.param({"A": None}, id="null-value"),
        pytest.param({"": "x"}, id="empty-name"),
        pytest.param({"A=B": "x"}, id="equals-in-name"),
        pytest.param({"A": "x\u0000y"}, id="nul-in-value"),
    ],
)
def test_invalid_environment_update(variables: Any) -> None:
    record: dict[str, Any] = {"type": "update_environment_variables"}
    if variables is not None:
        record["variables"] = variables
    assert isinstance(decode(record), InvalidEnvUpdate)


# --- prior context and unknown types ------------------------------------------


@pytest.mark.parametrize("kind", ["assistant", "system"])
def test_replayed_prior_context(kind: str) -> None:
    raw = {"type": kind, "message": {"content": [{"type": "tool_use", "id": "t"}]}}
    record = decode(raw)
    assert isinstance(record, PriorContextRecord)
    assert (record.type, record.line) == (kind, 4)
    assert record.raw["message"]["content"][0] == FrozenDict(type="tool_use", id="t")


@pytest.mark.parametrize("kind", ["result", "stream_event", "User", ""])
def test_unknown_type(kind: str) -> None:
    assert decode({"type": kind}) == UnknownRecord(line=4, type=kind)
