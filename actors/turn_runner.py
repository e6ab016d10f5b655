"""TurnRunnerActor: the prompt queue and the agent loop (DEC-TURN-1/2, DEC-EOF-1).

The actor thread admits prompts and handles interrupts; one worker thread runs
turns through :class:`~agentx.turns.engine.TurnEngine`, so a blocking provider stream
never makes the runner deaf to an interrupt. Everything a turn writes goes
through :class:`~agentx.actors.turn_output.TurnOutput`, whose ordering core
(:mod:`agentx.messages.turn_order`) decides the interrupt order (WIRE-011 and
the hard-interrupt order) and the order after the result: the result, the
prompt suggestion (``--prompt-suggestions``), the post-turn summary
(``--post-turn-summaries``), the internal-event flush, ``idle`` (WIRE-004,
scenario 15). The runner supplies the facts only it knows: whether prompts
are queued, and the suggestion's text when its work survived.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from agentx.actors.base import Actor
from agentx.actors.supervision import ExitLatch
from agentx.actors.turn_output import TurnOutput
from agentx.diagnostics import logger
from agentx.messages import outbound, record_limit
from agentx.messages.accounting import Pricing
from agentx.messages.frozen import FrozenDict
from agentx.messages.inbound_user import TextPart, UserRecord
from agentx.messages.prompt_queue import Admitted, Duplicate, PromptQueue, QueuedPrompt, Refused
from agentx.messages.records import RecordSink
from agentx.messages.slash_commands import parse as parse_slash_command
from agentx.providers.base import Message
from agentx.sessions.identity import SessionIdentity
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import TurnInput
from agentx.turns.engine import TurnEngine
from agentx.turns.results import input_error_result

#: How long shutdown waits for a cancelled turn to emit its result.
STOP_JOIN_SECONDS = 10.0


class Submit(Struct, frozen=True):
    record: UserRecord


class Interrupt(Struct, frozen=True):
    """WIRE-010: abort the active turn, then acknowledge ``request_id``."""

    request_id: str


class InputClosed(Struct, frozen=True):
    """DEC-EOF-1: finish the active and queued turns, then report drained."""


class CancelQueued(Struct, frozen=True):
    """``cancel_async_message``: drop a queued, not yet started record."""

    uuid: str


class Seed(Struct, frozen=True):
    """Prior context: added to the history before the next turn; never a turn."""

    message: Message


class Shutdown(Struct, frozen=True):
    """Fatal shutdown: cancel the active turn and run nothing more."""


class TurnRunnerActor(Actor):
    def __init__(
        self,
        *,
        engine: TurnEngine,
        turn_output: TurnOutput,
        emit: RecordSink,
        session: SessionIdentity,
        new_uuid: Callable[[], str],
        pricing: Pricing | None,
        to_turn: Callable[[UserRecord], TurnInput],
        check_refs: Callable[[UserRecord], str | None],
        abort_permissions: Callable[[RecordSink], object],
        on_drained: Callable[[], None],
        replay_user_messages: bool = False,
        suggest: Callable[[CancelScope], str | None] | None = None,
        post_turn_summaries: bool = False,
        supervision: ExitLatch | None = None,
    ) -> None:
        super().__init__(supervision=supervision)
        self._engine = engine
        self._turn_output = turn_output
        self._emit = emit
        self._session = session
        self._uuid = new_uuid
        self._pricing = pricing
        self._to_turn = to_turn
        self._check_refs = check_refs
        self._abort_permissions = abort_permissions
        self._on_drained = on_drained
        self._replay = replay_user_messages
        self._suggest = suggest
        self._summaries = post_turn_summaries
        self._cond = threading.Condition()
        self._queue: PromptQueue[tuple[UserRecord, str]] = PromptQueue()
        self._active: CancelScope | None = None
        #: The prompt-suggestion work after a result; an interrupt or a new prompt aborts it.
        self._suggesting: CancelScope | None = None
        self._seeds: list[Message] = []
        self._input_closed = False
        self._stopping = False
        self._worker = threading.Thread(target=self._work, name="agentx-turns", daemon=True)

    @property
    def _session_id(self) -> str:
        """The current session id (``/clear`` renews it)."""
        return self._session.id

    def on_start(self) -> None:
        self._worker.start()

    def on_stop(self) -> None:
        self._halt()
        # The cancelled turn still ends with its one result before shutdown.
        self._worker.join(timeout=STOP_JOIN_SECONDS)

    def contain(self) -> None:
        """This actor failed (DECISIONS section 8): the active turn is
        cancelled and ends with its result before the failure is reported,
        and nothing queued runs."""
        self.on_stop()

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, Submit):
            self._submit(message.record)
        elif isinstance(message, Interrupt):
            self._interrupt(message.request_id)
        elif isinstance(message, InputClosed):
            with self._cond:
                self._input_closed = True
                self._cond.notify()
        elif isinstance(message, CancelQueued):
            with self._cond:
                return self._queue.cancel(message.uuid)
        elif isinstance(message, Seed):
            with self._cond:
                self._seeds.append(message.message)
        elif isinstance(message, Shutdown):
            self._halt()
        else:
            raise TypeError(f"TurnRunnerActor got an unknown message {type(message).__name__}")
        return None

    # -- admission (actor thread) ------------------------------------------------

    def _submit(self, record: UserRecord) -> None:
        for warning in record.warnings:
            logger.warning("line {}: {}", record.line, warning)
        # WIRE-020: every manifest and the queue reservation are validated
        # before a priority-now record may interrupt active work.
        reason = self._check_refs(record)
        if reason is not None:
            self._input_error(reason)
            return
        priority = record.priority or "later"
        # The message's uuid: the client's, else one the replayed echo and the
        # turn share (a file checkpoint's id, DEC-PROFILE-2).
        message_id = record.uuid or self._uuid()
        interrupted: tuple[CancelScope | None, ...] = ()
        with self._cond:
            admission = self._queue.admit(
                QueuedPrompt(
                    uuid=record.uuid,
                    priority=priority,
                    size=record.raw_size,
                    payload=(record, message_id),
                )
            )
            if isinstance(admission, Admitted):
                if self._replay:
                    self._emit((_replay_ack(record, self._session_id, message_id),))
                if self._suggesting is not None:  # a new prompt aborts the suggestion
                    self._suggesting.cancel()
                # DEC-TURN-1: a ``now`` record interrupts what is active at its
                # admission. Read here, under the lock that admits it: once the
                # lock is released, the idle worker may already run the record
                # itself, and its own turn must never be the one cancelled.
                interrupted = (self._active, self._suggesting)
                self._cond.notify()
        if isinstance(admission, Refused):
            self._input_error(admission.reason)
        elif isinstance(admission, Duplicate):
            # DEC-DEDUP-1: not run again; in replay mode still acknowledged.
            if self._replay:
                self._emit((_replay_ack(record, self._session_id, message_id),))
        elif admission.interrupt:
            self._interrupt(None, interrupted)

    def _input_error(self, reason: str) -> None:
        self._emit(
            (
                input_error_result(
                    reason, pricing=self._pricing, session_id=self._session_id, uuid=self._uuid()
                ),
            )
        )

    def _interrupt(
        self, request_id: str | None, scopes: tuple[CancelScope | None, ...] | None = None
    ) -> None:
        """WIRE-010/011: the turn output holds the turn side while the active
        and the prompt-suggestion scopes (``scopes``: those read when a
        ``now`` prompt was admitted) are cancelled and every pending
        permission's cancel record is handed over, then writes the cancels
        and the acknowledgement of ``request_id`` (None: a ``now`` prompt)
        before what the cancelled turn wrote."""
        if scopes is None:
            with self._cond:
                scopes = (self._active, self._suggesting)
        self._cancel(scopes, request_id)

    def _cancel(self, scopes: tuple[CancelScope | None, ...], request_id: str | None) -> None:
        def cancel(write_cancels: RecordSink) -> None:
            for scope in scopes:
                if scope is not None:
                    scope.cancel()
            self._abort_permissions(write_cancels)

        self._turn_output.interrupt(cancel, request_id)

    def _halt(self) -> None:
        with self._cond:
            self._stopping = True
            scope = self._active
            if self._suggesting is not None:
                self._suggesting.cancel()
            self._cond.notify()
        if scope is not None:
            # A turn waiting on a host answer must not outlive the session:
            # its permission waiters are rejected (denied) at once.
            self._cancel((scope,), None)

    # -- the worker thread -------------------------------------------------------

    def _work(self) -> None:
        begun = False
        while True:
            with self._cond:
                while not self._stopping and not len(self._queue) and not self._input_closed:
                    # Idle until there is work; the deadline is enforced
                    # elsewhere (DECISIONS section 8): input EOF and the stop
                    # (``_halt``) notify, and ``on_stop`` joins this thread
                    # within STOP_JOIN_SECONDS.
                    self._cond.wait()
                prompt = None if self._stopping else self._queue.pop()
                if prompt is None:
                    break
                scope = CancelScope()
                self._active = scope
                seeds, self._seeds = self._seeds, []
            if not begun:
                # DECISIONS section 3: SessionStart before the first prompt runs,
                # once ``initialize`` registered the SDK's callback hooks.
                begun = True
                self._engine.begin()
            self._engine.seed(seeds)
            after_result = self._run(*prompt.payload, scope)
            with self._cond:
                self._active = None
            self._finish(after_result=after_result)
        if not self._stopping:
            self._turn_output.drained(self._on_drained)

    def _run(self, record: UserRecord, message_id: str, scope: CancelScope) -> bool:
        """Run one prompt; False when it ended with an input error instead."""
        self._turn_output.turn_started(_prompt_text(record))
        command = parse_slash_command(record)  # DEC-TURN-1: answered locally
        if command is not None:
            self._engine.run_command(command, scope)
            return True
        try:
            turn = self._to_turn(record)
        except LookupError:
            self._input_error("attachment_unavailable")
            return False
        self._engine.run_turn(replace(turn, uuid=message_id), scope)
        return True

    # -- after the result (worker thread) ---------------------------------------

    def _finish(self, *, after_result: bool) -> None:
        """Ask for the prompt suggestion when the order core says one is due,
        then hand the turn output the facts of the turn's end (the core
        orders suggestion, summary, flush and ``idle``)."""
        suggestion = None
        if after_result and self._suggest is not None:
            suggestion = self._suggestion(self._suggest)
        with self._cond:
            more = bool(len(self._queue)) and not self._stopping
        self._turn_output.turn_finished(
            more_queued=more,
            after_result=after_result,
            suggestion=suggestion,
            summary=self._summaries,
        )

    def _suggestion(self, suggest: Callable[[CancelScope], str | None]) -> str | None:
        """The predicted next prompt, or None when none is due or an
        interrupt or a new prompt aborted its work (WIRE-010)."""
        scope = CancelScope()
        with self._cond:
            due = self._turn_output.suggestion_due(
                queued=bool(len(self._queue)), stopping=self._stopping
            )
            if not due:
                return None
            self._suggesting = scope
        try:
            text = suggest(scope)
        finally:
            with self._cond:
                self._suggesting = None
                survived = not scope.is_set()
        return text if survived else None


def _replay_ack(record: UserRecord, session_id: str, message_id: str) -> FrozenDict:
    """The replayed ``user`` echo that acknowledges an admitted record."""
    content = tuple(
        FrozenDict(type="text", text=part.text) if isinstance(part, TextPart) else part.to_wire()
        for part in record.content
    )
    message: dict[str, Any] = {"role": "user", "content": content}
    if record.content_version is not None:
        message["content_version"] = record.content_version
    # DEC-COMPAT-3: the acknowledgement of a prompt too long for one line
    # keeps what fits; the turn itself sees the whole prompt.
    return record_limit.cap_user_echo(
        outbound.user_echo(
            message,
            session_id=session_id,
            uuid=message_id,
            parent_tool_use_id=record.parent_tool_use_id,
            is_replay=True,
            priority=record.priority,
            timestamp=record.timestamp,
        )
    )


def _prompt_text(record: UserRecord) -> str:
    return "\n".join(part.text for part in record.content if isinstance(part, TextPart))
