"""``--await-initialize``'s hold (DEC-PROFILE-2, DECISIONS section 8): a table
of events against the sans-IO core, the deadline at the limit and one past."""

from __future__ import annotations

import pytest

from agentx.messages.initialize_hold import AWAIT_SECONDS, AWAIT_STATUS, InitializeHold


def test_prompts_before_initialize_are_held_in_order_and_released_once() -> None:
    hold: InitializeHold[str] = InitializeHold(armed=True, started=0.0)
    assert hold.hold("a") and hold.hold("b")
    assert hold.release() == ("a", "b")
    assert not hold.waiting and not hold.hold("c")
    assert hold.release() == ()


def test_unarmed_holds_nothing() -> None:
    hold: InitializeHold[str] = InitializeHold(armed=False, started=0.0)
    assert not hold.waiting and not hold.hold("a") and hold.release() == ()
    assert hold.end("eof") is None and hold.end("deadline") is None


@pytest.mark.parametrize(
    ("now", "expired"),
    [
        (AWAIT_SECONDS - 0.001, False),
        (AWAIT_SECONDS, True),
        (AWAIT_SECONDS + 0.001, True),
    ],
    ids=["before", "at-the-limit", "past"],
)
def test_the_deadline(now: float, expired: bool) -> None:
    hold: InitializeHold[str] = InitializeHold(armed=True, started=0.0)
    assert hold.expired(now) is expired


def test_no_deadline_once_initialize_came() -> None:
    hold: InitializeHold[str] = InitializeHold(armed=True, started=0.0)
    hold.release()
    assert not hold.expired(AWAIT_SECONDS * 10) and hold.end("deadline") is None


@pytest.mark.parametrize(
    ("held", "why", "line"),
    [
        (0, "eof", None),
        (
            1,
            "eof",
            "--await-initialize: the input ended before an initialize request "
            f"(1 held prompt not run); the session ends (status {AWAIT_STATUS})",
        ),
        (
            2,
            "deadline",
            f"--await-initialize: no initialize request within {AWAIT_SECONDS:g} s "
            f"(2 held prompts not run); the session ends (status {AWAIT_STATUS})",
        ),
        (
            0,
            "deadline",
            f"--await-initialize: no initialize request within {AWAIT_SECONDS:g} s "
            f"(0 held prompts not run); the session ends (status {AWAIT_STATUS})",
        ),
    ],
    ids=["eof-nothing-held", "eof-held", "deadline-held", "deadline-nothing-held"],
)
def test_endings(held: int, why: str, line: str | None) -> None:
    hold: InitializeHold[int] = InitializeHold(armed=True, started=0.0)
    for n in range(held):
        hold.hold(n)
    assert hold.end(why) == line  # type: ignore[arg-type]
    if line is not None:
        # Ended: the held prompts are gone and a late initialize releases nothing.
        assert not hold.waiting and hold.release() == () and not hold.hold(9)


def test_the_status_is_a_usage_error() -> None:
    assert AWAIT_STATUS == 2
