"""Deadlines on blocking asks between actors (DECISIONS section 8: no state
waits without a deadline; the picture in :mod:`agentx.actors`).

Each test makes the asked party hang on an event the test holds, with a
small deadline injected through the constructor, and asserts that the asker
returns, does what it is defined to do on expiry (fail closed), and that
the session ends with exit 4 and one ERROR line naming the silent party.
Every wait is on an event, a future or the exit latch; nothing sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pykka
import pytest

from agentx.actors.arbiter import PermissionArbiterActor
from agentx.actors.arbiter_gate import ArbiterGate
from agentx.actors.base import AskExpired
from agentx.actors.broker import ControlBroker, ControlBrokerActor
from agentx.actors.mcp_manager import McpHandle, McpManagerActor
from agentx.actors.supervision import EXIT_INTERNAL, ExitLatch
from agentx.actors.supervisor import Operations, SupervisorActor
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.inbound_control import ControlRequest, ControlResponse
from agentx.messages.permission_wire import PermissionResponseSchema, can_use_tool_request
from agentx.sessions.identity import SessionIdentity
from agentx.tools.process import ChildProcesses
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionAsk, PermissionOutcome
from tests.actors.helpers import SID, WAIT, Recorder, uuids

#: The injected deadline: long enough for an honest answer on a loaded
#: machine (the broker's start is one), short enough to keep the tests quick.
SHORT = 0.25


class Hang:
    """A callee's body that blocks until the test releases it (bounded by WAIT)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, *_args: Any, **_kwargs: Any) -> None:
        self.entered.set()
        assert self.release.wait(WAIT)

    def holding(self) -> None:
        """Wait until the callee is stuck in the body."""
        assert self.entered.wait(WAIT)


@pytest.fixture
def hang() -> Iterator[Hang]:
    gate = Hang()
    yield gate
    gate.release.set()  # let the stuck actor finish before the actors stop


def ended_by(latch: ExitLatch, errors: list[str], where: str) -> None:
    """The session ends with 4 and one ERROR line naming ``where``."""
    assert latch.wait(WAIT) == EXIT_INTERNAL
    assert errors == [f"internal failure in {where}: AskExpired"]


def orphan(request_id: str) -> ControlResponse:
    """A response nobody waits for: the broker hands it to its orphan handler."""
    inner = {"subtype": "success", "request_id": request_id}
    return ControlResponse(
        line=1,
        request_id=request_id,
        subtype="success",
        response=None,
        error=None,
        pending_permission_requests=None,
        raw=freeze({"type": "control_response", "response": inner}),
    )


def stuck_broker(hang: Hang, latch: ExitLatch) -> ControlBroker:
    """A broker whose actor thread is stuck in its orphan handler."""
    broker = ControlBroker.start(
        emit=Recorder(),
        new_request_id=uuids(),
        orphan_handler=hang,
        supervision=latch,
        ask_seconds=SHORT,
    )
    broker.on_response(orphan("nobody"))  # told: does not wait
    hang.holding()
    return broker


# -- the ControlBroker handle ------------------------------------------------------------


def test_a_broker_that_does_not_take_a_request_fails_the_ask(hang: Hang, errors: list[str]) -> None:
    latch = ExitLatch()
    broker = stuck_broker(hang, latch)
    request = can_use_tool_request("Bash", {"command": "ls"}, "toolu_1", "Run ls")
    with pytest.raises(AskExpired, match=r"ControlBrokerActor did not answer within 0\.25 s"):
        broker.ask(request, PermissionResponseSchema(tool_use_id="toolu_1"))
    ended_by(latch, errors, "ControlBrokerActor")


def test_a_broker_that_does_not_answer_pending_ids_fails_the_call(
    hang: Hang, errors: list[str]
) -> None:
    latch = ExitLatch()
    broker = stuck_broker(hang, latch)
    with pytest.raises(AskExpired):
        broker.pending_ids()
    ended_by(latch, errors, "ControlBrokerActor")


@pytest.mark.parametrize(
    ("call", "returned"),
    [
        (lambda broker: broker.abort("req_1"), None),
        (lambda broker: broker.abort_all_permissions(), ()),
        (lambda broker: broker.on_eof(), None),
        (lambda broker: broker.stop(), None),
    ],
    ids=["abort", "abort_all_permissions", "on_eof", "stop"],
)
def test_an_effect_the_broker_does_not_carry_out_in_time_ends_the_session(
    hang: Hang,
    errors: list[str],
    call: Callable[[ControlBroker], object],
    returned: object,
) -> None:
    """The caller (the arbiter, the runner's interrupt, the supervisor's EOF
    hooks, the shutdown) goes on; the session ends with 4."""
    latch = ExitLatch()
    broker = stuck_broker(hang, latch)
    assert call(broker) == returned
    ended_by(latch, errors, "ControlBrokerActor")


def test_a_broker_that_does_not_start_in_time_fails_the_start(
    hang: Hang, errors: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ControlBrokerActor, "on_start", hang)
    latch = ExitLatch()
    with pytest.raises(AskExpired):
        ControlBroker.start(
            emit=Recorder(), new_request_id=uuids(), supervision=latch, ask_seconds=SHORT
        )
    ended_by(latch, errors, "ControlBrokerActor")


def test_a_permission_ask_the_broker_cannot_deliver_is_denied(
    hang: Hang, errors: list[str], tmp_path: Path
) -> None:
    """WIRE-PERM-002: the arbiter's host request expires; the ask denies at
    once instead of waiting for an answer that cannot come."""
    latch = ExitLatch()
    broker = stuck_broker(hang, latch)
    arbiter = PermissionArbiterActor.start(
        broker=broker,
        emit=Recorder(),
        session=SessionIdentity(SID),
        cwd=tmp_path,
        session_env=dict,
        base_env={},
        new_uuid=uuids(),
        supervision=latch,
    )
    gate = ArbiterGate(arbiter, hooks_for=lambda _tool: (), new_uuid=lambda: "n1")
    decision: Future[PermissionOutcome] = gate.ask(
        PermissionAsk(
            tool_name="Bash",
            tool_input=freeze({"command": "ls"}),
            tool_use_id="toolu_1",
            description="Run ls",
            suggestions=(),
            blocked_path=None,
            cancel=CancelScope(),
        )
    )
    outcome = decision.result(WAIT)
    assert outcome.behavior == "deny"
    assert outcome.message == "permission request failed"
    ended_by(latch, errors, "ControlBrokerActor")


# -- the MCP manager's control operations -------------------------------------------------


def mcp_handle(latch: ExitLatch, tmp_path: Path) -> McpHandle:
    return McpHandle(
        configured={},
        scopes={},
        literals=frozenset(),
        cwd=tmp_path,
        media=None,
        children=ChildProcesses(),
        supervision=latch,
        ask_seconds=SHORT,
    )


@pytest.mark.parametrize(
    ("operation", "call"),
    [
        ("status", lambda mcp: mcp.status()),
        ("plan_set_servers", lambda mcp: mcp.set_servers({})),
        ("reconnect", lambda mcp: mcp.reconnect("docs")),
        ("toggle", lambda mcp: mcp.toggle("docs", False)),
    ],
)
def test_an_mcp_manager_that_does_not_answer_fails_the_operation(
    hang: Hang,
    *,
    errors: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    operation: str,
    call: Callable[[McpHandle], object],
) -> None:
    monkeypatch.setattr(McpManagerActor, operation, hang)
    latch = ExitLatch()
    mcp = mcp_handle(latch, tmp_path)
    with pytest.raises(AskExpired, match="McpManagerActor did not answer"):
        call(mcp)
    hang.holding()
    ended_by(latch, errors, "McpManagerActor")


# -- the supervisor's asks ------------------------------------------------------------------


class StuckRunner(pykka.ThreadingActor):
    """The runner's stand-in: every message it is asked hangs."""

    def __init__(self, hang: Hang) -> None:
        super().__init__()
        self._hang = hang

    def on_receive(self, message: Any) -> Any:
        self._hang()
        return True


def supervisor(
    latch: ExitLatch, sink: Recorder, runner: pykka.ActorRef[Any], **operations: Any
) -> pykka.ActorRef[SupervisorActor]:
    defaults: dict[str, Any] = {
        "initialize": FrozenDict,
        "context_usage": FrozenDict,
        "mcp_status": lambda: FrozenDict(mcpServers=()),
    }
    return SupervisorActor.start(
        emit=sink,
        profile="extended",
        runner=runner,
        operations=Operations(**{**defaults, **operations}),
        supervision=latch,
        ask_seconds=SHORT,
    )


def control(ref: pykka.ActorRef[SupervisorActor], subtype: str, **payload: Any) -> None:
    ref.ask(
        ControlRequest(line=1, request_id="req-1", subtype=subtype, payload=freeze(payload)),
        timeout=WAIT,
    )


def only_error(sink: Recorder) -> Mapping[str, Any]:
    (record,) = sink.snapshot()
    assert record["type"] == "control_response"
    response: Mapping[str, Any] = record["response"]
    assert response["subtype"] == "error"
    assert response["request_id"] == "req-1"
    return response


def test_cancel_async_message_with_a_runner_that_does_not_answer_is_an_error(
    hang: Hang, errors: list[str]
) -> None:
    latch = ExitLatch()
    sink = Recorder()
    ref = supervisor(latch, sink, StuckRunner.start(hang))
    control(ref, "cancel_async_message", message_uuid="u-1")
    assert hang.entered.is_set()
    assert only_error(sink)["error"] == "TurnRunnerActor did not answer within 0.25 s"
    ended_by(latch, errors, "TurnRunnerActor")


def test_mcp_status_with_a_manager_that_does_not_answer_is_an_error(
    hang: Hang, errors: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(McpManagerActor, "status", hang)
    latch = ExitLatch()
    sink = Recorder()
    mcp = mcp_handle(latch, tmp_path)
    ref = supervisor(latch, sink, StuckRunner.start(Hang()), mcp_status=mcp.status)
    control(ref, "mcp_status")
    assert only_error(sink)["error"] == "McpManagerActor did not answer within 0.25 s"
    ended_by(latch, errors, "McpManagerActor")
