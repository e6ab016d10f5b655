"""Every hook of one firing, in parallel, each with its own deadline (DEC-HOOK-3).

:class:`HookRunner` starts all the hooks an event selected at once (command
hooks as process groups, callback hooks as ``hook_callback`` requests through
a :class:`CallbackPort`), then serves them from the calling thread until each
has answered, failed, or passed its deadline; it starts no thread. A hook
that passes its deadline is stopped (its group killed, its request
cancelled) and has failed; when the caller's ``cancelled`` turns true (the
turn was interrupted, the session ends) every hook still running is stopped
and reports ``cancelled``. With ``records`` on it writes the DEC-HOOK-4
records of each hook as it goes. An ``async`` command hook is started and
left running: it decides nothing (its verdict is no opinion) and
:meth:`HookRunner.poll_background` collects it later. A hook that answers ``suppressOutput: true``
has its stdout left out of its ``hook_response`` (its ``hook_progress``
records were written before the answer could be read).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final, Protocol

from msgspec import Struct

from agentx.hooks.process import Finished, HookProcess, start_process_hook
from agentx.messages.frozen import FrozenDict
from agentx.messages.hooks.aggregate import on_failure
from agentx.messages.hooks.config import (
    NO_FAILURE_BLOCK,
    CallbackHook,
    CommandHook,
    HookSpec,
    HttpHook,
)
from agentx.messages.hooks.records import (
    HookIdentity,
    hook_progress,
    hook_response,
    hook_started,
)
from agentx.messages.hooks.verdicts import CANCELLED, Verdict, failed
from agentx.messages.records import RecordSink
from agentx.tools.process import ChildProcesses

#: How long one pass over the running hooks waits in all.
POLL_SECONDS: Final = 0.05
#: Non-blocking passes one poll of a background hook makes at most.
POLL_PASSES: Final = 16


class CallbackCall(Protocol):
    """One ``hook_callback`` request in flight (DEC-PROFILE-2)."""

    def wait(self, timeout: float) -> Verdict | None:
        """The verdict once answered (an error answer is a failure), else None."""

    def cancel(self) -> None:
        """Withdraw the request (``control_cancel_request``)."""


class CallbackPort(Protocol):
    def start(
        self, callback_id: str, hook_input: FrozenDict, tool_use_id: str | None
    ) -> CallbackCall:
        """Send the request; raises when it cannot be sent (a failure)."""


def _never() -> bool:
    return False


class RunnerPorts(Struct, frozen=True, kw_only=True):
    """What the runner needs of the session."""

    cwd: Path
    env: Callable[[], Mapping[str, str]]
    children: ChildProcesses
    emit: RecordSink
    session_id: Callable[[], str]
    new_uuid: Callable[[], str]
    callbacks: CallbackPort | None = None
    #: What an http hook's header values interpolate (fixed at the start: the
    #: credential union was built from the same values, DEC-AUTH-3).
    header_env: Mapping[str, str] = FrozenDict()


class _Run:
    """One hook of the firing while it runs."""

    def __init__(self, spec: HookSpec, who: HookIdentity, deadline: float, records: bool) -> None:
        self.spec = spec
        self.who = who
        self.deadline = deadline
        self.records = records
        self.process: HookProcess | None = None
        self.call: CallbackCall | None = None
        self.verdict: Verdict | None = None
        self.finished: Finished | None = None


class HookRunner:
    """Runs the hooks of one firing; see the module docstring."""

    def __init__(self, ports: RunnerPorts) -> None:
        self._p = ports
        self._ids = itertools.count(1)
        #: ``async`` command hooks still running (DECISIONS section 3).
        self._background: list[_Run] = []

    def run(
        self,
        specs: tuple[HookSpec, ...],
        hook_input: FrozenDict,
        *,
        records: bool,
        cancelled: Callable[[], bool] = _never,
        extra_env: Mapping[str, str] | None = None,
    ) -> tuple[Verdict, ...]:
        """Each spec's verdict, in ``specs`` order (its ``onFailure`` applied);
        ``extra_env`` joins the command hooks' environment (``CLAUDE_ENV_FILE``)."""
        event = str(hook_input["hook_event_name"])
        env = {**self._p.env(), **(extra_env or {})}
        runs = [self._start(spec, event, hook_input, env, records) for spec in specs]
        waited = [r for r in runs if not _background(r.spec) or r.verdict is not None]
        self._background.extend(r for r in runs if r not in waited)
        stopping = False
        while pending := [r for r in waited if r.verdict is None]:
            if not stopping and cancelled():
                stopping = True
                for run in pending:
                    self._stop(run)
            slice_s = POLL_SECONDS / len(pending)
            for run in pending:
                self._serve(run, slice_s, records, stopping)
        return tuple(_applied(r, event) if r in waited else Verdict() for r in runs)

    def poll_background(self) -> tuple[tuple[str, HookSpec, Verdict], ...]:
        """The ``async`` hooks that ended since the last poll, each with its
        event and verdict (its records written); one that passed its deadline is killed
        and has failed. Never waits. A background hook is polled at every
        later firing and stopped with the session's children at its end."""
        ended: list[tuple[str, HookSpec, Verdict]] = []
        for run in list(self._background):
            # Each pass serves one step (output, an end of file, the exit):
            # a few non-blocking passes collect a hook that has ended.
            for _ in range(POLL_PASSES):
                self._serve(run, 0.0, run.records, stopping=False)
                if run.verdict is not None:
                    break
            if run.verdict is not None:
                self._background.remove(run)
                ended.append((run.who.hook_event, run.spec, run.verdict))
        return tuple(ended)

    def _emit(self, record: dict[str, object]) -> None:
        self._p.emit((record,))

    def _start(
        self,
        spec: HookSpec,
        event: str,
        hook_input: FrozenDict,
        env: Mapping[str, str],
        records: bool,
    ) -> _Run:
        who = HookIdentity(hook_id=f"hook_{next(self._ids)}", hook_name=spec.name, hook_event=event)
        run = _Run(spec, who, time.monotonic() + spec.timeout_s, records)
        if records:
            self._emit(hook_started(who, session_id=self._p.session_id(), uuid=self._p.new_uuid()))
        try:
            if isinstance(spec, CommandHook | HttpHook):
                run.process = start_process_hook(
                    spec,
                    hook_input,
                    header_env=self._p.header_env,
                    cwd=self._p.cwd,
                    env=env,
                    children=self._p.children,
                )
            elif self._p.callbacks is None:
                self._end(run, failed("no client answers hook callbacks"), records)
            else:
                tool_use_id = hook_input.get("tool_use_id")
                run.call = self._p.callbacks.start(
                    spec.callback_id,
                    hook_input,
                    tool_use_id if isinstance(tool_use_id, str) else None,
                )
        except OSError as exc:
            self._end(run, failed(f"hook did not start: {exc.strerror or exc}"), records)
        except Exception as exc:  # a request that could not be sent is this hook's failure
            self._end(run, failed(f"hook callback could not be sent: {exc}"), records)
        return run

    def _serve(self, run: _Run, slice_s: float, records: bool, stopping: bool) -> None:
        if run.process is not None:
            for output in run.process.read_output(slice_s):
                if records:
                    self._emit(
                        hook_progress(
                            run.who,
                            stdout=output.stdout,
                            stderr=output.stderr,
                            session_id=self._p.session_id(),
                            uuid=self._p.new_uuid(),
                        )
                    )
            if run.process.finished is not None:
                run.finished = run.process.finished
                self._end(run, run.finished.verdict, records)
            return
        assert run.call is not None
        verdict = run.call.wait(slice_s)
        if verdict is None and stopping:
            verdict = CANCELLED
        elif verdict is None and time.monotonic() >= run.deadline:
            run.call.cancel()
            verdict = failed(f"hook timed out after {run.spec.timeout_s:g} s", timed_out=True)
        if verdict is not None:
            self._end(run, verdict, records)

    def _stop(self, run: _Run) -> None:
        if run.process is not None:
            run.process.kill()
        elif run.call is not None:
            run.call.cancel()

    def _end(self, run: _Run, verdict: Verdict, records: bool) -> None:
        run.verdict = verdict
        if not records:
            return
        finished = run.finished or Finished(verdict=verdict)
        self._emit(
            hook_response(
                run.who,
                outcome=finished.outcome,
                # suppressOutput: the hook's stdout stays out of its record,
                # as Claude Code keeps it out of the transcript.
                stdout="" if verdict.suppress_output else finished.stdout,
                stderr=finished.stderr,
                exit_code=finished.exit_code,
                session_id=self._p.session_id(),
                uuid=self._p.new_uuid(),
            )
        )


def _background(spec: HookSpec) -> bool:
    return isinstance(spec, CommandHook) and spec.background


def _applied(run: _Run, event: str) -> Verdict:
    """A run's verdict with its definition's ``onFailure`` applied (DEC-HOOK-3)."""
    assert run.verdict is not None
    if isinstance(run.spec, CallbackHook) and event not in NO_FAILURE_BLOCK:
        return on_failure(run.verdict, run.spec.on_failure)
    return run.verdict
