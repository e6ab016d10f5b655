"""ControlBrokerActor: the pykka shell around the control correlation core.

It owns :class:`~agentx.messages.control.ControlCorrelator` and carries out
its effects: envelopes and cancel records go to ``emit`` (the writer's inbox,
the shared FIFO of WIRE-003) in the order the core decided, and waiters
settle through futures that an asker on any other thread may block on.

WIRE-015 callback containment: ``emit``, the orphan handler and every
``on_settle`` callback may raise anything, including exceptions whose
``__str__``/``__repr__`` raise. Such an error is never formatted; it becomes
one fixed WARN. A failed envelope emission rolls its waiter back (rejected
with reason ``aborted``) unless a result was already selected; waiters whose
cancel record failed to emit are settled anyway; the broker stays usable.

Re-entrance: a callback running on the broker's own thread may call back into
the :class:`ControlBroker` handle. Such a call runs inline (the core is
consistent whenever a callback runs), so it neither deadlocks nor reorders.

Deadlines (DECISIONS section 8: no state waits without a deadline). From any
other thread a handle call waits for the broker at most ``ask_seconds``
(:data:`~agentx.actors.base.ASK_SECONDS`): the broker only registers, hands
records to the writer and settles futures, so a broker that does not answer
in time is broken. The expiry is reported to the session's supervision as
the broker's failure (exit 4, one ERROR line) and the caller fails closed:
:meth:`ControlBroker.ask` and :meth:`ControlBroker.pending_ids` raise
:class:`~agentx.actors.base.AskExpired` (the arbiter then denies the
permission ask, WIRE-PERM-002); ``abort``, ``abort_all_permissions``,
``on_eof`` and ``stop`` return, their effect left undone, while the session
ends. A host's *answer* to a request is not waited for here: ``result``
settles on the answer, an abort, EOF or the broker's stop.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import pykka
from msgspec import Struct

from agentx.actors.base import ASK_SECONDS, Actor, AskExpired, answer_within, report_expired
from agentx.actors.supervision import ExitLatch
from agentx.diagnostics import logger
from agentx.messages.control import (
    EMISSION_FAILED_MESSAGE,
    ControlCorrelator,
    Effect,
    InboundResponse,
    Orphan,
    Rejected,
    RejectReasonName,
    Resolved,
    Settlement,
)
from agentx.messages.frozen import FrozenDict
from agentx.messages.records import Emit, Records, RecordSink

if TYPE_CHECKING:
    from agentx.messages.control import ResponseSchema

T = TypeVar("T")

OrphanHandler = Callable[[InboundResponse], None]
OnSettle = Callable[[Settlement], None]

_MAX_LOGGED_ID = 128


class ControlRequestFailed(Exception):
    """A control request's waiter was rejected.

    ``reason`` says why (error response, invalid response, aborted, stream
    closed, shutdown); ``message`` is the host's error text or a fixed phrase.
    """

    def __init__(
        self,
        reason: RejectReasonName,
        message: str,
        pending_permission_requests: tuple[FrozenDict, ...] = (),
    ) -> None:
        super().__init__(reason, message)
        self.reason = reason
        self.message = message
        self.pending_permission_requests = pending_permission_requests

    def __str__(self) -> str:
        return f"{self.reason}: {self.message}"


class PendingControl(Struct, Generic[T], frozen=True, kw_only=True):
    """One outbound control request: abort it by ``request_id``; ``result.get()``
    returns the schema-validated value or raises :class:`ControlRequestFailed`."""

    request_id: str
    result: pykka.Future[T]


class _Waiter(Struct, frozen=True, kw_only=True):
    future: pykka.ThreadingFuture[object]
    on_settle: OnSettle | None


class _Inbound(Struct, frozen=True):
    response: InboundResponse


def default_orphan_handler(response: InboundResponse) -> None:
    """WIRE-PERM-045: an orphaned response is a stderr WARN by default."""
    logger.warning(
        "orphan control_response for request_id {!r}", response.request_id[:_MAX_LOGGED_ID]
    )


class ControlBrokerActor(Actor):
    """Correlates outbound control requests with their responses (WIRE-006..011)."""

    def __init__(
        self,
        *,
        emit: RecordSink,
        new_request_id: Callable[[], str],
        orphan_handler: OrphanHandler | None = None,
        supervision: ExitLatch | None = None,
        ask_seconds: float = ASK_SECONDS,
    ) -> None:
        super().__init__(supervision=supervision)
        #: How long a caller on another thread waits for this actor (module doc).
        self.ask_seconds = ask_seconds
        self.supervision = supervision
        self._emit_records = emit
        self._orphan_handler = orphan_handler or default_orphan_handler
        self._core = ControlCorrelator(new_request_id=new_request_id)
        self._waiters: dict[str, _Waiter] = {}
        self._thread_ident: int | None = None
        self.handle = ControlBroker(self)

    def on_start(self) -> None:
        self._thread_ident = threading.get_ident()

    def on_stop(self) -> None:
        """Shutdown rejects every waiter so no asker waits forever (WIRE-006)."""
        self._apply(self._core.shutdown())

    def on_actor_thread(self) -> bool:
        return self._thread_ident == threading.get_ident()

    def on_receive(self, message: Any) -> Any:
        """A told inbound response (a failure here is supervised: on_failure)."""
        if not isinstance(message, _Inbound):
            raise TypeError(f"ControlBrokerActor got an unknown message {type(message).__name__}")
        self.on_response(message.response)
        return None

    # --- messages (called through the proxy, or inline on re-entrance) --------------

    def ask(
        self, request: Mapping[str, Any], schema: ResponseSchema[object], on_settle: OnSettle | None
    ) -> PendingControl[object]:
        """Register, then emit the envelope (WIRE-006); roll back if emission fails."""
        future: pykka.ThreadingFuture[object] = pykka.ThreadingFuture()
        request_id, effects = self._core.register(request, schema)
        self._waiters[request_id] = _Waiter(future=future, on_settle=on_settle)
        if not self._apply(effects):
            self._apply(self._core.rollback(request_id))
        return PendingControl(request_id=request_id, result=future)

    def abort(self, request_id: str) -> None:
        """WIRE-007: cancel record, then the waiter's immediate rejection."""
        self._apply(self._core.abort(request_id))

    def abort_all_permissions(self, emit: RecordSink | None = None) -> tuple[str, ...]:
        """WIRE-011: hand every pending permission's cancel records to ``emit``
        (None: the writer), then reject the waiters, and return their ids; the
        caller writes the interrupt ack after this."""
        effects = self._core.abort_permissions()
        self._apply(effects, emit)
        return tuple(e.request_id for e in effects if isinstance(e, Rejected))

    def on_response(self, response: InboundResponse) -> None:
        self._apply(self._core.on_response(response))

    def on_eof(self) -> None:
        """WIRE-008 / DEC-EOF-1: reject what is pending; later asks are refused."""
        self._apply(self._core.on_eof())

    def pending_ids(self) -> tuple[str, ...]:
        return self._core.pending_ids

    # --- effects --------------------------------------------------------------------

    def _apply(self, effects: tuple[Effect, ...], emit: RecordSink | None = None) -> bool:
        """Carry out effects in order, records to ``emit`` (None: the writer);
        False when an emission failed (WIRE-015).

        A failed emission does not stop the settlements after it.
        """
        emitted = True
        for effect in effects:
            if isinstance(effect, Emit):
                emitted = self._emit(effect.records, emit or self._emit_records) and emitted
            elif isinstance(effect, Resolved | Rejected):
                self._settle(effect)
            elif isinstance(effect, Orphan):
                self._orphan(effect.response)
        return emitted

    def _emit(self, records: Records, emit: RecordSink) -> bool:
        try:
            emit(records)
        except Exception:
            logger.warning(EMISSION_FAILED_MESSAGE)
            return False
        return True

    def _settle(self, settlement: Settlement) -> None:
        # A waiter can be missing only when ask() itself was interrupted (say a
        # RecursionError from a re-entrant callback) before anyone got its future.
        waiter = self._waiters.pop(settlement.request_id, None)
        if waiter is None:
            return
        if isinstance(settlement, Resolved):
            waiter.future.set(settlement.value)
        else:
            failure = ControlRequestFailed(
                settlement.reason, settlement.message, settlement.pending_permission_requests
            )
            waiter.future.set_exception((ControlRequestFailed, failure, None))
        if waiter.on_settle is not None:
            try:
                waiter.on_settle(settlement)
            except Exception:
                logger.warning("control settle callback failed")

    def _orphan(self, response: InboundResponse) -> None:
        try:
            self._orphan_handler(response)
        except Exception:
            logger.warning("control orphan handler failed")


class ControlBroker:
    """The thread-safe handle to a running :class:`ControlBrokerActor`.

    From any other thread a call goes through the actor's inbox and waits at
    most the actor's ``ask_seconds`` (the module's "Deadlines"). On the
    broker's own thread (a callback re-entering) it runs inline.
    """

    __slots__ = ("_actor", "_proxy")

    def __init__(self, actor: ControlBrokerActor) -> None:
        self._actor = actor
        self._proxy: Any = actor.actor_ref.proxy()

    def _within(self, future: pykka.Future[T]) -> T:
        """The broker's answer, or :class:`AskExpired` once reported (exit 4)."""
        return answer_within(
            future,
            self._actor.ask_seconds,
            where=type(self._actor).__name__,
            supervision=self._actor.supervision,
        )

    @classmethod
    def start(
        cls,
        *,
        emit: RecordSink,
        new_request_id: Callable[[], str],
        orphan_handler: OrphanHandler | None = None,
        supervision: ExitLatch | None = None,
        ask_seconds: float = ASK_SECONDS,
    ) -> ControlBroker:
        """Start the actor; returns its handle once it runs (at most ``ask_seconds``)."""
        ref = ControlBrokerActor.start(
            emit=emit,
            new_request_id=new_request_id,
            orphan_handler=orphan_handler,
            supervision=supervision,
            ask_seconds=ask_seconds,
        )
        handle: ControlBroker = answer_within(
            ref.proxy().handle,
            ask_seconds,
            where=ControlBrokerActor.__name__,
            supervision=supervision,
        )
        return handle

    @property
    def actor_ref(self) -> pykka.ActorRef[ControlBrokerActor]:
        return self._actor.actor_ref

    def ask(
        self,
        request: Mapping[str, Any],
        schema: ResponseSchema[T],
        on_settle: OnSettle | None = None,
    ) -> PendingControl[T]:
        """Send ``request`` (an object with ``subtype``) and return at once.

        The envelope has been handed to ``emit`` when this returns.
        ``on_settle`` runs on the broker thread right after the waiter settles.
        Raises :class:`AskExpired` (already reported) when the broker does not
        take the request within its deadline.
        """
        if self._actor.on_actor_thread():
            pending = self._actor.ask(request, schema, on_settle)
        else:
            pending = self._within(self._proxy.ask(request, schema, on_settle))
        return cast("PendingControl[T]", pending)

    def abort(self, request_id: str) -> None:
        """Cancel a pending request; returns after its cancel record was emitted,
        or once the deadline expired (reported; the session is ending)."""
        if self._actor.on_actor_thread():
            self._actor.abort(request_id)
        else:
            with contextlib.suppress(AskExpired):
                self._within(self._proxy.abort(request_id))

    def abort_all_permissions(self, emit: RecordSink | None = None) -> tuple[str, ...]:
        """WIRE-011: returns after every permission cancel record was handed to
        ``emit`` (None: the writer) and every waiter was rejected; on an
        expired deadline (reported; the session is ending) no ids."""
        if self._actor.on_actor_thread():
            return self._actor.abort_all_permissions(emit)
        try:
            ids: tuple[str, ...] = self._within(self._proxy.abort_all_permissions(emit))
        except AskExpired:
            return ()
        return ids

    def on_response(self, response: InboundResponse) -> None:
        """Route an inbound response; does not wait for it to be handled."""
        if self._actor.on_actor_thread():
            self._actor.on_response(response)
        else:
            self._actor.actor_ref.tell(_Inbound(response))

    def on_eof(self) -> None:
        """Input closed; returns after every pending waiter was rejected, or
        once the deadline expired (reported; the session is ending)."""
        if self._actor.on_actor_thread():
            self._actor.on_eof()
        else:
            with contextlib.suppress(AskExpired):
                self._within(self._proxy.on_eof())

    def pending_ids(self) -> tuple[str, ...]:
        """The pending request ids; :class:`AskExpired` past the deadline."""
        if self._actor.on_actor_thread():
            return self._actor.pending_ids()
        ids: tuple[str, ...] = self._within(self._proxy.pending_ids())
        return ids

    def stop(self) -> None:
        """Stop the actor; every waiter still pending is rejected (shutdown).

        Off the broker thread this returns once the actor has stopped, or once
        its deadline expired (reported; the session is ending).
        """
        if self._actor.on_actor_thread():
            self._actor.actor_ref.stop(block=False)
            return
        seconds = self._actor.ask_seconds
        try:
            self._actor.actor_ref.stop(block=True, timeout=seconds)
        except pykka.Timeout:
            error = AskExpired(type(self._actor).__name__, seconds)
            report_expired(error, self._actor.supervision)
