"""Every hook of one firing, in parallel, each with its deadline (DEC-HOOK-3),
with real shell commands and a scripted callback port."""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentx.hooks.process import hook_env
from agentx.hooks.runner import HookRunner, RunnerPorts
from agentx.messages.frozen import FrozenDict
from agentx.messages.hooks.config import CallbackHook, CommandHook
from agentx.messages.hooks.events import Common, event_input
from agentx.messages.hooks.verdicts import Verdict, failed
from agentx.tools.process import ChildProcesses

COMMON = Common(session_id="s", transcript_path="", cwd="/", permission_mode="default")
INPUT = event_input(
    "PreToolUse", COMMON, {"tool_name": "Bash", "tool_input": {}, "tool_use_id": "t1"}
)


class Call:
    def __init__(self, answer: Verdict | None) -> None:
        self.answer = answer
        self.cancelled = threading.Event()

    def wait(self, timeout: float) -> Verdict | None:
        if self.answer is None:
            self.cancelled.wait(timeout)
        return self.answer

    def cancel(self) -> None:
        self.cancelled.set()


class Port:
    def __init__(self, answers: Mapping[str, Verdict | Exception | None]) -> None:
        self.answers = answers
        self.calls: dict[str, Call] = {}
        self.sent: list[tuple[str, FrozenDict, str | None]] = []

    def start(self, callback_id: str, hook_input: FrozenDict, tool_use_id: str | None) -> Call:
        self.sent.append((callback_id, hook_input, tool_use_id))
        answer = self.answers[callback_id]
        if isinstance(answer, Exception):
            raise answer
        self.calls[callback_id] = Call(answer)
        return self.calls[callback_id]


def _runner(
    tmp_path: Path, port: Port | None = None
) -> tuple[HookRunner, list[Mapping[str, Any]], ChildProcesses]:
    records: list[Mapping[str, Any]] = []
    children = ChildProcesses()
    counter = itertools.count(1)
    return (
        HookRunner(
            RunnerPorts(
                cwd=tmp_path,
                env=lambda: hook_env({}, os.environ, project_dir=tmp_path),
                children=children,
                emit=records.extend,
                session_id=lambda: "s",
                new_uuid=lambda: f"u{next(counter)}",
                callbacks=port,
            )
        ),
        records,
        children,
    )


def test_hooks_of_one_event_run_in_parallel(tmp_path: Path) -> None:
    """The first hook waits for a file only the second one writes: in
    sequence it could only time out."""
    runner, _, children = _runner(tmp_path)
    waits = CommandHook(command="while [ ! -e flag ]; do sleep 0.01; done; exit 2", timeout_s=60)
    writes = CommandHook(command="touch flag", timeout_s=60)
    verdicts = runner.run((waits, writes), INPUT, records=False)
    assert verdicts == (Verdict(decision="block", reason="blocked by a PreToolUse hook"), Verdict())
    assert children.live == 0


def test_each_hook_has_its_own_deadline(tmp_path: Path) -> None:
    runner, records, children = _runner(tmp_path)
    never = CommandHook(command="exec sleep 300", timeout_s=0.3)
    quick = CommandHook(command="echo hi >&2; exit 2", timeout_s=60)
    verdicts = runner.run((never, quick), INPUT, records=True)
    assert verdicts == (
        failed("hook timed out after 0.3 s", timed_out=True),
        Verdict(decision="block", reason="hi"),
    )
    responses = [r for r in records if r["subtype"] == "hook_response"]
    assert sorted((r["hook_name"], r["outcome"]) for r in responses) == [
        ("echo hi >&2; exit 2", "success"),
        ("exec sleep 300", "error"),
    ]
    assert [r["subtype"] for r in records].count("hook_started") == 2
    assert any(r["subtype"] == "hook_progress" and r["stderr"] == "hi\n" for r in records)
    assert children.live == 0


def test_cancelled_stops_every_running_hook(tmp_path: Path) -> None:
    port = Port({"cb": None})
    runner, records, children = _runner(tmp_path, port)
    polls = itertools.count()
    verdicts = runner.run(
        (CommandHook(command="exec sleep 300"), CallbackHook(callback_id="cb")),
        INPUT,
        records=True,
        cancelled=lambda: next(polls) >= 3,  # both started and served twice
    )
    assert all(v.cancelled for v in verdicts)
    assert port.calls["cb"].cancelled.is_set()
    assert [r["outcome"] for r in records if r["subtype"] == "hook_response"] == [
        "cancelled",
        "cancelled",
    ]
    assert children.live == 0


def test_callbacks_answer_time_out_and_fail(tmp_path: Path) -> None:
    port = Port(
        {
            "allow": Verdict(decision="allow"),
            "silent": None,
            "broken": RuntimeError("the broker is gone"),
            "blocking": None,
        }
    )
    runner, records, _ = _runner(tmp_path, port)
    verdicts = runner.run(
        (
            CallbackHook(callback_id="allow"),
            CallbackHook(callback_id="silent", timeout_s=0.2),
            CallbackHook(callback_id="broken"),
            CallbackHook(callback_id="blocking", timeout_s=0.2, on_failure="block"),
        ),
        INPUT,
        records=False,
    )
    assert verdicts[0] == Verdict(decision="allow")
    assert verdicts[1] == failed("hook timed out after 0.2 s", timed_out=True)
    assert port.calls["silent"].cancelled.is_set()
    assert verdicts[2] == failed("hook callback could not be sent: the broker is gone")
    assert (verdicts[3].decision, verdicts[3].reason) == (
        "block",
        "hook failed: hook timed out after 0.2 s",
    )
    assert [(cid, tid) for cid, _, tid in port.sent] == [
        ("allow", "t1"),
        ("silent", "t1"),
        ("broken", "t1"),
        ("blocking", "t1"),
    ]
    assert port.sent[0][1] == INPUT
    assert records == []


def test_a_callback_with_no_client_fails(tmp_path: Path) -> None:
    runner, _, _ = _runner(tmp_path)
    assert runner.run((CallbackHook(callback_id="x"),), INPUT, records=False) == (
        failed("no client answers hook callbacks"),
    )


@pytest.mark.parametrize("command", ["exit 0", "/no/such/program"], ids=["ok", "missing-program"])
def test_a_command_hook_always_reports_once(tmp_path: Path, command: str) -> None:
    runner, records, _ = _runner(tmp_path)
    runner.run((CommandHook(command=command),), INPUT, records=True)
    assert [r["subtype"] for r in records if r["subtype"] != "hook_progress"] == [
        "hook_started",
        "hook_response",
    ]


def test_on_failure_block_is_ignored_on_stop(tmp_path: Path) -> None:
    """As in the SDKs: a Stop callback's failure never keeps the turn going."""
    port = Port({"stop": RuntimeError("gone")})
    runner, _, _ = _runner(tmp_path, port)
    stop = event_input("Stop", COMMON, {"stop_hook_active": False})
    (verdict,) = runner.run(
        (CallbackHook(callback_id="stop", on_failure="block"),), stop, records=False
    )
    assert verdict == failed("hook callback could not be sent: gone")
    assert verdict.decision is None


def test_an_async_hook_runs_in_the_background_and_decides_nothing(tmp_path: Path) -> None:
    """DECISIONS section 3: an ``async`` command hook does not hold its event
    (its block is no opinion); it is collected by a later poll, with its
    records, and one past its deadline is killed and has failed."""
    runner, records, children = _runner(tmp_path)
    slow = CommandHook(
        command="while [ ! -e go ]; do sleep 0.01; done; echo no >&2; exit 2", background=True
    )
    stuck = CommandHook(command="exec sleep 300", timeout_s=0.3, background=True)
    quick = CommandHook(command="exit 0")
    verdicts = runner.run((slow, stuck, quick), INPUT, records=True)
    assert verdicts == (Verdict(), Verdict(), Verdict())
    assert children.live == 2
    assert runner.poll_background() == ()
    (tmp_path / "go").touch()
    ended: list[Any] = []
    for _ in range(3000):  # at most 30 s
        ended.extend(runner.poll_background())
        if len(ended) == 2:
            break
        threading.Event().wait(0.01)
    assert sorted((spec.command, verdict) for _, spec, verdict in ended) == sorted(
        [
            (slow.command, Verdict(decision="block", reason="no")),
            (stuck.command, failed("hook timed out after 0.3 s", timed_out=True)),
        ]
    )
    assert {event for event, _, _ in ended} == {"PreToolUse"}
    assert children.live == 0
    assert [r["subtype"] for r in records].count("hook_response") == 3
