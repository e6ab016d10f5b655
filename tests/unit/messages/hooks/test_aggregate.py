"""The verdicts of one event combined (DEC-HOOK-3): deny wins, a failure
never approves, the order of answers does not matter."""

from __future__ import annotations

import itertools

import pytest

from agentx.messages.frozen import freeze
from agentx.messages.hooks.aggregate import NOTHING, TEXT_LIMIT, EventOutcome, combine, on_failure
from agentx.messages.hooks.verdicts import Verdict
from agentx.messages.permission_wire import PermissionAllow, PermissionDeny

ALLOW = Verdict(decision="allow", reason="a", updated_input=freeze({"x": 1}))
ALLOW2 = Verdict(decision="allow", updated_input=freeze({"x": 2}))
ASK = Verdict(decision="ask", reason="q")
BLOCK = Verdict(decision="block", reason="b")
FAIL = Verdict(failure="hook exited with status 1")
TIMEOUT = Verdict(failure="hook timed out after 1 s", timed_out=True)
NONE = Verdict()
CTX = Verdict(context="c1", system_message="s1")

CASES = [
    pytest.param((), NOTHING, id="no-hooks"),
    pytest.param((NONE, NONE), EventOutcome(), id="no-opinions"),
    pytest.param(
        (ALLOW,),
        EventOutcome(decision="allow", reasons=("a",), updated_input=freeze({"x": 1})),
        id="allow",
    ),
    pytest.param(
        (ALLOW, BLOCK), EventOutcome(decision="block", reasons=("b",)), id="deny-wins-over-allow"
    ),
    pytest.param(
        (ASK, ALLOW), EventOutcome(decision="ask", reasons=("q",)), id="ask-wins-over-allow"
    ),
    pytest.param(
        (ASK, BLOCK, ALLOW), EventOutcome(decision="block", reasons=("b",)), id="deny-wins-over-all"
    ),
    pytest.param(
        (FAIL,), EventOutcome(failures=("hook exited with status 1",)), id="failure-decides-nothing"
    ),
    pytest.param(
        (FAIL, TIMEOUT),
        EventOutcome(failures=("hook exited with status 1", "hook timed out after 1 s")),
        id="failures-never-approve",
    ),
    pytest.param(
        (ALLOW, ALLOW2),
        EventOutcome(decision="allow", reasons=("a",), updated_input=freeze({"x": 1})),
        id="first-updated-input-in-definition-order",
    ),
    pytest.param(
        (CTX, Verdict(context="c2", stop=True, stop_reason="halt")),
        EventOutcome(contexts=("c1", "c2"), system_messages=("s1",), stop=True, stop_reason="halt"),
        id="contexts-and-stop",
    ),
    pytest.param(
        (
            Verdict(decision="allow", request=PermissionAllow()),
            Verdict(decision="block", request=PermissionDeny(message="n")),
        ),
        EventOutcome(decision="block", request=PermissionDeny(message="n")),
        id="permission-request-deny-wins",
    ),
]


@pytest.mark.parametrize(("verdicts", "expected"), CASES)
def test_combine(verdicts: tuple[Verdict, ...], expected: EventOutcome) -> None:
    assert combine(verdicts) == expected


@pytest.mark.parametrize(
    "verdicts",
    [(ALLOW, BLOCK, FAIL, ASK, NONE), (ALLOW, FAIL, TIMEOUT), (ASK, ALLOW, NONE)],
    ids=["block", "allow", "ask"],
)
def test_the_decision_does_not_depend_on_the_order(verdicts: tuple[Verdict, ...]) -> None:
    decisions = {combine(order).decision for order in itertools.permutations(verdicts)}
    assert len(decisions) == 1


def test_on_failure_block_blocks_only_failures() -> None:
    blocked = on_failure(FAIL, "block")
    assert blocked.decision == "block"
    assert blocked.reason == "hook failed: hook exited with status 1"
    assert blocked.request == PermissionDeny(message="hook failed: hook exited with status 1")
    assert combine((ALLOW, blocked)).decision == "block"
    assert on_failure(FAIL, "continue") is FAIL
    assert on_failure(ALLOW, "block") is ALLOW
    cancelled = Verdict(cancelled=True)
    assert on_failure(cancelled, "block") is cancelled


@pytest.mark.parametrize("size", [TEXT_LIMIT, TEXT_LIMIT + 1], ids=["at-limit", "one-past"])
def test_texts_are_bounded(size: int) -> None:
    text = "x" * size
    outcome = combine((Verdict(decision="block", reason=text, context=text),))
    (reason,), (context,) = outcome.reasons, outcome.contexts
    assert reason == context
    if size == TEXT_LIMIT:
        assert context == text
    else:
        assert (
            context == "x" * TEXT_LIMIT + f"\n[hook output truncated: {size} characters in total]"
        )


def test_the_first_replaced_output_in_definition_order_wins() -> None:
    """Rule 6: a PostToolUse replaced output from the first hook that gave one."""
    outcome = combine(
        (
            Verdict(),
            Verdict(updated_mcp_output="m1"),
            Verdict(updated_output="o1"),
            Verdict(updated_output="o2", updated_mcp_output="m2"),
        )
    )
    assert (outcome.updated_output, outcome.updated_mcp_output) == ("o1", "m1")
