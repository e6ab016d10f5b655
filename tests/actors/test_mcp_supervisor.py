"""Scenario 8 at the dispatcher: the mcp_set_servers response is enqueued to
the writer before the step that starts connections runs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import pykka

from agentx.actors.supervision import ExitLatch
from agentx.actors.supervisor import Operations, SupervisorActor
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.inbound_control import ControlRequest


class IdleRunner(pykka.ThreadingActor):
    """The turn runner is not involved in MCP operations."""


def test_set_servers_response_precedes_connecting() -> None:
    order: list[Any] = []
    connected = threading.Event()

    def set_servers(servers: Mapping[str, Any]) -> tuple[FrozenDict, Callable[[], None]]:
        order.append(("planned", dict(servers)))

        def connect() -> None:
            order.append("connect")
            connected.set()

        return FrozenDict(added=("dyn",), removed=(), errors=FrozenDict()), connect

    supervisor = SupervisorActor.start(
        emit=order.extend,
        profile="extended",
        runner=IdleRunner.start(),
        operations=Operations(
            initialize=FrozenDict,
            context_usage=FrozenDict,
            mcp_status=FrozenDict,
            mcp_set_servers=set_servers,
        ),
        supervision=ExitLatch(),
    )
    supervisor.tell(
        ControlRequest(
            line=1,
            request_id="r1",
            subtype="mcp_set_servers",
            payload=freeze({"servers": {"dyn": {"command": "x"}}}),
        )
    )
    assert connected.wait(10)
    planned, response, step = order
    assert planned == ("planned", {"dyn": {"command": "x"}})
    assert response["response"] == {
        "subtype": "success",
        "request_id": "r1",
        "response": {"added": ("dyn",), "removed": (), "errors": {}},
    }
    assert step == "connect"
