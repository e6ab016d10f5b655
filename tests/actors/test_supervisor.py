"""SupervisorActor over real pykka threads with a real TurnRunnerActor
(spec "Control operations", DEC-PROFILE-1, WIRE-001, WIRE-008, WIRE-010,
WIRE-013/015, DEC-EOF-1, DECISIONS section 8).

The supervisor handles one message at a time, so ``ask`` on its ref returns
once a message is fully handled; every other wait is on an event, a queue or
the exit latch. Nothing sleeps.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from agentx.actors.supervision import (
    EXIT_FATAL_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_OUTPUT_FAILED,
    ExitLatch,
    Failed,
    InputFailed,
    OutputFailed,
    RunnerDrained,
    Signalled,
    StoreFailed,
)
from agentx.actors.supervisor import FatalInput, InputEOF, Operations, SupervisorActor
from agentx.actors.turn_runner import Submit
from agentx.messages import outbound
from agentx.messages.dispatch import (
    SET_MAX_THINKING_TOKENS_ERROR,
    SET_MODEL_ERROR,
    SET_PERMISSION_MODE_ERROR,
    Profile,
)
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.inbound_control import (
    ControlRequest,
    InvalidControlRequest,
    UncorrelatableControl,
)
from agentx.turns.results import INTERRUPTED
from tests.actors.helpers import WAIT, GatedProvider, Recorder, RunnerRig, is_result, user

INIT = FrozenDict(commands=(), models=())
USAGE = FrozenDict(totalTokens=7)


class Rig:
    """A supervisor over a real runner, wired as the host wires them: the
    runner's drain tells the supervisor; the exit latch is the main thread's."""

    def __init__(
        self,
        provider: GatedProvider,
        *,
        profile: Profile = "standalone",
        **operations: Any,
    ) -> None:
        self.latch = ExitLatch()
        self.runner = RunnerRig(
            provider, on_drained=functools.partial(self.latch.report, RunnerDrained())
        )
        self.sink: Recorder = self.runner.sink
        defaults: dict[str, Any] = {
            "initialize": lambda: INIT,
            "context_usage": lambda: USAGE,
            "mcp_status": lambda: FrozenDict(mcpServers=()),
        }
        self.ref = SupervisorActor.start(
            emit=self.sink,
            profile=profile,
            runner=self.runner.ref,
            operations=Operations(**{**defaults, **operations}),
            supervision=self.latch,
        )

    def handle(self, message: object) -> None:
        self.ref.ask(message, timeout=WAIT)

    def control(self, subtype: str, **payload: Any) -> list[Mapping[str, Any]]:
        """Send one control request; the records it produced."""
        before = len(self.sink.snapshot())
        self.handle(
            ControlRequest(line=1, request_id="req-1", subtype=subtype, payload=freeze(payload))
        )
        return self.sink.snapshot()[before:]


@pytest.fixture
def held() -> Iterator[Rig]:
    """A supervisor whose runner has one turn, ``active``, inside its model call."""
    rig = Rig(GatedProvider("active"), profile="extended")
    rig.runner.ref.tell(Submit(user("active", uuid="u-active")))
    assert rig.runner.started() == "active"
    yield rig
    rig.runner.provider.release("active")


def error(message: str) -> Mapping[str, Any]:
    return outbound.control_response_error("req-1", message)


def success(payload: Any = None) -> Mapping[str, Any]:
    return outbound.control_response_success("req-1", payload)


# --- dispatch ---------------------------------------------------------------------

UNSUPPORTED = 'unsupported control request "{}"'


@pytest.mark.parametrize(
    ("profile", "subtype", "payload", "expected"),
    [
        ("standalone", "initialize", {}, success(INIT)),
        ("standalone", "initialize", {"hooks": None}, success(INIT)),
        ("standalone", "get_context_usage", {}, success(USAGE)),
        ("standalone", "mcp_status", {}, success(FrozenDict(mcpServers=()))),
        ("standalone", "set_model", {"model": "other"}, error(SET_MODEL_ERROR)),
        ("standalone", "set_permission_mode", {"mode": "plan"}, error(SET_PERMISSION_MODE_ERROR)),
        (
            "standalone",
            "set_max_thinking_tokens",
            {"max_thinking_tokens": 10},
            error(SET_MAX_THINKING_TOKENS_ERROR),
        ),
        (
            "standalone",
            "initialize",
            {"systemPrompt": "x"},
            error(
                "initialize cannot set systemPrompt; start agentx with "
                "--system-prompt or --append-system-prompt"
            ),
        ),
        ("standalone", "initialize", {"systemPrompt": [""]}, success(INIT)),
        (
            "standalone",
            "get_context_usage",
            {"extra": 1},
            error("extra is not a field of this request"),
        ),
        ("standalone", "get_settings", {}, error(UNSUPPORTED.format("get_settings"))),
        (
            "standalone",
            "cancel_async_message",
            {"message_uuid": "u"},
            error(UNSUPPORTED.format("cancel_async_message")),
        ),
        ("standalone", "rewind_files", {}, error(UNSUPPORTED.format("rewind_files"))),
        ("extended", "rewind_files", {}, error(UNSUPPORTED.format("rewind_files"))),
        (
            "extended",
            "cancel_async_message",
            {},
            error("cancel_async_message takes exactly a string message_uuid"),
        ),
        ("extended", "get_settings", {}, success(FrozenDict(effective=FrozenDict()))),
        ("extended", "stop_task", {"task_id": "task_1"}, success()),
        ("extended", "stop_task", {"task_id": "task_9"}, error("no background task task_9")),
        ("extended", "apply_flag_settings", {"settings": {"model": "x"}}, success()),
        ("extended", "apply_flag_settings", {"settings": {}}, error("settings is empty")),
        # Not wired by this host (no MCP manager): installed but unsupported here.
        (
            "extended",
            "mcp_reconnect",
            {"serverName": "s"},
            error(UNSUPPORTED.format("mcp_reconnect")),
        ),
    ],
    ids=[
        "initialize",
        "initialize-hooks-null",
        "context-usage",
        "mcp-status",
        "set-model-restart",
        "set-permission-mode-restart",
        "set-max-thinking-tokens-restart",
        "initialize-field-error",
        "initialize-ts-sdk-empty-prompt",
        "fieldless-field-error",
        "standalone-get-settings",
        "standalone-cancel-async",
        "standalone-unknown",
        "extended-unknown",
        "extended-field-error",
        "extended-get-settings",
        "stop-task-ok",
        "stop-task-error",
        "apply-flag-settings-ok",
        "apply-flag-settings-error",
        "extended-operation-not-wired",
    ],
)
def test_each_control_request_gets_one_correlated_answer(
    profile: Profile, subtype: str, payload: dict[str, Any], expected: Mapping[str, Any]
) -> None:
    """Spec "Control operations" / DEC-PROFILE-1: answered once, correlated by
    request_id; unsupported, field and restart errors are error responses."""
    rig = Rig(
        GatedProvider(),
        profile=profile,
        get_settings=lambda: FrozenDict(effective=FrozenDict()),
        stop_task=lambda task_id: None if task_id == "task_1" else f"no background task {task_id}",
        apply_flag_settings=lambda settings: None if settings else "settings is empty",
    )
    assert rig.control(subtype, **payload) == [expected]


def test_invalid_and_uncorrelatable_requests(warnings: list[str]) -> None:
    """DECISIONS section 1: a recoverable request_id gets a correlated error;
    a control record without one is dropped with a WARN and nothing emitted."""
    rig = Rig(GatedProvider())
    rig.handle(InvalidControlRequest(line=3, request_id="req-1", error="request must be an object"))
    rig.handle(UncorrelatableControl(line=4, reason="control_request has no string request_id"))
    assert rig.sink.snapshot() == [error("request must be an object")]
    assert warnings == ["line 4: control record dropped: control_request has no string request_id"]


def test_mcp_set_servers_answers_before_connecting() -> None:
    """Scenario 8: the response is enqueued before anything the connections cause."""
    sink_box: list[Recorder] = []

    def set_servers(servers: Mapping[str, Any]) -> tuple[FrozenDict, Callable[[], None]]:
        return FrozenDict(added=tuple(servers)), lambda: sink_box[0].mark("connect")

    rig = Rig(GatedProvider(), profile="extended", mcp_set_servers=set_servers)
    sink_box.append(rig.sink)
    records = rig.control("mcp_set_servers", servers={"s": {"command": "x"}})
    assert records == [success(FrozenDict(added=("s",))), FrozenDict(type="mark", name="connect")]


# --- the runner -------------------------------------------------------------------


def test_interrupt_goes_to_the_runner(held: Rig) -> None:
    """WIRE-010: the runner cancels the active turn and acknowledges; the
    acknowledgement precedes the cancelled turn's result."""
    held.control("interrupt")
    held.sink.wait_for(is_result)
    answered = [r for r in held.sink.snapshot() if r["type"] in ("control_response", "result")]
    assert [r["type"] for r in answered] == ["control_response", "result"]
    assert answered[0] == success()
    assert answered[1]["errors"] == (INTERRUPTED,)


@pytest.mark.parametrize(
    ("uuid", "cancelled"),
    [("u-queued", True), ("u-active", False), ("u-unknown", False)],
    ids=["queued", "started", "unknown"],
)
def test_cancel_async_message_asks_the_runner(held: Rig, uuid: str, cancelled: bool) -> None:
    held.runner.ref.tell(Submit(user("queued", uuid="u-queued")))
    assert held.control("cancel_async_message", message_uuid=uuid) == [
        success(FrozenDict(cancelled=cancelled))
    ]


# --- the exit status --------------------------------------------------------------


def test_eof_runs_the_hooks_before_closing_the_runner_then_exits_0() -> None:
    """WIRE-008 / DEC-EOF-1: the EOF hooks (the broker's, the uploads') run
    before the runner hears of EOF, so what they hand the runner is still
    drained; the runner's drain is the ending, status 0."""
    box: list[Rig] = []

    def late_prompt() -> None:
        box[0].sink.mark("eof-2")
        box[0].runner.ref.tell(Submit(user("late", uuid="u-late")))

    rig = Rig(GatedProvider(), on_eof=(lambda: box[0].sink.mark("eof-1"), late_prompt))
    box.append(rig)
    rig.ref.tell(InputEOF())
    assert rig.latch.wait(WAIT) == EXIT_OK
    order = [
        r.get("name", r.get("prompt_uuid"))
        for r in rig.sink.snapshot()
        if r["type"] in ("mark", "result")
    ]
    assert order == ["eof-1", "eof-2", "u-late"]


def test_fatal_input_finishes_accepted_turns_then_exits_1(held: Rig) -> None:
    """WIRE-001 / DECISIONS section 8: status 1, but the fatal stream ends
    input as EOF does (DEC-EOF-1): the accepted turns still end with their
    results and the status is decided once the runner drained."""
    held.runner.ref.tell(Submit(user("queued", uuid="u-queued")))
    held.handle(FatalInput(7, "invalid JSON: Expecting value at column 1"))
    assert held.latch.wait(0) is None  # the active turn is still held
    held.runner.provider.release("active")
    assert held.latch.wait(WAIT) == EXIT_FATAL_INPUT
    assert [r["prompt_uuid"] for r in held.runner.results()] == ["u-active", "u-queued"]


def test_a_failing_operation_is_an_internal_failure(errors: list[str]) -> None:
    """DECISIONS section 8: the router asks the dispatcher (pykka would hand
    the exception to that future only); the failure still ends the session
    with status 4 and one ERROR line naming the actor and the type."""

    def broken() -> FrozenDict:
        raise KeyError("sk-not-to-be-printed")

    rig = Rig(GatedProvider(), context_usage=broken)
    with pytest.raises(KeyError):
        rig.control("get_context_usage")
    assert rig.latch.wait(WAIT) == EXIT_INTERNAL
    assert errors == ["internal failure in SupervisorActor: KeyError"]


# --- the exit latch: the root of the supervision tree -------------------------------


@pytest.mark.parametrize(
    ("first", "code"),
    [
        ((RunnerDrained(),), EXIT_OK),
        ((InputFailed(), RunnerDrained()), EXIT_FATAL_INPUT),
        ((OutputFailed("writer"),), EXIT_OUTPUT_FAILED),
        ((Failed("WriterActor", RuntimeError()),), EXIT_INTERNAL),
        ((Signalled(15),), 143),
        ((Signalled(2),), 130),
        ((Signalled(1),), 129),
    ],
    ids=["drained", "fatal-input", "output-failed", "failed", "sigterm", "sigint", "sighup"],
)
def test_the_first_decided_ending_wins(first: tuple[Any, ...], code: int) -> None:
    """DECISIONS section 8: once an ending is decided, a later drain, output
    failure or signal changes nothing."""
    latch = ExitLatch()
    assert latch.wait(0) is None
    for message in first:
        latch.report(message)
    assert latch.wait(WAIT) == code
    latch.report(OutputFailed("broken_pipe"))
    latch.report(RunnerDrained())
    latch.report(Signalled(15))
    assert latch.wait(0) == code == latch.code


@pytest.mark.parametrize("clean", [EXIT_OK, EXIT_FATAL_INPUT], ids=["ok", "fatal-input"])
def test_a_failure_after_a_clean_end_is_still_status_4(clean: int, errors: list[str]) -> None:
    """A defect while the session shuts down must not pass as a clean end."""
    latch = ExitLatch()
    if clean == EXIT_FATAL_INPUT:
        latch.report(InputFailed())
    latch.report(RunnerDrained())
    assert latch.code == clean
    latch.report(Failed("UploadManagerActor", OSError("disk")))
    assert latch.code == EXIT_INTERNAL
    assert errors == ["internal failure in UploadManagerActor: OSError"]


@pytest.mark.parametrize("clean", [None, EXIT_OK, EXIT_FATAL_INPUT], ids=["live", "ok", "fatal"])
def test_a_failed_store_barrier_is_status_4_with_the_stores_error(
    clean: int | None, errors: list[str]
) -> None:
    """DEC-STORE-6: one ERROR line naming the store's error, status 4, also
    when it fails while a clean end shuts down (the last sync)."""
    latch = ExitLatch()
    if clean == EXIT_FATAL_INPUT:
        latch.report(InputFailed())
    if clean is not None:
        latch.report(RunnerDrained())
    latch.report(StoreFailed("the PostgreSQL session store failed: disk full"))
    assert latch.code == EXIT_INTERNAL
    assert len(errors) == 1
    assert errors[0].startswith("session store: the PostgreSQL session store failed: disk full;")
    latch.report(Signalled(15))
    assert latch.code == EXIT_INTERNAL


def test_failures_print_one_error_line_without_traceback(errors: list[str]) -> None:
    """One ERROR line naming where and the type only (its text may quote a
    credential); a second failure is DEBUG; the traceback is DEBUG."""
    latch = ExitLatch()
    latch.report(Failed("TurnRunnerActor", RuntimeError("sk-secret")))
    latch.report(Failed("agentx-task", ValueError("sk-secret")))
    assert latch.code == EXIT_INTERNAL
    assert errors == ["internal failure in TurnRunnerActor: RuntimeError"]


def test_the_second_signal_is_the_callers_to_exit_at_once() -> None:
    latch = ExitLatch()
    assert latch.first_signal(15) is True
    assert latch.first_signal(2) is False
    assert latch.code == 143


def test_a_signal_after_another_ending_keeps_that_status() -> None:
    latch = ExitLatch()
    latch.report(RunnerDrained())
    assert latch.first_signal(15) is True
    assert latch.first_signal(15) is False
    assert latch.code == EXIT_OK


@pytest.mark.parametrize(
    ("codes", "decided"),
    [((0, 3), 0), ((3, 0), 3), ((1, 3, 0), 1)],
    ids=["ok-first", "output-failed-first", "fatal-first"],
)
def test_exit_latch_keeps_the_first_code(codes: tuple[int, ...], decided: int) -> None:
    latch = ExitLatch()
    assert latch.wait(0) is None
    for code in codes:
        latch.decide(code)
    assert latch.wait(0) == decided == latch.code
