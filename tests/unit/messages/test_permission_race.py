"""The permission race core (spec "Permission race", WIRE-PERM-001..002, scenarios 5 and 6)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.frozen import FrozenDict
from agentx.messages.permission_race import (
    HOOK_ERROR_MESSAGE,
    HOOK_TIMEOUT_MESSAGE,
    INTERRUPTED_MESSAGE,
    NO_CHANNEL_MESSAGE,
    CancelHook,
    CancelHostRequest,
    HookFailed,
    HookPassThrough,
    HookResult,
    PermissionRace,
    PublishRequiresAction,
    RaceEffect,
    RaceStateError,
    Settle,
    StartHook,
    StartHostRequest,
)
from agentx.messages.permission_wire import (
    INVALID_RESPONSE_DENIAL,
    PermissionAllow,
    PermissionDeny,
    PermissionResult,
)
from agentx.messages.session_state import SessionStateCore

TID = "toolu_1"

HOOKS: dict[str, HookResult] = {
    "allow": PermissionAllow(),
    "deny": PermissionDeny(message="hook says no"),
    "update": PermissionAllow(updated_input=FrozenDict(command="ls -a")),
    "passthrough": HookPassThrough(),
    "error": HookFailed(reason="error"),
    "timeout": HookFailed(reason="timeout"),
}
# What each hook result settles as when it wins (pass-through never wins).
HOOK_OUTCOME: dict[str, PermissionResult | None] = {
    "allow": PermissionAllow(),
    "deny": PermissionDeny(message="hook says no"),
    "update": PermissionAllow(updated_input=FrozenDict(command="ls -a")),
    "passthrough": None,
    "error": PermissionDeny(message=HOOK_ERROR_MESSAGE),
    "timeout": PermissionDeny(message=HOOK_TIMEOUT_MESSAGE),
}
HostAnswer = Callable[[PermissionRace], tuple[RaceEffect, ...]]
HOSTS: dict[str, tuple[HostAnswer, PermissionResult]] = {
    "allow": (lambda r: r.host_answer(PermissionAllow()), PermissionAllow()),
    "deny": (
        lambda r: r.host_answer(PermissionDeny(message="host says no")),
        PermissionDeny(message="host says no"),
    ),
    "error": (lambda r: r.host_error(), INVALID_RESPONSE_DENIAL),
    "invalid": (lambda r: r.host_answer(INVALID_RESPONSE_DENIAL), INVALID_RESPONSE_DENIAL),
}
PAIRS = list(itertools.product(HOOKS, HOSTS, ["hook-first", "host-first"]))


def started(*, hooks: int = 1, host_open: bool = True) -> PermissionRace:
    race = PermissionRace(tool_use_id=TID, hooks=hooks, host_open=host_open)
    race.start()
    return race


def settles(effects: tuple[RaceEffect, ...]) -> list[Settle]:
    return [e for e in effects if isinstance(e, Settle)]


def test_start_publishes_then_starts_host_and_hook() -> None:
    race = PermissionRace(tool_use_id=TID, hooks=1)
    assert race.start() == (
        PublishRequiresAction(tool_use_id=TID),
        StartHostRequest(tool_use_id=TID),
        StartHook(tool_use_id=TID),
    )
    assert race.start() == ()


def test_without_a_hook_the_host_alone_decides() -> None:
    race = PermissionRace(tool_use_id=TID)
    assert race.start() == (
        PublishRequiresAction(tool_use_id=TID),
        StartHostRequest(tool_use_id=TID),
    )
    assert race.host_answer(PermissionAllow()) == (
        Settle(tool_use_id=TID, result=PermissionAllow(), decided_by="host"),
    )


def test_a_negative_hook_count_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        PermissionRace(tool_use_id=TID, hooks=-1)


@pytest.mark.parametrize(
    ("hook", "host", "order"), PAIRS, ids=[f"hook-{a}-host-{b}-{o}" for a, b, o in PAIRS]
)
def test_first_decisive_result_wins_exactly_once(hook: str, host: str, order: str) -> None:
    """WIRE-PERM-001/002 and steps 3-6 for every pair of completion orders;
    a host win waits for the cancelled hook's report (Rule 3)."""
    race = started()
    answer_host, host_result = HOSTS[host]
    if order == "host-first":
        expected = Settle(tool_use_id=TID, result=host_result, decided_by="host")
        assert answer_host(race) == (CancelHook(tool_use_id=TID),)
        assert race.hook_result(HOOKS[hook]) == (expected,)
    elif (hook_outcome := HOOK_OUTCOME[hook]) is None:
        assert race.hook_result(HOOKS[hook]) == ()
        assert race.outcome is None
        assert answer_host(race) == (
            Settle(tool_use_id=TID, result=host_result, decided_by="host"),
        )
        expected = Settle(tool_use_id=TID, result=host_result, decided_by="host")
    else:
        expected = Settle(tool_use_id=TID, result=hook_outcome, decided_by="hook")
        assert race.hook_result(HOOKS[hook]) == (CancelHostRequest(tool_use_id=TID), expected)
        assert answer_host(race) == ()
    assert race.outcome == expected
    assert race.abort() == ()
    assert race.host_closed() == ()
    assert race.shutdown() == ()


@pytest.mark.parametrize("hook_first", [False, True], ids=["host-deny-first", "hook-allow-first"])
def test_scenario_6_hook_allow_against_host_deny(hook_first: bool) -> None:
    race = started()
    events: list[tuple[RaceEffect, ...]] = []
    steps: list[Callable[[], tuple[RaceEffect, ...]]] = [
        lambda: race.hook_result(PermissionAllow()),
        lambda: race.host_answer(PermissionDeny()),
    ]
    for step in steps if hook_first else reversed(steps):
        events.append(step())
    outcomes = [s for effects in events for s in settles(effects)]
    assert len(outcomes) == 1
    assert outcomes[0].result == (PermissionAllow() if hook_first else PermissionDeny())


def test_an_interrupt_cancels_both_legs_and_waits_for_the_hook_report() -> None:
    race = started()
    assert race.abort() == (CancelHostRequest(tool_use_id=TID), CancelHook(tool_use_id=TID))
    assert race.host_answer(PermissionAllow()) == ()
    denied = PermissionDeny(message=INTERRUPTED_MESSAGE)
    # the killed hook reports (cancelled is a failure); only then the settlement
    assert race.hook_result(HookFailed(reason="error")) == (
        Settle(tool_use_id=TID, result=denied, decided_by="interrupt"),
    )
    assert race.hook_result(PermissionAllow()) == ()


def test_interrupt_after_pass_through_does_not_cancel_a_finished_hook() -> None:
    race = started()
    race.hook_result(HookPassThrough())
    assert race.abort() == (
        CancelHostRequest(tool_use_id=TID),
        Settle(
            tool_use_id=TID,
            result=PermissionDeny(message=INTERRUPTED_MESSAGE),
            decided_by="interrupt",
        ),
    )


def test_a_host_error_denies_as_an_invalid_permission_response() -> None:
    """WIRE-PERM-044: an error response or a broken response union denies
    with the one fixed message, whatever the host's error text said."""
    race = started(hooks=0)
    (settle,) = race.host_error()
    assert settle == Settle(
        tool_use_id=TID,
        result=PermissionDeny(message="invalid permission response"),
        decided_by="host",
    )


# --- Rule 1: no host to answer (DEC-EOF-2) -------------------------------------------

NO_CHANNEL = PermissionDeny(message=NO_CHANNEL_MESSAGE)
#: What each single hook result settles as when no host can answer.
NO_HOST_OUTCOME: dict[str, tuple[PermissionResult, str]] = {
    "allow": (PermissionAllow(), "hook"),
    "deny": (PermissionDeny(message="hook says no"), "hook"),
    "update": (PermissionAllow(updated_input=FrozenDict(command="ls -a")), "hook"),
    "passthrough": (NO_CHANNEL, "no_channel"),
    "error": (PermissionDeny(message=f"{HOOK_ERROR_MESSAGE}; {NO_CHANNEL_MESSAGE}"), "hook"),
    "timeout": (PermissionDeny(message=f"{HOOK_TIMEOUT_MESSAGE}; {NO_CHANNEL_MESSAGE}"), "hook"),
}


def test_no_channel_and_no_hook_denies_at_once_without_a_request() -> None:
    race = PermissionRace(tool_use_id=TID, host_open=False)
    assert race.start() == (
        PublishRequiresAction(tool_use_id=TID),
        Settle(tool_use_id=TID, result=NO_CHANNEL, decided_by="no_channel"),
    )


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_no_channel_the_hook_alone_decides(hook: str) -> None:
    """Text-mode ``-p``: no request is sent; the hook's result applies and
    everything else denies with the no-channel message."""
    race = PermissionRace(tool_use_id=TID, hooks=1, host_open=False)
    assert race.start() == (PublishRequiresAction(tool_use_id=TID), StartHook(tool_use_id=TID))
    result, decided_by = NO_HOST_OUTCOME[hook]
    assert race.hook_result(HOOKS[hook]) == (
        Settle(tool_use_id=TID, result=result, decided_by=decided_by),  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_after_input_eof_a_running_hook_still_decides(hook: str) -> None:
    """Duplex input closed while the hook runs: the host's leg closes, the
    hook is not cancelled, and its result decides as with no channel."""
    race = started()
    assert race.host_closed() == ()
    assert race.outcome is None
    result, decided_by = NO_HOST_OUTCOME[hook]
    assert race.hook_result(HOOKS[hook]) == (
        Settle(tool_use_id=TID, result=result, decided_by=decided_by),  # type: ignore[arg-type]
    )
    assert race.host_answer(PermissionAllow()) == ()


def test_a_host_leg_closing_after_every_hook_passed_denies() -> None:
    race = started(hooks=2)
    assert race.hook_result(HookPassThrough()) == ()
    assert race.hook_result(HookPassThrough()) == ()
    assert race.host_closed() == (
        Settle(tool_use_id=TID, result=NO_CHANNEL, decided_by="no_channel"),
    )
    assert race.host_closed() == ()


def test_a_host_leg_closing_with_no_hook_denies() -> None:
    race = started(hooks=0)
    assert race.host_closed() == (
        Settle(tool_use_id=TID, result=NO_CHANNEL, decided_by="no_channel"),
    )


def test_no_channel_one_pass_through_leaves_the_other_hook_to_decide() -> None:
    race = started(hooks=2, host_open=False)
    assert race.hook_result(HookPassThrough()) == ()
    assert race.hook_result(PermissionAllow()) == (
        Settle(tool_use_id=TID, result=PermissionAllow(), decided_by="hook"),
    )


# --- Rule 3: the settlement waits for every cancelled hook ---------------------------


def test_a_decision_waits_for_each_cancelled_hook() -> None:
    race = started(hooks=2)
    assert race.hook_result(PermissionDeny(message="first")) == (
        CancelHostRequest(tool_use_id=TID),
        CancelHook(tool_use_id=TID),
    )
    assert race.outcome == Settle(
        tool_use_id=TID, result=PermissionDeny(message="first"), decided_by="hook"
    )
    assert race.hook_result(HookFailed(reason="error")) == (race.outcome,)
    assert race.hook_result(PermissionAllow()) == ()


def test_shutdown_settles_at_once_even_with_hooks_running() -> None:
    race = started(hooks=2)
    assert race.shutdown() == (
        CancelHook(tool_use_id=TID),
        Settle(tool_use_id=TID, result=NO_CHANNEL, decided_by="no_channel"),
    )
    assert race.hook_result(PermissionAllow()) == ()


def test_shutdown_releases_a_decision_still_waiting_for_a_hook() -> None:
    race = started()
    assert race.host_answer(PermissionAllow()) == (CancelHook(tool_use_id=TID),)
    assert race.shutdown() == (
        Settle(tool_use_id=TID, result=PermissionAllow(), decided_by="host"),
    )
    assert race.shutdown() == ()


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.host_answer(PermissionAllow()),
        lambda r: r.host_error(),
        lambda r: r.hook_result(HookPassThrough()),
        lambda r: r.abort(),
        lambda r: r.host_closed(),
        lambda r: r.shutdown(),
    ],
    ids=["host-answer", "host-error", "hook-result", "abort", "host-closed", "shutdown"],
)
def test_inputs_before_start_are_refused(call: Callable[[PermissionRace], Any]) -> None:
    with pytest.raises(RaceStateError):
        call(PermissionRace(tool_use_id=TID, hooks=1))


INPUTS = st.lists(
    st.sampled_from(
        [("hook", name) for name in HOOKS]
        + [("host", name) for name in HOSTS]
        + [("abort", ""), ("closed", "")]
    ),
    max_size=8,
)


@given(INPUTS, st.integers(min_value=0, max_value=2), st.booleans())
def test_settles_once_never_allows_on_error_and_always_ends(
    inputs: list[tuple[str, str]], hooks: int, host_open: bool
) -> None:
    """At most one settlement; an allow only from a party that could answer
    when it did (Rules 1-2); a shutdown after anything settles it."""
    race = PermissionRace(tool_use_id=TID, hooks=hooks, host_open=host_open)
    outcomes = settles(race.start())
    allowed_by: list[tuple[str, str]] = []
    open_, reported = host_open, 0
    for kind, name in inputs:
        if kind == "hook":
            effects = race.hook_result(HOOKS[name])
            reported += 1
            if reported <= hooks and name != "passthrough":
                allowed_by.append((kind, name))
        elif kind == "host":
            effects = HOSTS[name][0](race)
            if open_:
                allowed_by.append((kind, name))
        elif kind == "abort":
            effects = race.abort()
            allowed_by.append((kind, name))
        else:
            effects = race.host_closed()
            open_ = False
        outcomes.extend(settles(effects))
    outcomes.extend(settles(race.shutdown()))
    assert len(outcomes) == 1
    if isinstance(outcomes[0].result, PermissionAllow):
        assert allowed_by[0] in {("hook", "allow"), ("hook", "update"), ("host", "allow")}


# --- step 7 with the session's state core (DEC-TURN-2) ------------------------------------


def _drive(session: SessionStateCore, effects: tuple[RaceEffect, ...], log: list[str]) -> None:
    for effect in effects:
        if isinstance(effect, PublishRequiresAction):
            state = session.permission_opened()
        elif isinstance(effect, Settle):
            state = session.permission_closed()
        else:
            continue
        if state is not None:
            log.append(state)


def test_scenario_5_eof_with_two_pending_permissions_returns_to_running() -> None:
    session = SessionStateCore()
    log: list[str] = []
    assert session.turn_started() == "running"
    races = [PermissionRace(tool_use_id=f"toolu_{n}") for n in (1, 2)]
    for race in races:
        _drive(session, race.start(), log)
    assert log == ["requires_action"]
    _drive(session, races[0].host_closed(), log)
    assert log == ["requires_action"]
    _drive(session, races[1].host_closed(), log)
    _drive(session, races[1].host_closed(), log)
    assert log == ["requires_action", "running"]
    assert session.state == "running"
