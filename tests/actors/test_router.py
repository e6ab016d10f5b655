"""The Router: control requests answered on the reader's thread, the serial
dispatcher's order kept, one writer message per run of answers (spec
"Control operations", WIRE-003, DECISIONS section 1).

The supervisor is a real pykka actor that records what it gets and can be
held; the sink and the runner handle record into one shared log, so the log
is the order in which the router handed things over. Nothing sleeps.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from agentx.actors.base import Actor
from agentx.actors.host_wiring import Router
from agentx.actors.turn_runner import Submit
from agentx.messages import outbound
from agentx.messages.decode import InboundRecord, decode_line
from agentx.messages.dispatch import SET_MODEL_ERROR
from agentx.messages.framing import Line
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_control import ControlRequest
from agentx.sessions.identity import SessionIdentity
from tests.actors.helpers import WAIT

INIT_PAYLOAD = FrozenDict(commands=(), pid=1)
NO_SERVERS = FrozenDict(mcpServers=())


def control(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": subtype, **fields},
    }


def decoded(*records: Mapping[str, Any] | bytes) -> tuple[InboundRecord, ...]:
    """Each record as the reader hands it over: framed bytes, decoded."""
    lines = (r if isinstance(r, bytes) else json.dumps(r).encode() for r in records)
    return tuple(decode_line(Line(number=n, data=data)) for n, data in enumerate(lines, 1))


class Log:
    """The sink's and the runner's side of the router, in call order."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, Any]] = []

    def emit(self, records: tuple[Mapping[str, Any], ...]) -> None:
        self.entries.append(("emit", records))

    def tell(self, message: object) -> None:
        self.entries.append(("runner", message))


class Dispatcher(Actor):
    """The supervisor's place: records each request, held until ``release``."""

    def __init__(self, seen: queue.SimpleQueue[object], release: threading.Event) -> None:
        super().__init__()
        self._seen = seen
        self._release = release

    def on_receive(self, message: Any) -> Any:
        self._seen.put(message)
        assert self._release.wait(WAIT)
        return None


class Rig:
    def __init__(
        self, *, held: bool = False, profile: Any = "standalone", waiting: Any = None
    ) -> None:
        self.log = Log()
        self.seen: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.release = threading.Event()
        if not held:
            self.release.set()
        self.supervisor = Dispatcher.start(self.seen, self.release)
        self.waiting = waiting
        ids = iter(f"uuid-{n}" for n in range(100))
        self.router = Router(
            runner=self.log,  # type: ignore[arg-type]
            supervisor=self.supervisor,
            broker=None,
            uploads=None,
            sink=self.log,  # type: ignore[arg-type]
            update_environment=lambda _: None,
            identity=SessionIdentity("session-router"),
            new_uuid=lambda: next(ids),
            pricing=None,
            replay=False,
            profile=profile,
            inline={"initialize": lambda: INIT_PAYLOAD, "mcp_status": lambda: NO_SERVERS},
            await_initialize=waiting,
        )

    def handed_to_supervisor(self) -> object:
        return self.seen.get(timeout=WAIT)


@pytest.fixture
def rig() -> Iterator[Rig]:
    made = Rig()
    yield made
    made.release.set()
    made.supervisor.stop()


@pytest.fixture
def held() -> Iterator[Rig]:
    made = Rig(held=True)
    yield made
    made.release.set()
    made.supervisor.stop()


@pytest.mark.parametrize(
    ("request_record", "answer"),
    [
        (control("r1", "mcp_status"), outbound.control_response_success("r1", NO_SERVERS)),
        (control("r1", "initialize"), outbound.control_response_success("r1", INIT_PAYLOAD)),
        (
            control("r1", "initialize", hooks=None),
            outbound.control_response_success("r1", INIT_PAYLOAD),
        ),
        (
            control("r1", "set_model", model="m"),
            outbound.control_response_error("r1", SET_MODEL_ERROR),
        ),
        (control("r1", "get_settings"), outbound.unsupported_control("r1", "get_settings")),
        (
            control("r1", "mcp_status", extra=1),
            outbound.control_response_error("r1", "extra is not a field of this request"),
        ),
        (
            {"type": "control_request", "request_id": "r1", "request": {"subtype": 7}},
            outbound.control_response_error("r1", "control_request: request has no string subtype"),
        ),
        (
            b'{"type":"control_request","request_id":"r1","request":{"subtype":"x","a":1,"a":2}}',
            outbound.control_response_error("r1", "ambiguous JSON: duplicate member name"),
        ),
    ],
    ids=[
        "inline-mcp-status",
        "inline-initialize",
        "initialize-hooks-null",
        "fixed-restart-error",
        "uninstalled-subtype",
        "field-error",
        "invalid-request",
        "duplicate-inside-request",
    ],
)
def test_requests_that_need_no_other_party_are_answered_here(
    rig: Rig, request_record: Mapping[str, Any] | bytes, answer: FrozenDict
) -> None:
    rig.router(decoded(request_record))
    assert rig.log.entries == [("emit", (answer,))]
    assert rig.seen.empty()


def test_an_uncorrelatable_request_writes_nothing(rig: Rig) -> None:
    """DECISIONS section 1: no string request_id, one diagnostic, dropped."""
    rig.router(decoded({"type": "control_request", "request": {"subtype": "mcp_status"}}))
    assert rig.log.entries == []
    assert rig.seen.empty()


def test_a_run_of_answers_is_one_writer_message(rig: Rig) -> None:
    batch = decoded(*(control(f"r{n}", "mcp_status") for n in range(5)))
    rig.router(batch)
    answers = tuple(outbound.control_response_success(f"r{n}", NO_SERVERS) for n in range(5))
    assert rig.log.entries == [("emit", answers)]


def test_answers_before_a_prompt_leave_before_the_prompt_is_handed_on(rig: Rig) -> None:
    """Arrival order across parties: r1's answer, the prompt, then r2's and
    the input error's answers together at the end of the batch."""
    prompt = {"type": "user", "message": "hi", "parent_tool_use_id": None}
    invalid = {"type": "user", "message": 5, "parent_tool_use_id": None}
    batch = decoded(control("r1", "mcp_status"), prompt, control("r2", "mcp_status"), invalid)
    rig.router(batch)
    kinds = [(kind, type(item).__name__) for kind, item in rig.log.entries]
    assert kinds == [("emit", "tuple"), ("runner", "Submit"), ("emit", "tuple")]
    first, submitted, last = (item for _, item in rig.log.entries)
    assert first == (outbound.control_response_success("r1", NO_SERVERS),)
    assert isinstance(submitted, Submit) and submitted.record is batch[1]
    assert last[0] == outbound.control_response_success("r2", NO_SERVERS)
    assert last[1]["type"] == "result" and last[1]["is_error"] is True
    assert last[1]["errors"] == ("input_error: message must be a string or an object",)


def test_a_request_only_the_supervisor_can_answer_goes_there(rig: Rig) -> None:
    rig.router(decoded(control("r1", "interrupt")))
    handed = rig.handed_to_supervisor()
    assert isinstance(handed, ControlRequest) and handed.request_id == "r1"
    assert rig.log.entries == []


def test_while_the_supervisor_is_busy_every_request_queues_behind_it(held: Rig) -> None:
    """The serial dispatcher's order: with an earlier request still being
    handled, a request the router could answer goes to the supervisor too,
    so its answer cannot overtake the earlier one."""
    held.router(decoded(control("r1", "interrupt")))
    assert isinstance(held.handed_to_supervisor(), ControlRequest)
    held.router(decoded(control("r2", "mcp_status"), control("r3", "set_model")))
    assert held.log.entries == []
    held.release.set()
    assert [held.handed_to_supervisor(), held.handed_to_supervisor()] == list(
        decoded(control("r2", "mcp_status"), control("r3", "set_model"))
    )


def test_once_the_supervisor_has_caught_up_answers_are_inline_again(held: Rig) -> None:
    held.router(decoded(control("r1", "interrupt")))
    held.handed_to_supervisor()
    held.release.set()
    # Handled after r1, so r1 is handled (and its reply set) by then.
    held.supervisor.ask("sync", timeout=WAIT)
    assert held.handed_to_supervisor() == "sync"
    held.router(decoded(control("r2", "mcp_status")))
    assert held.log.entries == [("emit", (outbound.control_response_success("r2", NO_SERVERS),))]


def test_the_extended_profile_answers_its_own_subtypes_through_the_supervisor() -> None:
    made = Rig(profile="extended")
    try:
        made.router(decoded(control("r1", "get_settings")))
        handed = made.handed_to_supervisor()
        assert isinstance(handed, ControlRequest) and handed.subtype == "get_settings"
        assert made.log.entries == []
    finally:
        made.supervisor.stop()


class _Latch:
    """The shell's ending: the status it decided."""

    def __init__(self) -> None:
        self.decided: list[int] = []
        self.done = threading.Event()

    def decide(self, code: int) -> None:
        self.decided.append(code)
        self.done.set()


def _waiting_rig(profile: Any = "standalone", seconds: float = 600.0) -> tuple[Rig, _Latch]:
    from agentx.actors.initialize_wait import InitializeWait

    latch = _Latch()
    waiting = InitializeWait(supervision=latch, seconds=seconds)  # type: ignore[arg-type]
    return Rig(profile=profile, waiting=waiting), latch


def test_await_initialize_holds_prompts_until_initialize() -> None:
    """``--await-initialize``: prompts before ``initialize`` are carried right
    behind its answer, in order; later prompts go at once."""
    made, latch = _waiting_rig()
    try:
        first = {"type": "user", "message": "one", "parent_tool_use_id": None}
        second = {"type": "user", "message": "two", "parent_tool_use_id": None}
        early = decoded(first, control("r1", "mcp_status"), second)
        made.router(early)
        assert made.log.entries == [
            ("emit", (outbound.control_response_success("r1", NO_SERVERS),))
        ]
        made.router(decoded(control("i", "initialize")))
        kinds = [(kind, type(item).__name__) for kind, item in made.log.entries[1:]]
        assert kinds == [("emit", "tuple"), ("runner", "Submit"), ("runner", "Submit")]
        assert made.log.entries[1][1] == (outbound.control_response_success("i", INIT_PAYLOAD),)
        assert [e[1].record for e in made.log.entries[2:]] == [early[0], early[2]]
        made.router(decoded(first))
        assert type(made.log.entries[-1][1]).__name__ == "Submit"
        assert made.waiting is not None and made.waiting.on_eof()
        assert latch.decided == []
    finally:
        made.supervisor.stop()


def test_await_initialize_in_the_sdk_profile_waits_for_the_fields() -> None:
    """With fields, initialize goes to the supervisor; the released prompt
    follows it there, never ahead."""
    made, _ = _waiting_rig(profile="sdk")
    try:
        prompt = {"type": "user", "message": "one", "parent_tool_use_id": None}
        made.router(decoded(prompt, control("i", "initialize", promptSuggestions=True)))
        handed = made.handed_to_supervisor()
        assert isinstance(handed, ControlRequest) and handed.subtype == "initialize"
        assert [kind for kind, _ in made.log.entries] == ["runner"]
    finally:
        made.supervisor.stop()


def test_await_initialize_ends_the_session_at_eof_with_a_held_prompt() -> None:
    made, latch = _waiting_rig()
    try:
        made.router(decoded({"type": "user", "message": "one", "parent_tool_use_id": None}))
        assert made.waiting is not None and not made.waiting.on_eof()
        assert latch.decided == [2] and made.log.entries == []
        made.router(decoded(control("i", "initialize")))
        assert made.log.entries == []  # ended: nothing more is carried
    finally:
        made.supervisor.stop()


def test_await_initialize_deadline_ends_the_session() -> None:
    """The timer thread ends the session with status 2 at the deadline."""
    made, latch = _waiting_rig(seconds=0.05)
    try:
        made.router(decoded({"type": "user", "message": "one", "parent_tool_use_id": None}))
        assert latch.done.wait(WAIT)
        assert latch.decided == [2]
        made.router(decoded(control("i", "initialize")))
        assert made.log.entries == []
    finally:
        made.supervisor.stop()
