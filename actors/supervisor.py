"""SupervisorActor: the serial inbound control dispatcher and the end of input
(DESIGN.md "The actors", DECISIONS section 8).

Decisions live in :mod:`agentx.messages.dispatch`; this shell carries out the
actions that need other parties. The end of input (EOF, or a fatal input
stream: WIRE-001, status 1) runs the EOF hooks, then tells the runner, whose
drain is an ending of :class:`~agentx.actors.supervision.ExitLatch`, the root
of the supervision tree; a failure while dispatching is one too (status 4).

In the ``sdk`` profile (DEC-PROFILE-2) an ``initialize`` with fields is
planned by :func:`~agentx.messages.initialize.plan_initialize` against the
host's field handlers: each field is applied before the answer, or the
request is refused and the session ends with
:data:`~agentx.messages.initialize.REFUSED_STATUS`; the router holds the
prompts that follow until this returns (never a turn without a field the
client sent). ``set_model`` and ``set_permission_mode`` are live there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pykka
from msgspec import Struct, field

from agentx.actors.base import ASK_SECONDS, Actor, AskExpired, answer_within
from agentx.actors.supervision import ExitLatch, InputFailed
from agentx.actors.turn_runner import CancelQueued, InputClosed, Interrupt, TurnRunnerActor
from agentx.diagnostics import logger
from agentx.messages import outbound
from agentx.messages.dispatch import ControlRecord, Drop, Perform, Reply, dispatch
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_control import (
    ControlRequest,
    InvalidControlRequest,
    UncorrelatableControl,
)
from agentx.messages.initialize import REFUSED_STATUS, Refused, plan_initialize, refusal_line
from agentx.messages.profiles import Profile
from agentx.messages.records import RecordSink

if TYPE_CHECKING:
    from agentx.actors.initialize_fields import FieldHandler

#: ``mcp_set_servers``: the response payload, and the step that connects.
SetServers = Callable[[Mapping[str, Any]], tuple[FrozenDict, Callable[[], None]]]


class FatalInput(Struct, frozen=True):
    line_number: int
    reason: str


class InputEOF(Struct, frozen=True):
    """The reader dispatched the final record; input is closed (WIRE-008)."""


class Operations(Struct, frozen=True, kw_only=True):
    """What the dispatcher's Perform actions call into (injected by the host)."""

    initialize: Callable[[], FrozenDict]
    context_usage: Callable[[], FrozenDict]
    mcp_status: Callable[[], FrozenDict]
    get_settings: Callable[[], FrozenDict] | None = None
    apply_flag_settings: Callable[[Mapping[str, Any]], str | None] | None = None
    stop_task: Callable[[str], str | None] | None = None
    #: DEC-PROFILE-1 (extended profile). ``mcp_set_servers`` returns the response
    #: payload and the step that starts connections, run after the response
    #: is enqueued (scenario 8).
    mcp_set_servers: SetServers | None = None
    mcp_reconnect: Callable[[str], str | None] | None = None
    mcp_toggle: Callable[[str, bool], str | None] | None = None
    on_eof: tuple[Callable[[], None], ...] = ()
    #: DEC-PROFILE-2 (the ``sdk`` profile): the ``initialize`` fields the host
    #: applies (:mod:`agentx.actors.initialize_fields`), the live permission
    #: mode and the model within the selected provider (None: the error says why).
    initialize_fields: Mapping[str, FieldHandler] = field(default_factory=dict)
    set_permission_mode: Callable[[str], str | None] | None = None
    set_model: Callable[[str | None], str | None] | None = None
    #: DEC-PROFILE-2 ``rewind_files`` (message id, dry run): the answer's
    #: payload, or the correlated error.
    rewind_files: Callable[[str, bool], FrozenDict | str] | None = None


class SupervisorActor(Actor):
    def __init__(
        self,
        *,
        emit: RecordSink,
        profile: Profile,
        runner: pykka.ActorRef[TurnRunnerActor],
        operations: Operations,
        supervision: ExitLatch,
        ask_seconds: float = ASK_SECONDS,
    ) -> None:
        super().__init__(supervision=supervision)
        self._ask_seconds = ask_seconds
        self._emit = emit
        self._profile = profile
        self._runner = runner
        self._ops = operations
        self._latch = supervision

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, ControlRequest | InvalidControlRequest | UncorrelatableControl):
            # The router asks (it waits for the answer to keep the serial
            # order), so pykka would hand a failure to its future only: a
            # failure here is this session's internal failure all the same.
            # The answer tells the router whether the session goes on
            # (False: a refused sdk-profile initialize ended it).
            try:
                return self._control(message)
            except Exception as exc:
                self.report_failure(exc)
                raise
        elif isinstance(message, FatalInput):
            # WIRE-001: status 1, but nothing already accepted is lost: the
            # input is over exactly as at EOF, and accepted turns finish.
            logger.error("line {}: {}", message.line_number, message.reason)
            self._latch.report(InputFailed())
            self._input_closed()
        elif isinstance(message, InputEOF):
            self._input_closed()
        else:
            raise TypeError(f"SupervisorActor got an unknown message {type(message).__name__}")
        return None

    def _input_closed(self) -> None:
        for hook in self._ops.on_eof:
            hook()
        self._runner.tell(InputClosed())

    def _control(self, request: ControlRecord) -> bool:
        action = dispatch(request, profile=self._profile)
        if isinstance(action, Reply):
            if action.warning is not None:
                logger.warning("{}", action.warning)
            self._emit((action.record,))
        elif isinstance(action, Drop):
            logger.warning("{}", action.diagnostic)
        elif action.subtype == "initialize" and action.fields:
            return self._initialize(action)
        else:
            try:
                self._perform(action)
            except AskExpired as expired:
                # Already reported (the session ends with 4); fail closed: the
                # request gets an error, never a silent success.
                self._emit((outbound.control_response_error(action.request_id, str(expired)),))
        return True

    def _initialize(self, action: Perform) -> bool:
        """DEC-PROFILE-2: apply every field, or refuse and end the session."""
        handlers = self._ops.initialize_fields
        plan = plan_initialize(
            action.fields, handled={name: h.check for name, h in handlers.items()}
        )
        if isinstance(plan, Refused):
            # The stderr line first: a client that stops reading once it
            # has the error (the Python SDK) has already got the line.
            logger.error("{}", refusal_line(plan))
            self._emit((outbound.control_response_error(action.request_id, plan.error),))
            self._latch.decide(REFUSED_STATUS)
            return False
        response = dict(self._ops.initialize())
        for name, value in plan.fields.items():
            extra = handlers[name].apply(value)
            if extra:
                response.update(extra)
        self._reply(action.request_id, FrozenDict(response))
        return True

    def _perform(self, action: Perform) -> None:
        rid, fields = action.request_id, action.fields
        subtype = action.subtype
        if subtype == "interrupt":
            # The runner emits cancels then the acknowledgement (WIRE-011).
            self._runner.tell(Interrupt(rid))
            return
        if subtype == "cancel_async_message":
            cancelled = answer_within(
                self._runner.ask(CancelQueued(fields["message_uuid"]), block=False),
                self._ask_seconds,
                where=TurnRunnerActor.__name__,
                supervision=self._latch,
            )
            self._reply(rid, FrozenDict(cancelled=bool(cancelled)))
            return
        if subtype == "mcp_set_servers" and self._ops.mcp_set_servers is not None:
            # Scenario 8: the response precedes anything the connections cause.
            payload, connect = self._ops.mcp_set_servers(fields["servers"])
            self._reply(rid, payload)
            connect()
            return
        error = self._perform_with_error(subtype, fields)
        if isinstance(error, str):
            self._emit((outbound.control_response_error(rid, error),))
        else:
            self._reply(rid, error)

    def _perform_with_error(self, subtype: str, fields: FrozenDict) -> str | FrozenDict | None:
        ops = self._ops
        if subtype == "initialize":
            return ops.initialize()
        if subtype == "get_context_usage":
            return ops.context_usage()
        if subtype == "mcp_status":
            return ops.mcp_status()
        if subtype == "get_settings" and ops.get_settings is not None:
            return ops.get_settings()
        if subtype == "apply_flag_settings" and ops.apply_flag_settings is not None:
            return ops.apply_flag_settings(fields["settings"])
        if subtype == "stop_task" and ops.stop_task is not None:
            return ops.stop_task(fields["task_id"])
        if subtype == "mcp_reconnect" and ops.mcp_reconnect is not None:
            return ops.mcp_reconnect(fields["serverName"])
        if subtype == "mcp_toggle" and ops.mcp_toggle is not None:
            return ops.mcp_toggle(fields["serverName"], fields["enabled"])
        if subtype == "set_permission_mode" and ops.set_permission_mode is not None:
            return ops.set_permission_mode(fields["mode"])
        if subtype == "set_model" and ops.set_model is not None:
            return ops.set_model(fields.get("model"))
        if subtype == "rewind_files" and ops.rewind_files is not None:
            return ops.rewind_files(fields["user_message_id"], fields.get("dry_run") is True)
        return f'unsupported control request "{subtype}"'

    def _reply(self, request_id: str, payload: FrozenDict | None) -> None:
        self._emit((outbound.control_response_success(request_id, payload),))
