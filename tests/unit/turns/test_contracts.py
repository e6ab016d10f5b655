"""The engine's contract values are immutable (DESIGN "Messages are values")."""

from __future__ import annotations

from concurrent.futures import Future

import msgspec.structs
import pytest

from agentx.messages.frozen import FrozenDict
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import EnginePorts, PermissionAsk, PermissionOutcome, no_progress


class NoState:
    def permission_opened(self) -> None: ...

    def permission_closed(self) -> None: ...


class NoGate:
    def ask(self, ask: PermissionAsk) -> Future[PermissionOutcome]:
        raise AssertionError("nothing asks here")

    def ask_network(
        self, host: str, port: int, *, cancel: CancelScope
    ) -> Future[PermissionOutcome]:
        raise AssertionError("nothing asks here")


def test_a_permission_ask_cannot_be_changed() -> None:
    ask = PermissionAsk(
        tool_name="Bash",
        tool_input=FrozenDict(command="ls"),
        tool_use_id="toolu_1",
        description="Run ls",
        suggestions=(),
        blocked_path=None,
        cancel=CancelScope(),
    )
    with pytest.raises(AttributeError):
        ask.tool_name = "Write"  # type: ignore[misc]
    assert [f.name for f in msgspec.structs.fields(ask)] == [
        "tool_name",
        "tool_input",
        "tool_use_id",
        "description",
        "suggestions",
        "blocked_path",
        "cancel",
        "agent",
    ]
    assert ask.agent is None  # the session's own ask; a subagent's names it


def test_the_engine_ports_cannot_be_changed_and_default_the_optional_callbacks() -> None:
    ports = EnginePorts(gate=NoGate(), state=NoState(), emit=lambda records: None, new_uuid=str)
    with pytest.raises(AttributeError):
        ports.emit = print  # type: ignore[misc]
    assert ports.progress is no_progress
    assert ports.live_tools is None and ports.tool_media is None
    assert ports.message_ids() != ports.message_ids()
