"""The background task core (DEC-TURN-3, WIRE-004, DEC-TURN-5): which
``system/task_*`` records are due, and how long the result must still wait."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.tasks import (
    LOCAL_BASH,
    MAX_SUMMARY_CHARS,
    RESULT_HOLD_GRACE_SECONDS,
    NotRunning,
    Stopping,
    TaskBoard,
    UnknownTask,
)

SESSION = "sess-1"
INTERVAL = 1.0
#: The Bash tool's default timeout, in seconds.
TIMEOUT = 120.0


def board() -> TaskBoard:
    ids = (f"uuid-{n}" for n in itertools.count())
    return TaskBoard(
        session_id=lambda: SESSION, new_uuid=lambda: next(ids), progress_interval=INTERVAL
    )


def started(
    b: TaskBoard,
    task_id: str = "t1",
    now: float = 0.0,
    tool_use_id: str | None = "tu1",
    timeout: float = TIMEOUT,
) -> Any:
    (record,) = b.start(
        task_id=task_id,
        description="build it",
        tool_use_id=tool_use_id,
        output_file=f"/out/{task_id}.output",
        now=now,
        timeout=timeout,
    )
    return record


def test_task_started_record() -> None:
    assert started(board()) == {
        "type": "system",
        "subtype": "task_started",
        "task_id": "t1",
        "description": "build it",
        "task_type": LOCAL_BASH,
        "tool_use_id": "tu1",
        "uuid": "uuid-0",
        "session_id": SESSION,
    }


def test_tool_use_id_is_omitted_when_unknown() -> None:
    assert "tool_use_id" not in started(board(), tool_use_id=None)


def test_a_task_id_is_registered_once() -> None:
    b = board()
    started(b)
    with pytest.raises(ValueError, match="already in use"):
        started(b)


@pytest.mark.parametrize(
    ("now", "due"),
    [
        pytest.param(INTERVAL - 0.001, 0, id="just-before-the-interval"),
        pytest.param(INTERVAL, 1, id="at-the-interval"),
        pytest.param(INTERVAL + 0.5, 1, id="past-the-interval"),
    ],
)
def test_progress_is_due_once_per_interval(now: float, due: int) -> None:
    b = board()
    started(b)
    assert len(b.progress(now)) == due
    assert b.progress(now) == ()  # reported: not due again at the same instant


def test_progress_record_carries_usage_and_the_last_line() -> None:
    b = board()
    started(b)
    b.output("t1", "compiling\nlinking\n")
    (record,) = b.progress(2.5)
    assert record["subtype"] == "task_progress"
    assert record["usage"] == {"total_tokens": 0, "tool_uses": 0, "duration_ms": 2500}
    assert record["summary"] == "linking"
    assert (record["task_id"], record["description"], record["tool_use_id"]) == (
        "t1",
        "build it",
        "tu1",
    )


@pytest.mark.parametrize(
    ("chunks", "summary"),
    [
        pytest.param(["a\nb\n"], "b", id="last-complete-line"),
        pytest.param(["a\n", "\n  \n"], "a", id="blank-lines-skipped"),
        pytest.param(["ab", "c"], "abc", id="unterminated-output-across-chunks"),
        pytest.param(["one\ntw", "o\n"], "two", id="line-split-across-chunks"),
        pytest.param([], "", id="no-output"),
        pytest.param(["x" * MAX_SUMMARY_CHARS + "\n"], "x" * MAX_SUMMARY_CHARS, id="at-limit"),
        pytest.param(
            ["x" * (MAX_SUMMARY_CHARS + 1) + "\n"],
            "x" * (MAX_SUMMARY_CHARS - 1) + "…",
            id="one-past-limit",
        ),
    ],
)
def test_summary_is_the_last_output_line_bounded(chunks: list[str], summary: str) -> None:
    b = board()
    started(b)
    for chunk in chunks:
        b.output("t1", chunk)
    (record,) = b.progress(INTERVAL)
    assert record["summary"] == summary


@pytest.mark.parametrize(
    ("stop", "exit_code", "status", "outcome"),
    [
        pytest.param(False, 0, "completed", "completed (exit code 0)", id="exit-0"),
        pytest.param(False, 3, "failed", "failed (exit code 3)", id="exit-3"),
        pytest.param(False, -9, "failed", "failed (killed by signal 9)", id="signal"),
        pytest.param(False, None, "failed", "failed (timed out)", id="timeout"),
        pytest.param(True, -9, "stopped", "was stopped", id="stop-requested"),
        pytest.param(True, 0, "stopped", "was stopped", id="stop-raced-exit-0"),
    ],
)
def test_notification_status(stop: bool, exit_code: int | None, status: str, outcome: str) -> None:
    b = board()
    started(b)
    b.output("t1", "last words\n")
    if stop:
        assert b.request_stop("t1") == Stopping(task_id="t1")
    (record,) = b.ended("t1", exit_code=exit_code, now=1.5)
    assert record["subtype"] == "task_notification"
    assert record["status"] == status
    assert record["output_file"] == "/out/t1.output"
    assert record["summary"] == f'Background command "build it" {outcome}: last words'
    assert record["usage"]["duration_ms"] == 1500
    assert b.running == 0


def test_notification_is_emitted_exactly_once() -> None:
    b = board()
    started(b)
    assert len(b.ended("t1", exit_code=0, now=1.0)) == 1
    assert b.ended("t1", exit_code=0, now=2.0) == ()
    assert b.progress(10.0) == ()  # an ended task reports no progress


@pytest.mark.parametrize(
    ("setup", "answer"),
    [
        pytest.param("none", UnknownTask(task_id="t1"), id="unknown"),
        pytest.param("running", Stopping(task_id="t1"), id="running"),
        pytest.param("completed", NotRunning(task_id="t1", status="completed"), id="already-ended"),
    ],
)
def test_stop_task_answers(setup: str, answer: object) -> None:
    b = board()
    if setup != "none":
        started(b)
    if setup == "completed":
        b.ended("t1", exit_code=0, now=1.0)
    assert b.request_stop("t1") == answer


GRACE = RESULT_HOLD_GRACE_SECONDS


@pytest.mark.parametrize(
    ("timeouts", "now", "hold"),
    [
        pytest.param((), 0.0, 0.0, id="no-tasks-no-hold"),
        pytest.param((TIMEOUT,), 0.0, TIMEOUT + GRACE, id="a-running-task-holds"),
        pytest.param((TIMEOUT,), 100.0, TIMEOUT + GRACE - 100.0, id="the-hold-counts-down"),
        pytest.param((10.0, 600.0), 0.0, 600.0 + GRACE, id="the-latest-deadline-bounds-it"),
        pytest.param((TIMEOUT,), TIMEOUT + GRACE - 0.5, 0.5, id="just-before-the-bound"),
        pytest.param((TIMEOUT,), TIMEOUT + GRACE, 0.0, id="at-the-bound"),
        pytest.param((TIMEOUT,), TIMEOUT + GRACE + 1.0, 0.0, id="past-the-bound"),
    ],
)
def test_result_hold(timeouts: tuple[float, ...], now: float, hold: float) -> None:
    """DEC-TURN-5: every turn's result waits for its running tasks, at most
    until the latest task deadline plus the grace."""
    b = board()
    for n, timeout in enumerate(timeouts):
        started(b, task_id=f"t{n}", timeout=timeout)
    assert b.result_hold(now) == pytest.approx(hold)


def test_the_result_is_released_by_the_last_terminal_event() -> None:
    """Scenario 9 and scenario 12's task part: the held result waits for
    every finite task; ended tasks no longer count."""
    b = board()
    started(b, task_id="a", timeout=600.0)
    started(b, task_id="b", timeout=10.0)
    b.ended("a", exit_code=0, now=1.0)
    assert b.result_hold(1.0) == pytest.approx(10.0 + GRACE - 1.0)
    b.ended("b", exit_code=1, now=2.0)
    assert b.result_hold(2.0) == 0.0


@given(st.lists(st.sampled_from(["start", "end", "stop", "tick"]), max_size=40))
def test_every_task_gets_exactly_one_notification(steps: list[str]) -> None:
    b = board()
    started_ids: list[str] = []
    notified: list[str] = []
    now = 0.0
    for step in steps:
        now += 0.3
        if step == "start":
            task_id = f"t{len(started_ids)}"
            started_ids.append(task_id)
            started(b, task_id=task_id, now=now)
        elif step in ("end", "stop") and started_ids:
            task_id = started_ids[len(notified) % len(started_ids)]
            if step == "stop":
                b.request_stop(task_id)
            notified += [r["task_id"] for r in b.ended(task_id, exit_code=0, now=now)]
        else:
            assert all(r["subtype"] == "task_progress" for r in b.progress(now))
    for task_id in started_ids:
        notified += [r["task_id"] for r in b.ended(task_id, exit_code=0, now=now)]
    assert sorted(notified) == sorted(started_ids)
    assert b.running == 0


def test_a_task_whose_owner_writes_its_records() -> None:
    """DEC-TURN-3: a background subagent writes its own task records; the
    board still decides its stop, its status and the result's hold."""
    b = board()
    assert (
        b.start(
            task_id="a1",
            description="d",
            tool_use_id="t",
            output_file="",
            now=0.0,
            timeout=600.0,
            task_type="local_agent",
            announce=False,
        )
        == ()
    )
    assert b.progress(1000.0) == ()
    assert b.result_hold(10.0) == 595.0
    assert b.request_stop("a1") == Stopping(task_id="a1")
    assert b.ended("a1", exit_code=1, now=20.0) == ()
    task = b.get("a1")
    assert task is not None and task.status == "stopped" and task.task_type == "local_agent"
    assert b.result_hold(20.0) == 0.0
