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
    STREAM_CLOSED_MESSAGE,
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


def started(*, with_hook: bool = True) -> PermissionRace:
    race = PermissionRace(tool_use_id=TID, with_hook=with_hook)
    race.start()
    return race


def settles(effects: tuple[RaceEffect, ...]) -> list[Settle]:
    return [e for e in effects if isinstance(e, Settle)]


def test_start_publishes_then_starts_host_and_hook() -> None:
    race = PermissionRace(tool_use_id=TID, with_hook=True)
    assert race.start() == (
        PublishRequiresAction(tool_use_id=TID),
        StartHostRequest(tool_use_id=TID),
        StartHook(tool_use_id=TID),
    )
    assert race.start() == ()


def test_without_a_hook_the_host_alone_decides() -> None:
    race = PermissionRace(tool_use_id=TID, with_hook=False)
    assert race.start() == (
        PublishRequiresAction(tool_use_id=TID),
        StartHostRequest(tool_use_id=TID),
    )
    assert race.host_answer(PermissionAllow()) == (
        Settle(tool_use_id=TID, result=PermissionAllow(), decided_by="host"),
    )


@pytest.mark.parametrize(
    ("hook", "host", "order"), PAIRS, ids=[f"hook-{a}-host-{b}-{o}" for a, b, o in PAIRS]
)
def test_first_decisive_result_wins_exactly_once(hook: str, host: str, order: str) -> None:
    """WIRE-PERM-001/002 and steps 3-6 for every pair of completion orders."""
    race = started()
    answer_host, host_result = HOSTS[host]
    if order == "host-first":
        first = answer_host(race)
        assert first == (
            CancelHook(tool_use_id=TID),
            Settle(tool_use_id=TID, result=host_result, decided_by="host"),
        )
        assert race.hook_result(HOOKS[hook]) == ()
        expected = Settle(tool_use_id=TID, result=host_result, decided_by="host")
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
    assert race.eof() == ()


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


@pytest.mark.parametrize(
    ("stop", "expected"),
    [
        (
            "abort",
            Settle(
                tool_use_id=TID,
                result=PermissionDeny(message=INTERRUPTED_MESSAGE),
                decided_by="interrupt",
            ),
        ),
        (
            "eof",
            Settle(
                tool_use_id=TID,
                result=PermissionDeny(message=STREAM_CLOSED_MESSAGE),
                decided_by="eof",
            ),
        ),
    ],
    ids=["interrupt", "eof"],
)
def test_interrupt_and_eof_deny_and_stop_the_hook(stop: str, expected: Settle) -> None:
    race = started()
    effects = getattr(race, stop)()
    cancel_host = (CancelHostRequest(tool_use_id=TID),) if stop == "abort" else ()
    assert effects == (*cancel_host, CancelHook(tool_use_id=TID), expected)
    assert race.hook_result(PermissionAllow()) == ()
    assert race.host_answer(PermissionAllow()) == ()


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
    race = started(with_hook=False)
    (settle,) = race.host_error()
    assert settle == Settle(
        tool_use_id=TID,
        result=PermissionDeny(message="invalid permission response"),
        decided_by="host",
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.host_answer(PermissionAllow()),
        lambda r: r.host_error(),
        lambda r: r.hook_result(HookPassThrough()),
        lambda r: r.abort(),
        lambda r: r.eof(),
    ],
    ids=["host-answer", "host-error", "hook-result", "abort", "eof"],
)
def test_inputs_before_start_are_refused(call: Callable[[PermissionRace], Any]) -> None:
    with pytest.raises(RaceStateError):
        call(PermissionRace(tool_use_id=TID, with_hook=True))


INPUTS = st.lists(
    st.sampled_from(
        [("hook", name) for name in HOOKS]
        + [("host", name) for name in HOSTS]
        + [("abort", ""), ("eof", "")]
    ),
    max_size=8,
)


@given(INPUTS)
def test_settles_once_and_never_allows_on_error(inputs: list[tuple[str, str]]) -> None:
    race = started()
    outcomes: list[Settle] = []
    for kind, name in inputs:
        if kind == "hook":
            effects = race.hook_result(HOOKS[name])
        elif kind == "host":
            effects = HOSTS[name][0](race)
        else:
            effects = race.abort() if kind == "abort" else race.eof()
        outcomes.extend(settles(effects))
    assert len(outcomes) <= 1
    if outcomes and isinstance(outcomes[0].result, PermissionAllow):
        decisive = [(k, n) for k, n in inputs if not (k == "hook" and n == "passthrough")]
        assert decisive[0] in {("hook", "allow"), ("hook", "update"), ("host", "allow")}


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
    races = [PermissionRace(tool_use_id=f"toolu_{n}", with_hook=False) for n in (1, 2)]
    for race in races:
        _drive(session, race.start(), log)
    assert log == ["requires_action"]
    _drive(session, races[0].eof(), log)
    assert log == ["requires_action"]
    _drive(session, races[1].eof(), log)
    _drive(session, races[1].eof(), log)
    assert log == ["requires_action", "running"]
    assert session.state == "running"
