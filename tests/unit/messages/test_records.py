"""The outbound-record vocabulary (WIRE-003): ``Emit`` is an immutable batch."""

from __future__ import annotations

from typing import Any, cast

import pytest

from agentx.messages.frozen import FrozenDict
from agentx.messages.records import Emit


def test_emit_keeps_the_records_in_order() -> None:
    records = (FrozenDict(type="a"), FrozenDict(type="b"))
    assert Emit(records=records).records == records


def test_emit_is_frozen() -> None:
    emit = Emit(records=())
    with pytest.raises(AttributeError):
        emit.records = (FrozenDict(type="x"),)  # type: ignore[misc]


@pytest.mark.parametrize(
    "records", [[FrozenDict(type="a")], (r for r in ())], ids=["list", "generator"]
)
def test_emit_refuses_a_mutable_or_one_shot_sequence(records: Any) -> None:
    with pytest.raises(TypeError, match="tuple"):
        Emit(records=cast(Any, records))
