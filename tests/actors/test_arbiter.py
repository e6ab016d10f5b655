"""PermissionArbiterActor and ArbiterGate over real pykka threads, a real
ControlBroker and real hook subprocesses (spec "Permission race",
WIRE-PERM-001..004, WIRE-006..011, DEC-HOOK-3/4).

Every wait is on a future or on a record reaching the recording sink;
nothing sleeps.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from agentx.actors.arbiter import PermissionArbiterActor
from agentx.actors.arbiter_gate import ArbiterGate
from agentx.actors.broker import ControlBroker
from agentx.messages.frozen import freeze
from agentx.messages.hooks.config import CallbackHook, CommandHook
from agentx.messages.inbound_control import ControlResponse
from agentx.messages.permission_race import (
    HOOK_ERROR_MESSAGE,
    HOOK_TIMEOUT_MESSAGE,
    HOST_ERROR_MESSAGE,
    INTERRUPTED_MESSAGE,
    NO_CHANNEL_MESSAGE,
)
from agentx.messages.permission_wire import (
    INVALID_RESPONSE_MESSAGE,
    can_use_tool_request,
    network_access_request,
)
from agentx.sessions.identity import SessionIdentity
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import PermissionAsk, PermissionOutcome
from tests.actors.helpers import SID, WAIT, Record, Recorder, uuids

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
LS = freeze({"command": "ls"})


def response(request_id: str, payload: Any = None, *, error: str | None = None) -> ControlResponse:
    inner: dict[str, Any] = {"request_id": request_id}
    if error is not None:
        inner.update(subtype="error", error=error)
    else:
        inner.update(subtype="success", response=payload)
    return ControlResponse(
        line=1,
        request_id=request_id,
        subtype=inner["subtype"],
        response=None if payload is None else freeze(payload),
        error=error,
        pending_permission_requests=None,
        raw=freeze({"type": "control_response", "response": inner}),
    )


def kind(record: Record) -> str:
    return str(record.get("subtype") if record["type"] == "system" else record["type"])


def is_request(record: Record) -> bool:
    return bool(record["type"] == "control_request")


def is_hook_response(record: Record) -> bool:
    return bool(record.get("subtype") == "hook_response")


class Rig:
    """The arbiter wired as the host wires it: the broker and the arbiter
    emit into one recording sink; the gate is what the turn engine holds."""

    def __init__(
        self,
        cwd: Path,
        *hooks: str,
        control_channel: bool = True,
        callbacks: tuple[CallbackHook, ...] = (),
    ) -> None:
        self.sink = Recorder()
        self.broker = ControlBroker.start(emit=self.sink, new_request_id=uuids())
        self.ref = PermissionArbiterActor.start(
            broker=self.broker,
            emit=self.sink,
            session=SessionIdentity(SID),
            cwd=cwd,
            session_env=dict,
            base_env=ENV,
            new_uuid=uuids(),
            control_channel=control_channel,
        )
        commands = (*(CommandHook(command=hook) for hook in hooks), *callbacks)
        self.gate = ArbiterGate(self.ref, hooks_for=lambda tool: commands, new_uuid=lambda: "n1")

    def ask(
        self, tool_use_id: str = "toolu_1", cancel: CancelScope | None = None
    ) -> Future[PermissionOutcome]:
        return self.gate.ask(
            PermissionAsk(
                tool_name="Bash",
                tool_input=LS,
                tool_use_id=tool_use_id,
                description="Run ls",
                suggestions=(),
                blocked_path=None,
                cancel=cancel or CancelScope(),
            )
        )

    def request(self, count: int = 1) -> Record:
        """The ``count``-th control_request, once it was emitted."""
        return self.sink.wait_for(is_request, count)[count - 1]

    def answer(self, request: Record, payload: Any = None, *, error: str | None = None) -> None:
        self.broker.on_response(response(request["request_id"], payload, error=error))

    def kinds(self) -> list[str]:
        return [kind(r) for r in self.sink.snapshot()]


def test_each_ask_sends_one_can_use_tool_request(tmp_path: Path) -> None:
    """WIRE-006 / WIRE-PERM-021: one request per tool use, through the broker."""
    rig = Rig(tmp_path)
    futures = [rig.ask("toolu_1"), rig.ask("toolu_2")]
    requests = [rig.request(1), rig.request(2)]
    assert [r["request"] for r in requests] == [
        can_use_tool_request("Bash", LS, tool_use_id, "Run ls")
        for tool_use_id in ("toolu_1", "toolu_2")
    ]
    assert not any(f.done() for f in futures)
    rig.answer(requests[1], {"behavior": "deny"})
    rig.answer(requests[0], {"behavior": "allow"})
    assert [f.result(WAIT).behavior for f in futures] == ["allow", "deny"]
    assert rig.kinds() == ["control_request", "control_request"]


@pytest.mark.parametrize(
    ("payload", "error", "outcome"),
    [
        ({"behavior": "allow"}, None, PermissionOutcome(behavior="allow", decided_by="host")),
        (
            {"behavior": "allow", "updatedInput": {"command": "pwd"}},
            None,
            PermissionOutcome(
                behavior="allow", updated_input=freeze({"command": "pwd"}), decided_by="host"
            ),
        ),
        (
            {"behavior": "deny", "message": "not here", "interrupt": True},
            None,
            PermissionOutcome(
                behavior="deny", message="not here", interrupt=True, decided_by="host"
            ),
        ),
        (
            {"behavior": "maybe"},
            None,
            PermissionOutcome(behavior="deny", message=INVALID_RESPONSE_MESSAGE, decided_by="host"),
        ),
        (
            None,
            "host failed",
            PermissionOutcome(behavior="deny", message=INVALID_RESPONSE_MESSAGE, decided_by="host"),
        ),
    ],
    ids=["allow", "allow-updated-input", "deny-interrupt", "invalid-denies", "error-denies"],
)
def test_the_host_answer_settles_the_future(
    tmp_path: Path, payload: Any, error: str | None, outcome: PermissionOutcome
) -> None:
    """WIRE-PERM-041..044, WIRE-PERM-002: every error is a denial."""
    rig = Rig(tmp_path)
    future = rig.ask()
    rig.answer(rig.request(), payload, error=error)
    assert future.result(WAIT) == outcome


def test_a_late_duplicate_answer_changes_nothing(tmp_path: Path) -> None:
    """Step 6: the tool use settles once; a second response for the same
    request is an orphan and the arbiter goes on serving asks."""
    rig = Rig(tmp_path)
    first = rig.ask("toolu_1")
    request = rig.request()
    rig.answer(request, {"behavior": "allow"})
    rig.answer(request, {"behavior": "deny", "message": "too late"})
    assert first.result(WAIT) == PermissionOutcome(behavior="allow", decided_by="host")
    second = rig.ask("toolu_2")
    rig.answer(rig.request(2), {"behavior": "deny", "message": "no"})
    assert second.result(WAIT) == PermissionOutcome(
        behavior="deny", message="no", decided_by="host"
    )


def test_an_interrupt_cancels_every_pending_ask_first(tmp_path: Path) -> None:
    """WIRE-011: the runner's interrupt aborts every pending permission: each
    gets its control_cancel_request before its future settles as a denial."""
    rig = Rig(tmp_path)
    futures = [rig.ask("toolu_1"), rig.ask("toolu_2")]
    requests = [rig.request(1), rig.request(2)]
    aborted = rig.broker.abort_all_permissions()
    assert aborted == tuple(r["request_id"] for r in requests)
    cancelled = PermissionOutcome(
        behavior="deny", message=INTERRUPTED_MESSAGE, decided_by="interrupt"
    )
    assert [f.result(WAIT) for f in futures] == [cancelled, cancelled]
    cancels = [r for r in rig.sink.snapshot() if r["type"] == "control_cancel_request"]
    assert [c["request_id"] for c in cancels] == list(aborted)


def test_eof_denies_pending_asks_without_a_cancel(tmp_path: Path) -> None:
    """WIRE-008 / DEC-EOF-1/2: the host can no longer answer and no hook
    decides: a denial saying so, and no cancel record (the broker already
    rejected the waiter); a later ask is denied without a request."""
    rig = Rig(tmp_path)
    future = rig.ask()
    rig.request()
    rig.broker.on_eof()
    no_channel = PermissionOutcome(
        behavior="deny", message=NO_CHANNEL_MESSAGE, decided_by="no_channel"
    )
    assert future.result(WAIT) == no_channel
    assert rig.ask("toolu_2").result(WAIT) == no_channel
    assert rig.kinds() == ["control_request"]


def test_stopping_the_arbiter_denies_what_is_pending(tmp_path: Path) -> None:
    rig = Rig(tmp_path)
    future = rig.ask()
    rig.request()
    rig.ref.stop(timeout=WAIT)
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message=NO_CHANNEL_MESSAGE, decided_by="no_channel"
    )


def test_a_request_that_cannot_be_sent_is_a_denial(tmp_path: Path) -> None:
    """WIRE-PERM-002: failing to ask is a denial, never a hang."""
    rig = Rig(tmp_path)
    rig.broker.stop()
    future = rig.ask()
    assert future.result(WAIT) == PermissionOutcome(behavior="deny", message=HOST_ERROR_MESSAGE)


# --- the hook race ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("hooks", "outcome"),
    [
        (
            ("""echo '{"decision":"allow","updatedInput":{"command":"pwd"}}'""",),
            PermissionOutcome(
                behavior="allow", updated_input=freeze({"command": "pwd"}), decided_by="hook"
            ),
        ),
        (
            ("echo 'not on my watch' >&2; exit 2",),
            PermissionOutcome(behavior="deny", message="not on my watch", decided_by="hook"),
        ),
        (
            ("exit 1",),
            PermissionOutcome(behavior="deny", message=HOOK_ERROR_MESSAGE, decided_by="hook"),
        ),
        (
            ("true", "exit 2"),
            PermissionOutcome(behavior="deny", message="denied by hook", decided_by="hook"),
        ),
    ],
    ids=["allow-by-hook", "deny-by-hook", "hook-error-denies", "pass-through-and-deny-vote"],
)
def test_a_decisive_hook_wins_and_cancels_the_host_request(
    tmp_path: Path, hooks: tuple[str, ...], outcome: PermissionOutcome
) -> None:
    """WIRE-PERM-001, scenario 6 (hook first): the host is silent; the first
    decisive hook settles the ask, and the host request gets its one cancel
    record after the deciding hook's hook_response; every hook reports one
    hook_response (DEC-HOOK-4)."""
    rig = Rig(tmp_path, *hooks)
    future = rig.ask()
    assert future.result(WAIT) == outcome
    request = rig.request()
    rig.sink.wait_for(is_hook_response, len(hooks))
    kinds = rig.kinds()
    assert kinds[0] == "control_request"
    assert (kinds.count("hook_started"), kinds.count("hook_response")) == (len(hooks), len(hooks))
    (cancel,) = [r for r in rig.sink.snapshot() if r["type"] == "control_cancel_request"]
    assert cancel["request_id"] == request["request_id"]
    assert kinds.index("control_cancel_request") > kinds.index("hook_response")


def test_the_host_answer_first_cancels_a_running_hook(tmp_path: Path) -> None:
    """Scenario 6 (host first): the host's deny wins; the hook is killed and
    reports ``cancelled``; no cancel record goes to the host."""
    rig = Rig(tmp_path, "exec sleep 60")
    future = rig.ask()
    rig.sink.wait_for(lambda r: kind(r) == "hook_started")
    rig.answer(rig.request(), {"behavior": "deny", "message": "host says no"})
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message="host says no", decided_by="host"
    )
    # DEC-EOF-2 / WIRE-004: the cancelled hook's response is written before
    # the ask settles, so before anything the turn writes after it.
    (hook_response,) = [r for r in rig.sink.snapshot() if is_hook_response(r)]
    assert hook_response["outcome"] == "cancelled"
    assert "control_cancel_request" not in rig.kinds()


def test_an_interrupt_during_the_hook_race_cancels_both_once(tmp_path: Path) -> None:
    """WIRE-011 with a hook running: the host request gets exactly one cancel
    record, the hook is killed and reports ``cancelled``, the ask is denied."""
    rig = Rig(tmp_path, "exec sleep 60")
    future = rig.ask()
    rig.sink.wait_for(lambda r: kind(r) == "hook_started")
    request = rig.request()
    assert rig.broker.abort_all_permissions() == (request["request_id"],)
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message=INTERRUPTED_MESSAGE, decided_by="interrupt"
    )
    (hook_response,) = [r for r in rig.sink.snapshot() if is_hook_response(r)]
    assert hook_response["outcome"] == "cancelled"
    rig.ref.stop(timeout=WAIT)  # every message the race caused was handled
    cancels = [r for r in rig.sink.snapshot() if r["type"] == "control_cancel_request"]
    assert [c["request_id"] for c in cancels] == [request["request_id"]]


def test_a_pass_through_hook_leaves_the_host_to_decide(tmp_path: Path) -> None:
    """DEC-HOOK-3: an empty hook answer is not decisive; the host's allow is."""
    rig = Rig(tmp_path, "true")
    future = rig.ask()
    rig.sink.wait_for(is_hook_response)
    assert not future.done()
    rig.answer(rig.request(), {"behavior": "allow"})
    assert future.result(WAIT) == PermissionOutcome(behavior="allow", decided_by="host")
    assert "control_cancel_request" not in rig.kinds()


def test_ask_network_sends_the_synthetic_request_without_hooks(tmp_path: Path) -> None:
    """WIRE-PERM-004/023: SandboxNetworkAccess goes to the host; permission
    hooks are not run for it."""
    rig = Rig(tmp_path, "exit 2")
    future = rig.gate.ask_network("example.com", 443, cancel=CancelScope())
    request = rig.request()
    assert request["request"] == network_access_request("example.com", 443, "n1")
    rig.answer(request, {"behavior": "allow"})
    assert future.result(WAIT) == PermissionOutcome(behavior="allow", decided_by="host")
    assert rig.kinds() == ["control_request"]


def test_an_ask_of_an_already_cancelled_turn_sends_nothing(tmp_path: Path) -> None:
    """WIRE-011: once the turn's scope is cancelled (the interrupt cancels it
    before acknowledging) an ask that reaches the arbiter later is denied and
    no can_use_tool follows the acknowledgement; the turn never waits."""
    rig = Rig(tmp_path)
    scope = CancelScope()
    scope.cancel()
    outcome = rig.ask("toolu_late", cancel=scope).result(WAIT)
    assert outcome == PermissionOutcome(
        behavior="deny", message=INTERRUPTED_MESSAGE, decided_by="interrupt"
    )
    rig.ask("toolu_next")  # a later ask of another turn still goes out, first
    assert rig.request(1)["request"]["tool_use_id"] == "toolu_next"


def test_cancelling_the_turn_settles_an_open_ask_with_its_cancel_record(tmp_path: Path) -> None:
    """An ask the broker's abort sweep did not see (it registered after the
    sweep) is still settled by the turn's scope: one cancel record, a denial."""
    rig = Rig(tmp_path)
    scope = CancelScope()
    future = rig.ask("toolu_1", cancel=scope)
    request = rig.request(1)
    scope.cancel()
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message=INTERRUPTED_MESSAGE, decided_by="interrupt"
    )
    cancels = rig.sink.wait_for(lambda r: r["type"] == "control_cancel_request", 1)
    assert [c["request_id"] for c in cancels] == [request["request_id"]]


# --- no host to answer (DEC-EOF-2) ----------------------------------------------


@pytest.mark.parametrize(
    ("hooks", "outcome"),
    [
        (
            ("""echo '{"decision":"allow"}'""",),
            PermissionOutcome(behavior="allow", decided_by="hook"),
        ),
        (
            ("exit 2",),
            PermissionOutcome(behavior="deny", message="denied by hook", decided_by="hook"),
        ),
        (
            ("true",),
            PermissionOutcome(behavior="deny", message=NO_CHANNEL_MESSAGE, decided_by="no_channel"),
        ),
        (
            ("exit 1",),
            PermissionOutcome(
                behavior="deny",
                message=f"{HOOK_ERROR_MESSAGE}; {NO_CHANNEL_MESSAGE}",
                decided_by="hook",
            ),
        ),
        (
            (),
            PermissionOutcome(behavior="deny", message=NO_CHANNEL_MESSAGE, decided_by="no_channel"),
        ),
    ],
    ids=["hook-allows", "hook-denies", "pass-through-denies", "hook-error-denies", "no-hook"],
)
def test_without_a_control_channel_the_hook_alone_decides(
    tmp_path: Path, hooks: tuple[str, ...], outcome: PermissionOutcome
) -> None:
    """Text-mode ``-p``: no can_use_tool is ever sent; the hook's events are
    all written before the ask settles."""
    rig = Rig(tmp_path, *hooks, control_channel=False)
    assert rig.ask().result(WAIT) == outcome
    expected = ["hook_started", "hook_response"] if hooks else []
    assert [k for k in rig.kinds() if k != "hook_progress"] == expected


def test_input_eof_leaves_a_running_hook_to_decide(tmp_path: Path) -> None:
    """DEC-EOF-2 in duplex mode: the host request is rejected at EOF, the hook
    is not cancelled, and its allow decides once it answers."""
    gate = tmp_path / "go"
    rig = Rig(
        tmp_path, f"""while [ ! -e {gate} ]; do sleep 0.01; done; echo '{{"decision":"allow"}}'"""
    )
    future = rig.ask()
    rig.request()
    rig.sink.wait_for(lambda r: kind(r) == "hook_started")
    rig.broker.on_eof()
    gate.touch()
    assert future.result(WAIT) == PermissionOutcome(behavior="allow", decided_by="hook")
    assert rig.kinds()[-1] == "hook_response"
    assert "control_cancel_request" not in rig.kinds()


def test_a_hook_outliving_the_arbiter_ends_without_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopping the arbiter with a hook running: the ask is denied, the hook
    reports ``cancelled``, and its driver thread ends cleanly (no
    ActorDeadError escapes it)."""
    escaped: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: escaped.append(args.exc_value))
    rig = Rig(tmp_path, "exec sleep 60")
    future = rig.ask()
    rig.sink.wait_for(lambda r: kind(r) == "hook_started")
    rig.ref.stop(timeout=WAIT)  # on_stop joins the hook's driver thread
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message=NO_CHANNEL_MESSAGE, decided_by="no_channel"
    )
    (hook_response,) = [r for r in rig.sink.snapshot() if is_hook_response(r)]
    assert hook_response["outcome"] == "cancelled"
    assert escaped == []


# -- SDK callback hooks in the race (DEC-PROFILE-2) -------------------------------------


def _hook_callback(rig: Rig) -> Record:
    return rig.sink.wait_for(
        lambda r: r["type"] == "control_request" and r["request"]["subtype"] == "hook_callback"
    )[0]


def test_a_callback_hook_races_the_host_and_its_deny_wins(tmp_path: Path) -> None:
    rig = Rig(tmp_path, callbacks=(CallbackHook(callback_id="hook_0"),))
    future = rig.ask()
    callback = _hook_callback(rig)
    request = callback["request"]
    assert (request["callback_id"], request["tool_use_id"]) == ("hook_0", "toolu_1")
    assert request["input"]["hook_event_name"] == "PermissionRequest"
    assert request["input"]["tool_input"] == LS
    deny = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "sdk says no"},
        }
    }
    rig.answer(callback, deny)
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message="sdk says no", decided_by="hook"
    )
    rig.sink.wait_for(lambda r: r["type"] == "control_cancel_request")
    (response,) = [r for r in rig.sink.snapshot() if is_hook_response(r)]
    assert (response["hook_name"], response["outcome"]) == ("hook_0", "success")


def test_a_silent_callback_hook_is_withdrawn_at_its_deadline_and_denies(tmp_path: Path) -> None:
    """WIRE-PERM-002: a hook that does not answer in time never approves."""
    rig = Rig(tmp_path, callbacks=(CallbackHook(callback_id="hook_0", timeout_s=0.2),))
    future = rig.ask()
    callback = _hook_callback(rig)
    assert future.result(WAIT) == PermissionOutcome(
        behavior="deny", message=HOOK_TIMEOUT_MESSAGE, decided_by="hook"
    )
    cancels = [r for r in rig.sink.snapshot() if r["type"] == "control_cancel_request"]
    assert callback["request_id"] in {c["request_id"] for c in cancels}
    (response,) = [r for r in rig.sink.snapshot() if is_hook_response(r)]
    assert response["outcome"] == "error"
