"""Control request correlation: the sans-IO core of the control broker.

Rules implemented here:

- WIRE-006 / WIRE-PERM-020: a request is registered before its envelope is
  handed out, and removed exactly once (response, abort, EOF, shutdown, or an
  emission rollback).
- WIRE-007: abort enqueues ``control_cancel_request``, rejects at once and
  remembers the id as known-late so its eventual response is ignored.
- WIRE-008 / DEC-EOF-1: EOF rejects every pending request with a
  stream-closed error; later registrations are refused.
- WIRE-009 / WIRE-PERM-040: a response is validated with the schema stored on
  its waiter before it resolves; success is never exempt. A response that
  broke the closed outer union (``InvalidControlResponse``) rejects its waiter.
- WIRE-011: every pending permission request can be aborted in one ordered step.
- WIRE-PERM-045 and "Ordering, replay, and duplicate suppression": a bounded
  set of 1,000 resolved tool-use ids (oldest evicted); a response for no
  pending request is ignored when known-late or for a resolved tool use, else
  it is an orphan.
- WIRE-015: an emission failure rolls the unresolved waiter back.

Every method returns effects, in the order they must be carried out: an
:class:`Emit` before the rejections it explains (cancel records precede the
settlement of their waiters, WIRE-011).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from msgspec import Struct

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.inbound_control import ControlResponse, InvalidControlResponse
from agentx.messages.records import Emit

#: Capacity of the resolved tool-use set and of the known-late id set.
RESOLVED_CAPACITY = 1_000


class ResponseInvalid(ValueError):
    """Raised by a :class:`ResponseSchema` for a payload it does not accept."""


if TYPE_CHECKING:  # a Protocol only annotations use: not defined at start-up (DEC-CLI-3)
    from typing import Protocol, TypeVar

    T_co = TypeVar("T_co", covariant=True)

    class ResponseSchema(Protocol[T_co]):
        """Validates a success payload before its waiter resolves (WIRE-009)."""

        def __call__(self, payload: FrozenDict | None, /) -> T_co: ...


#: What the reader routes to the broker: a decoded response, or one that broke
#: the closed outer union and therefore rejects its waiter (WIRE-PERM-044).
InboundResponse = ControlResponse | InvalidControlResponse


#: Why a waiter was rejected instead of resolved.
RejectReasonName = Literal[
    "error_response", "invalid_response", "aborted", "stream_closed", "shutdown"
]


class RejectReason:
    """The :data:`RejectReasonName` values by name: constants, not a StrEnum,
    whose class costs about 0.15 ms to define before the ``initialize``
    response (start-up, DEC-CLI-3); the ``Literal`` keeps the set closed."""

    ERROR_RESPONSE: Final = "error_response"
    INVALID_RESPONSE: Final = "invalid_response"
    ABORTED: Final = "aborted"
    STREAM_CLOSED: Final = "stream_closed"
    SHUTDOWN: Final = "shutdown"


ABORTED_MESSAGE = "control request aborted"
STREAM_CLOSED_MESSAGE = "control stream closed"
SHUTDOWN_MESSAGE = "control broker shut down"
#: WIRE-015: the one fixed emission failure; callback errors are never formatted.
EMISSION_FAILED_MESSAGE = "control emission failed"
ERROR_RESPONSE_MESSAGE = "control request failed"


# --- effects --------------------------------------------------------------------


class Resolved(Struct, frozen=True, kw_only=True):
    """The waiter for ``request_id`` resolved with the schema-validated ``value``."""

    request_id: str
    value: object


class Rejected(Struct, frozen=True, kw_only=True):
    """The waiter for ``request_id`` was rejected.

    ``pending_permission_requests`` carries an error response's validated
    recovery detail (WIRE-PERM-040); it is empty otherwise.
    """

    request_id: str
    reason: RejectReasonName
    message: str
    pending_permission_requests: tuple[FrozenDict, ...] = ()


class Ignored(Struct, frozen=True, kw_only=True):
    """A response for no pending request that is a known duplicate or late answer."""

    request_id: str
    cause: Literal["known_late", "resolved_tool_use"]


class Orphan(Struct, frozen=True, kw_only=True):
    """A response for no pending request and no known tool use (WIRE-PERM-045)."""

    response: InboundResponse


Settlement = Resolved | Rejected
Effect = Emit | Resolved | Rejected | Ignored | Orphan


# --- bounded memories -------------------------------------------------------------


class BoundedIdSet:
    """Insertion-ordered ids, each with an optional associated id; the oldest
    is evicted beyond ``capacity``."""

    __slots__ = ("_capacity", "_ids")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self._capacity = capacity
        self._ids: OrderedDict[str, str] = OrderedDict()

    def add(self, key: str, value: str = "") -> None:
        self._ids[key] = value
        self._ids.move_to_end(key)
        while len(self._ids) > self._capacity:
            self._ids.popitem(last=False)

    def get(self, key: str) -> str | None:
        return self._ids.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def __len__(self) -> int:
        return len(self._ids)


class _Waiter(Struct, frozen=True, kw_only=True):
    schema: ResponseSchema[object]
    subtype: str
    tool_use_id: str | None


def _cancel_record(request_id: str) -> FrozenDict:
    return FrozenDict(type="control_cancel_request", request_id=request_id)


def _valid_pending_requests(value: tuple[FrozenDict, ...]) -> bool:
    # DEC-CLI-3: the permission wire loads with the first permission request.
    from agentx.messages.permission_wire import (  # noqa: PLC0415
        InvalidPermissionWire,
        validate_can_use_tool_request,
    )

    """Each member must be a complete closed ``can_use_tool`` control request
    (WIRE-PERM-020/021) and no two members may share a request id (WIRE-014)."""
    seen: set[str] = set()
    for member in value:
        if not isinstance(member, Mapping) or frozenset(member) != {
            "type",
            "request_id",
            "request",
        }:
            return False
        request_id = member["request_id"]
        if member["type"] != "control_request" or not isinstance(request_id, str):
            return False
        if not request_id or request_id in seen:
            return False
        seen.add(request_id)
        try:
            validate_can_use_tool_request(member["request"])
        except InvalidPermissionWire:
            return False
    return True


class ControlCorrelator:
    """The correlation map for outbound control requests (WIRE-006..009)."""

    def __init__(
        self,
        *,
        new_request_id: Callable[[], str],
        resolved_capacity: int = RESOLVED_CAPACITY,
        known_late_capacity: int = RESOLVED_CAPACITY,
    ) -> None:
        self._new_request_id = new_request_id
        self._pending: dict[str, _Waiter] = {}
        # tool_use_id -> request_id of settled can_use_tool waiters, plus the reverse.
        self._resolved_tool_uses = BoundedIdSet(resolved_capacity)
        self._tool_use_by_request = BoundedIdSet(resolved_capacity)
        self._known_late = BoundedIdSet(known_late_capacity)
        self._closed: RejectReasonName | None = None

    @property
    def pending_ids(self) -> tuple[str, ...]:
        """Pending request ids in registration order."""
        return tuple(self._pending)

    @property
    def closed(self) -> bool:
        """True after EOF or shutdown: new requests are refused (DEC-EOF-1)."""
        return self._closed is not None

    def is_resolved_tool_use(self, tool_use_id: str) -> bool:
        return tool_use_id in self._resolved_tool_uses

    def register(
        self, request: Mapping[str, Any], schema: ResponseSchema[object]
    ) -> tuple[str, tuple[Effect, ...]]:
        """Register a waiter, then return its id and the effect that emits the envelope.

        After EOF or shutdown nothing is registered or emitted: the only effect
        is the waiter's immediate rejection (DEC-EOF-1: a new permission ask is
        denied without a request).
        """
        subtype = request.get("subtype")
        if not isinstance(subtype, str) or not subtype:
            raise ValueError("a control request needs a string subtype")
        from agentx.messages.permission_wire import CAN_USE_TOOL  # noqa: PLC0415 - DEC-CLI-3

        tool_use_id = request.get("tool_use_id") if subtype == CAN_USE_TOOL else None
        if tool_use_id is not None and not isinstance(tool_use_id, str):
            raise ValueError("can_use_tool needs a string tool_use_id")
        request_id = self._new_request_id()
        if (
            request_id in self._pending
            or request_id in self._known_late
            or request_id in self._tool_use_by_request
        ):
            raise ValueError("request id factory repeated an id (WIRE-PERM-020)")
        if self._closed is not None:
            return request_id, (self._closed_rejection(request_id, self._closed),)
        self._pending[request_id] = _Waiter(schema=schema, subtype=subtype, tool_use_id=tool_use_id)
        envelope = FrozenDict(
            type="control_request", request_id=request_id, request=freeze(request)
        )
        return request_id, (Emit(records=(envelope,)),)

    def on_response(self, response: InboundResponse) -> tuple[Effect, ...]:
        """Resolve or reject the matching waiter after validating the response."""
        request_id = response.request_id
        waiter = self._pending.pop(request_id, None)
        if waiter is None:
            return (self._route_unmatched(response),)
        self._remember_tool_use(request_id, waiter)
        return (self._settle_response(request_id, waiter, response),)

    def abort(self, request_id: str) -> tuple[Effect, ...]:
        """WIRE-007: cancel record, immediate rejection; a late response is ignored."""
        return self._abort_ids((request_id,) if request_id in self._pending else ())

    def abort_permissions(self) -> tuple[Effect, ...]:
        """WIRE-011: cancel every pending ``can_use_tool`` request, cancels first."""
        from agentx.messages.permission_wire import CAN_USE_TOOL  # noqa: PLC0415 - DEC-CLI-3

        ids = tuple(rid for rid, waiter in self._pending.items() if waiter.subtype == CAN_USE_TOOL)
        return self._abort_ids(ids)

    def rollback(self, request_id: str) -> tuple[Effect, ...]:
        """WIRE-015: the envelope's emission failed; reject the waiter if still pending.

        A result selected before the failure (the emitter delivered the
        response synchronously) is preserved: nothing is left to roll back.
        """
        waiter = self._pending.pop(request_id, None)
        if waiter is None:
            return ()
        self._forget_locally(request_id, waiter)
        return (
            Rejected(
                request_id=request_id, reason=RejectReason.ABORTED, message=EMISSION_FAILED_MESSAGE
            ),
        )

    def on_eof(self) -> tuple[Effect, ...]:
        """WIRE-008: reject everything still pending (after the tail was dispatched)."""
        return self._close(RejectReason.STREAM_CLOSED)

    def shutdown(self) -> tuple[Effect, ...]:
        """Reject everything still pending and refuse new requests."""
        return self._close(RejectReason.SHUTDOWN)

    # --- internals ---------------------------------------------------------------

    def _abort_ids(self, request_ids: tuple[str, ...]) -> tuple[Effect, ...]:
        if not request_ids:
            return ()
        rejections: list[Effect] = []
        for request_id in request_ids:
            self._forget_locally(request_id, self._pending.pop(request_id))
            rejections.append(
                Rejected(
                    request_id=request_id, reason=RejectReason.ABORTED, message=ABORTED_MESSAGE
                )
            )
        cancels = Emit(records=tuple(_cancel_record(rid) for rid in request_ids))
        return (cancels, *rejections)

    def _close(self, reason: RejectReasonName) -> tuple[Effect, ...]:
        if self._closed is None:
            self._closed = reason
        pending, self._pending = self._pending, {}
        effects: list[Effect] = []
        for request_id, waiter in pending.items():
            self._forget_locally(request_id, waiter)
            effects.append(self._closed_rejection(request_id, reason))
        return tuple(effects)

    @staticmethod
    def _closed_rejection(request_id: str, reason: RejectReasonName) -> Rejected:
        message = (
            STREAM_CLOSED_MESSAGE if reason is RejectReason.STREAM_CLOSED else SHUTDOWN_MESSAGE
        )
        return Rejected(request_id=request_id, reason=reason, message=message)

    def _forget_locally(self, request_id: str, waiter: _Waiter) -> None:
        """A waiter settled without a response: its response, if any, is late."""
        self._known_late.add(request_id)
        self._remember_tool_use(request_id, waiter)

    def _remember_tool_use(self, request_id: str, waiter: _Waiter) -> None:
        if waiter.tool_use_id is not None:
            self._resolved_tool_uses.add(waiter.tool_use_id, request_id)
            self._tool_use_by_request.add(request_id, waiter.tool_use_id)

    def _route_unmatched(self, response: InboundResponse) -> Effect:
        request_id = response.request_id
        if request_id in self._known_late:
            return Ignored(request_id=request_id, cause="known_late")
        tool_use_id = self._tool_use_by_request.get(request_id)
        if isinstance(response, ControlResponse) and tool_use_id is None and response.response:
            claimed = response.response.get("toolUseID")
            tool_use_id = claimed if isinstance(claimed, str) else None
        if tool_use_id is not None and tool_use_id in self._resolved_tool_uses:
            return Ignored(request_id=request_id, cause="resolved_tool_use")
        return Orphan(response=response)

    @staticmethod
    def _settle_response(request_id: str, waiter: _Waiter, response: InboundResponse) -> Settlement:
        def invalid(message: str) -> Rejected:
            return Rejected(
                request_id=request_id, reason=RejectReason.INVALID_RESPONSE, message=message
            )

        if isinstance(response, InvalidControlResponse):
            return invalid("invalid control response")

        pending = response.pending_permission_requests
        if pending is not None and not _valid_pending_requests(pending):
            return invalid("invalid pending_permission_requests")
        if response.subtype == "error":
            if response.response is not None or not isinstance(response.error, str):
                return invalid("invalid error response")
            return Rejected(
                request_id=request_id,
                reason=RejectReason.ERROR_RESPONSE,
                message=response.error or ERROR_RESPONSE_MESSAGE,
                pending_permission_requests=pending or (),
            )
        if response.subtype != "success" or response.error is not None or pending is not None:
            return invalid("invalid success response")
        try:
            value = waiter.schema(response.response)
        except ResponseInvalid:
            return invalid(f"invalid {waiter.subtype} response")
        return Resolved(request_id=request_id, value=value)
