"""The control correlation core (WIRE-006..011, WIRE-015, WIRE-PERM-040..045)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.control import (
    ABORTED_MESSAGE,
    EMISSION_FAILED_MESSAGE,
    ERROR_RESPONSE_MESSAGE,
    RESOLVED_CAPACITY,
    SHUTDOWN_MESSAGE,
    STREAM_CLOSED_MESSAGE,
    BoundedIdSet,
    ControlCorrelator,
    Effect,
    Ignored,
    Orphan,
    Rejected,
    RejectReason,
    Resolved,
    ResponseInvalid,
)
from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.inbound_control import ControlResponse, InvalidControlResponse
from agentx.messages.permission_wire import (
    INVALID_RESPONSE_DENIAL,
    PermissionAllow,
    PermissionResponseSchema,
    can_use_tool_request,
)
from agentx.messages.records import Emit


def ids(prefix: str = "req") -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"{prefix}_{next(counter)}"


def response(
    request_id: str,
    subtype: str = "success",
    payload: Any = None,
    error: str | None = None,
    pending: tuple[Any, ...] | None = None,
) -> ControlResponse:
    inner: dict[str, Any] = {"subtype": subtype, "request_id": request_id}
    if payload is not None:
        inner["response"] = payload
    if error is not None:
        inner["error"] = error
    if pending is not None:
        inner["pending_permission_requests"] = pending
    return ControlResponse(
        line=1,
        request_id=request_id,
        subtype=subtype,  # type: ignore[arg-type]
        response=None if payload is None else freeze(payload),
        error=error,
        pending_permission_requests=None if pending is None else freeze(pending),
        raw=freeze({"type": "control_response", "response": inner}),
    )


def accept_any(payload: FrozenDict | None) -> object:
    return payload


def require_ok(payload: FrozenDict | None) -> object:
    if payload is None or payload.get("ok") is not True:
        raise ResponseInvalid("ok must be true")
    return "validated"


def permission(tool_use_id: str) -> FrozenDict:
    return can_use_tool_request("Bash", {"command": "ls"}, tool_use_id, "Run ls")


def pending_member(request_id: str, tool_use_id: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": dict(permission(tool_use_id)),
        **extra,
    }


def settlements(effects: tuple[Effect, ...]) -> list[Resolved | Rejected]:
    return [e for e in effects if isinstance(e, Resolved | Rejected)]


# --- register (WIRE-006, WIRE-PERM-020) ----------------------------------------------


def test_register_registers_before_handing_out_the_envelope() -> None:
    core = ControlCorrelator(new_request_id=ids())
    request_id, effects = core.register({"subtype": "initialize"}, accept_any)
    assert request_id == "req_1"
    assert core.pending_ids == ("req_1",)
    assert effects == (
        Emit(
            records=(
                FrozenDict(
                    type="control_request",
                    request_id="req_1",
                    request=FrozenDict(subtype="initialize"),
                ),
            )
        ),
    )
    (emit,) = effects
    assert isinstance(emit, Emit)
    envelope = emit.records[0]
    with pytest.raises(TypeError):
        envelope["request"]["subtype"] = "other"


@pytest.mark.parametrize(
    "request_payload",
    [{}, {"subtype": ""}, {"subtype": 7}, {"subtype": "can_use_tool", "tool_use_id": 3}],
    ids=["no-subtype", "empty-subtype", "int-subtype", "int-tool-use-id"],
)
def test_register_refuses_a_malformed_request(request_payload: dict[str, Any]) -> None:
    core = ControlCorrelator(new_request_id=ids())
    with pytest.raises(ValueError, match=r"subtype|tool_use_id"):
        core.register(request_payload, accept_any)
    assert core.pending_ids == ()


@pytest.mark.parametrize("settle", ["pending", "aborted", "resolved"])
def test_register_refuses_a_repeated_request_id(settle: str) -> None:
    core = ControlCorrelator(new_request_id=lambda: "same")
    core.register(permission("toolu_1"), accept_any)
    if settle == "aborted":
        core.abort("same")
    elif settle == "resolved":
        core.on_response(response("same", payload={"behavior": "allow"}))
    with pytest.raises(ValueError, match="repeated"):
        core.register({"subtype": "initialize"}, accept_any)


# --- responses (WIRE-009, WIRE-PERM-040, WIRE-PERM-044) ------------------------------

VALID_PENDING = (pending_member("host_1", "toolu_a"), pending_member("host_2", "toolu_b"))

RESPONSE_TABLE: list[Any] = [
    ("success-valid", require_ok, response("req_1", payload={"ok": True}), Resolved, "validated"),
    (
        "success-schema-rejects",
        require_ok,
        response("req_1", payload={"ok": False}),
        RejectReason.INVALID_RESPONSE,
        "invalid initialize response",
    ),
    (
        "success-without-payload-still-validated",
        require_ok,
        response("req_1"),
        RejectReason.INVALID_RESPONSE,
        "invalid initialize response",
    ),
    ("success-null-payload", accept_any, response("req_1"), Resolved, None),
    (
        "error",
        require_ok,
        response("req_1", "error", error="host says no"),
        RejectReason.ERROR_RESPONSE,
        "host says no",
    ),
    (
        "error-empty-message",
        require_ok,
        response("req_1", "error", error=""),
        RejectReason.ERROR_RESPONSE,
        ERROR_RESPONSE_MESSAGE,
    ),
    (
        "error-with-payload",
        require_ok,
        response("req_1", "error", payload={"ok": True}, error="x"),
        RejectReason.INVALID_RESPONSE,
        "invalid error response",
    ),
    (
        "success-with-error",
        require_ok,
        response("req_1", payload={"ok": True}, error="x"),
        RejectReason.INVALID_RESPONSE,
        "invalid success response",
    ),
    (
        "success-with-pending-requests",
        require_ok,
        response("req_1", payload={"ok": True}, pending=VALID_PENDING),
        RejectReason.INVALID_RESPONSE,
        "invalid success response",
    ),
    (
        "broken-outer-union",
        require_ok,
        InvalidControlResponse(line=1, request_id="req_1", reason="bad"),
        RejectReason.INVALID_RESPONSE,
        "invalid control response",
    ),
]

BAD_PENDING: list[Any] = [
    ("duplicate-request-id", (pending_member("h", "toolu_a"), pending_member("h", "toolu_b"))),
    ("extra-envelope-member", (pending_member("h", "toolu_a", extra=1),)),
    ("wrong-type", ({**pending_member("h", "toolu_a"), "type": "control_response"},)),
    ("empty-request-id", (pending_member("", "toolu_a"),)),
    ("not-an-object", ("control_request",)),
    (
        "request-extra-member",
        (
            {
                **pending_member("h", "toolu_a"),
                "request": {**permission("toolu_a"), "extra": True},
            },
        ),
    ),
    ("not-can-use-tool", ({**pending_member("h", "t"), "request": {"subtype": "initialize"}},)),
]


@pytest.mark.parametrize(
    ("schema", "resp", "expected", "detail"),
    [row[1:] for row in RESPONSE_TABLE],
    ids=[row[0] for row in RESPONSE_TABLE],
)
def test_response_is_validated_then_removed_once(
    schema: Any, resp: Any, expected: Any, detail: Any
) -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register({"subtype": "initialize"}, schema)
    (effect,) = core.on_response(resp)
    if expected is Resolved:
        assert effect == Resolved(request_id="req_1", value=detail)
    else:
        assert effect == Rejected(request_id="req_1", reason=expected, message=detail)
    assert core.pending_ids == ()
    assert core.on_response(resp) == (Orphan(response=resp),)


def test_error_response_carries_validated_pending_permission_requests() -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register({"subtype": "initialize"}, accept_any)
    resp = response("req_1", "error", error="lost", pending=VALID_PENDING)
    assert core.on_response(resp) == (
        Rejected(
            request_id="req_1",
            reason=RejectReason.ERROR_RESPONSE,
            message="lost",
            pending_permission_requests=freeze(VALID_PENDING),
        ),
    )


@pytest.mark.parametrize(
    "pending", [row[1] for row in BAD_PENDING], ids=[row[0] for row in BAD_PENDING]
)
def test_invalid_pending_permission_requests_reject_the_response(pending: Any) -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register({"subtype": "initialize"}, accept_any)
    assert core.on_response(response("req_1", "error", error="x", pending=pending)) == (
        Rejected(
            request_id="req_1",
            reason=RejectReason.INVALID_RESPONSE,
            message="invalid pending_permission_requests",
        ),
    )
    assert core.pending_ids == ()


def test_success_payload_goes_through_the_stored_schema_exactly_once() -> None:
    seen: list[FrozenDict | None] = []

    def recording(payload: FrozenDict | None) -> object:
        seen.append(payload)
        return len(seen)

    core = ControlCorrelator(new_request_id=ids())
    core.register({"subtype": "mcp_status"}, recording)
    core.register({"subtype": "initialize"}, accept_any)
    assert core.on_response(response("req_1", payload={"a": 1})) == (
        Resolved(request_id="req_1", value=1),
    )
    assert seen == [FrozenDict(a=1)]


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"behavior": "allow", "toolUseID": "toolu_1"}, PermissionAllow()),
        ({"behavior": "ask"}, INVALID_RESPONSE_DENIAL),
        ({"behavior": "allow", "toolUseID": "toolu_2"}, INVALID_RESPONSE_DENIAL),
    ],
    ids=["allow", "unknown-behavior-denies", "mismatched-tool-use-denies"],
)
def test_permission_waiter_resolves_through_its_schema(payload: Any, expected: Any) -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register(permission("toolu_1"), PermissionResponseSchema(tool_use_id="toolu_1"))
    assert core.on_response(response("req_1", payload=payload)) == (
        Resolved(request_id="req_1", value=expected),
    )


# --- duplicates, late answers and orphans (WIRE-PERM-045) ----------------------------


def test_duplicate_late_tool_response_is_ignored() -> None:
    """Scenario 7: the same late tool response twice yields one resolution."""
    core = ControlCorrelator(new_request_id=ids())
    core.register(permission("toolu_1"), PermissionResponseSchema(tool_use_id="toolu_1"))
    resp = response("req_1", payload={"behavior": "allow"})
    assert settlements(core.on_response(resp)) == [
        Resolved(request_id="req_1", value=PermissionAllow())
    ]
    assert core.on_response(resp) == (Ignored(request_id="req_1", cause="resolved_tool_use"),)
    assert core.on_response(resp) == (Ignored(request_id="req_1", cause="resolved_tool_use"),)


def test_unknown_request_id_naming_a_resolved_tool_use_is_ignored() -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register(permission("toolu_1"), PermissionResponseSchema(tool_use_id="toolu_1"))
    core.on_response(response("req_1", payload={"behavior": "deny"}))
    stray = response("other", payload={"behavior": "allow", "toolUseID": "toolu_1"})
    assert core.on_response(stray) == (Ignored(request_id="other", cause="resolved_tool_use"),)
    unknown = response("other", payload={"behavior": "allow", "toolUseID": "toolu_9"})
    assert core.on_response(unknown) == (Orphan(response=unknown),)


@pytest.mark.parametrize(
    ("extra", "first_kept"),
    [(0, True), (1, False)],
    ids=["at-capacity", "one-past-capacity"],
)
def test_resolved_tool_use_set_evicts_the_oldest(extra: int, first_kept: bool) -> None:
    core = ControlCorrelator(new_request_id=ids())
    for n in range(RESOLVED_CAPACITY + extra):
        request_id, _ = core.register(permission(f"toolu_{n}"), accept_any)
        core.on_response(response(request_id, payload={"behavior": "allow"}))
    assert core.is_resolved_tool_use("toolu_0") is first_kept
    assert core.is_resolved_tool_use("toolu_1")
    late = response("req_1", payload={"behavior": "allow"})
    assert isinstance(core.on_response(late)[0], Ignored if first_kept else Orphan)


@pytest.mark.parametrize(
    ("extra", "first_kept"),
    [(0, True), (1, False)],
    ids=["at-capacity", "one-past-capacity"],
)
def test_known_late_ids_are_bounded(extra: int, first_kept: bool) -> None:
    core = ControlCorrelator(new_request_id=ids())
    for _ in range(RESOLVED_CAPACITY + extra):
        request_id, _ = core.register({"subtype": "mcp_status"}, accept_any)
        core.abort(request_id)
    late = response("req_1")
    expected = (
        Ignored(request_id="req_1", cause="known_late") if first_kept else Orphan(response=late)
    )
    assert core.on_response(late) == (expected,)
    assert core.on_response(response("req_2")) == (Ignored(request_id="req_2", cause="known_late"),)


def test_bounded_id_set_needs_a_positive_capacity() -> None:
    with pytest.raises(ValueError, match="positive"):
        BoundedIdSet(0)


# --- abort (WIRE-007, scenario 4) and interrupt (WIRE-011) ------------------------------


def test_abort_emits_one_cancel_rejects_at_once_and_ignores_the_late_response() -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register({"subtype": "mcp_status"}, accept_any)
    assert core.abort("req_1") == (
        Emit(records=(FrozenDict(type="control_cancel_request", request_id="req_1"),)),
        Rejected(request_id="req_1", reason=RejectReason.ABORTED, message=ABORTED_MESSAGE),
    )
    assert core.pending_ids == ()
    assert core.abort("req_1") == ()
    assert core.on_response(response("req_1")) == (Ignored(request_id="req_1", cause="known_late"),)


def test_abort_of_an_unknown_id_does_nothing() -> None:
    core = ControlCorrelator(new_request_id=ids())
    assert core.abort("nope") == ()


def test_abort_permissions_cancels_every_permission_before_rejecting() -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register(permission("toolu_a"), accept_any)
    core.register({"subtype": "mcp_status"}, accept_any)
    core.register(permission("toolu_b"), accept_any)
    assert core.abort_permissions() == (
        Emit(
            records=(
                FrozenDict(type="control_cancel_request", request_id="req_1"),
                FrozenDict(type="control_cancel_request", request_id="req_3"),
            )
        ),
        Rejected(request_id="req_1", reason=RejectReason.ABORTED, message=ABORTED_MESSAGE),
        Rejected(request_id="req_3", reason=RejectReason.ABORTED, message=ABORTED_MESSAGE),
    )
    assert core.pending_ids == ("req_2",)
    assert core.abort_permissions() == ()


# --- EOF (WIRE-008, WIRE-EOF-001, DEC-EOF-1, scenarios 5 and 13) --------------------------


def test_eof_after_tail_resolution_rejects_only_the_other_request() -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register(permission("toolu_a"), PermissionResponseSchema(tool_use_id="toolu_a"))
    core.register(permission("toolu_b"), PermissionResponseSchema(tool_use_id="toolu_b"))
    tail = core.on_response(response("req_1", payload={"behavior": "allow"}))
    assert tail == (Resolved(request_id="req_1", value=PermissionAllow()),)
    assert core.on_eof() == (
        Rejected(
            request_id="req_2", reason=RejectReason.STREAM_CLOSED, message=STREAM_CLOSED_MESSAGE
        ),
    )
    assert core.closed
    assert core.on_eof() == ()


@pytest.mark.parametrize(
    ("close", "reason"),
    [("on_eof", RejectReason.STREAM_CLOSED), ("shutdown", RejectReason.SHUTDOWN)],
    ids=["eof", "shutdown"],
)
def test_register_after_close_is_refused_without_a_request(
    close: str, reason: RejectReason
) -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register(permission("toolu_a"), accept_any)
    core.register(permission("toolu_b"), accept_any)
    closing = getattr(core, close)()
    assert [(e.request_id, e.reason) for e in closing] == [
        ("req_1", reason),
        ("req_2", reason),
    ]
    request_id, effects = core.register(permission("toolu_c"), accept_any)
    message = STREAM_CLOSED_MESSAGE if reason is RejectReason.STREAM_CLOSED else SHUTDOWN_MESSAGE
    assert effects == (Rejected(request_id=request_id, reason=reason, message=message),)
    assert core.pending_ids == ()


# --- rollback (WIRE-015) -----------------------------------------------------------------


def test_rollback_rejects_an_unresolved_waiter_once() -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register({"subtype": "mcp_status"}, accept_any)
    assert core.rollback("req_1") == (
        Rejected(request_id="req_1", reason=RejectReason.ABORTED, message=EMISSION_FAILED_MESSAGE),
    )
    assert core.rollback("req_1") == ()
    assert core.on_response(response("req_1")) == (Ignored(request_id="req_1", cause="known_late"),)


def test_rollback_preserves_a_synchronously_selected_result() -> None:
    core = ControlCorrelator(new_request_id=ids())
    core.register({"subtype": "mcp_status"}, accept_any)
    assert core.on_response(response("req_1", payload={"x": 1})) == (
        Resolved(request_id="req_1", value=FrozenDict(x=1)),
    )
    assert core.rollback("req_1") == ()


# --- property: every registered id settles exactly once --------------------------------

OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["register", "permission", "respond", "error", "abort", "interrupt", "rollback", "eof"]
        ),
        st.integers(min_value=1, max_value=8),
    ),
    max_size=40,
)


def _run(core: ControlCorrelator, op: str, n: int) -> Iterator[Effect]:
    rid = f"req_{n}"
    if op == "register":
        yield from core.register({"subtype": "mcp_status"}, accept_any)[1]
    elif op == "permission":
        yield from core.register(permission(f"toolu_{n}"), accept_any)[1]
    elif op == "respond":
        yield from core.on_response(response(rid, payload={"behavior": "allow"}))
    elif op == "error":
        yield from core.on_response(response(rid, "error", error="no"))
    elif op == "abort":
        yield from core.abort(rid)
    elif op == "interrupt":
        yield from core.abort_permissions()
    elif op == "rollback":
        yield from core.rollback(rid)
    else:
        yield from core.on_eof()


@given(OPS)
def test_every_registered_request_settles_exactly_once(ops: list[tuple[str, int]]) -> None:
    core = ControlCorrelator(new_request_id=ids())
    registered: list[str] = []
    settled: list[str] = []
    for op, n in ops:
        before = set(core.pending_ids)
        for effect in _run(core, op, n):
            if isinstance(effect, Resolved | Rejected):
                settled.append(effect.request_id)
        registered.extend(sorted(set(core.pending_ids) - before))
    settled.extend(e.request_id for e in settlements(core.on_eof()))
    assert core.pending_ids == ()
    assert sorted(set(registered)) == sorted(set(registered) & set(settled))
    assert len(settled) == len(set(settled))
