"""The permission hook runner (DEC-HOOK-1..4): blocking API, no threads.

:func:`start_hook` runs one command hook under ``/bin/sh -c`` in its own
process group, its stdin the DEC-HOOK-2 JSON object. The thread that drives a
:class:`HookProcess` calls :meth:`HookProcess.read_output` in a loop (each
call waits at most the given time and enforces the hook's timeout), turning
each :class:`HookOutput` into a ``system/hook_progress`` record, until
:attr:`HookProcess.outcome` is set; :meth:`HookProcess.wait` does the same
while discarding progress. Any thread may call :meth:`HookProcess.kill` when
the hook loses the permission race (WIRE-PERM-001): the group dies and the
outcome is ``cancelled``.

Outcomes follow DEC-HOOK-3; every failure is ``error``, which the arbiter
treats as deny (WIRE-PERM-002).
"""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.strict_json import StrictJSONError, loads_strict
from agentx.tools.process import ChildProcesses, Chunk, GroupProcess

PERMISSION_REQUEST: Final = "PermissionRequest"
#: Bytes kept per stream; progress stops and a longer stdout is an error.
MAX_HOOK_OUTPUT_BYTES: Final = 64 * 1024
#: Variables a hook inherits from agentx's own environment (DEC-HOOK-2: clean).
INHERITED_ENV: Final = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TMPDIR")
SHELL: Final = "/bin/sh"

Decision = Literal["passthrough", "allow", "deny", "error", "cancelled"]
ResponseOutcome = Literal["success", "error", "cancelled"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HookOutcome:
    """How one hook run ended (DEC-HOOK-3)."""

    decision: Decision
    updated_input: FrozenDict | None = None
    reason: str | None = None
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""
    #: The hook's own timeout killed it (an error that denies, DEC-HOOK-3).
    timed_out: bool = False

    @property
    def decisive(self) -> bool:
        """Allow and deny decide the race; pass-through does not (WIRE-PERM-001)."""
        return self.decision in ("allow", "deny")

    @property
    def response_outcome(self) -> ResponseOutcome:
        """The ``system/hook_response`` outcome (DEC-HOOK-4)."""
        if self.decision in ("error", "cancelled"):
            return self.decision
        return "success"


@dataclass(frozen=True, slots=True, kw_only=True)
class HookOutput:
    """Hook output as it arrives, for ``system/hook_progress``."""

    stdout: str = ""
    stderr: str = ""


def permission_request_input(
    *, session_id: str, cwd: Path, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str
) -> FrozenDict:
    """The DEC-HOOK-2 stdin object."""
    result: FrozenDict = freeze(
        {
            "hook_event_name": PERMISSION_REQUEST,
            "session_id": session_id,
            "cwd": str(cwd),
            "tool_name": tool_name,
            "tool_input": tool_input,
            "tool_use_id": tool_use_id,
        }
    )
    return result


def hook_env(session_env: Mapping[str, str], base: Mapping[str, str]) -> dict[str, str]:
    """A clean environment plus the session's (DEC-HOOK-2).

    Only :data:`INHERITED_ENV` is taken from ``base`` (agentx's environment),
    so provider keys and other secrets never reach a hook.
    """
    env = {name: base[name] for name in INHERITED_ENV if name in base}
    env.update(session_env)
    return env


def _error(reason: str, *, exit_code: int | None, stdout: str, stderr: str) -> HookOutcome:
    return HookOutcome(
        decision="error", reason=reason, exit_code=exit_code, stdout=stdout, stderr=stderr
    )


def parse_outcome(exit_code: int, stdout: bytes, stderr: bytes) -> HookOutcome:
    """Classify a finished hook by DEC-HOOK-3."""
    out = stdout.decode("utf-8", errors="replace")
    err = stderr.decode("utf-8", errors="replace")
    seen: dict[str, Any] = {"exit_code": exit_code, "stdout": out, "stderr": err}
    if exit_code == 2:
        return HookOutcome(decision="deny", reason=err.strip() or "denied by hook", **seen)
    if exit_code != 0:
        return _error(f"hook exited with status {exit_code}", **seen)
    if not stdout.strip():
        return HookOutcome(decision="passthrough", **seen)
    try:
        body = loads_strict(stdout)
    except StrictJSONError as exc:
        return _error(f"hook stdout: {exc.reason}", **seen)
    if not isinstance(body, FrozenDict):
        return _error("hook stdout is not a JSON object", **seen)
    decision = body.get("decision")
    members = set(body)
    if decision == "passthrough" and members == {"decision"}:
        return HookOutcome(decision="passthrough", **seen)
    if decision == "allow" and members <= {"decision", "updatedInput"}:
        updated = body.get("updatedInput")
        if updated is None or isinstance(updated, FrozenDict):
            return HookOutcome(decision="allow", updated_input=updated, **seen)
    if decision == "deny" and members <= {"decision", "reason"}:
        reason = body.get("reason")
        if reason is None or isinstance(reason, str):
            return HookOutcome(decision="deny", reason=reason or "denied by hook", **seen)
    return _error("hook stdout is not a valid decision", **seen)


class HookProcess:
    """One running hook; see the module docstring for the driving protocol."""

    def __init__(self, proc: GroupProcess, *, timeout_s: float) -> None:
        self._proc = proc
        self._timeout_s = timeout_s
        self._deadline = time.monotonic() + timeout_s
        self._timed_out = False
        self._buffers: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self._overflow = False
        self._decoders = {
            name: codecs.getincrementaldecoder("utf-8")(errors="replace") for name in self._buffers
        }
        self.outcome: HookOutcome | None = None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def read_output(self, timeout: float) -> tuple[HookOutput, ...]:
        """Wait up to ``timeout`` s; return the output that arrived (bounded, decoded).

        Kills the group when the hook's own timeout passes. When the process
        has ended, :attr:`outcome` is set and later calls return ``()``.
        """
        if self.outcome is not None:
            return ()
        remaining = self._deadline - time.monotonic()
        if remaining <= 0 and not self._timed_out:
            self._timed_out = True
            self._proc.kill()
        wait = min(timeout, remaining) if not self._timed_out else timeout
        progress = tuple(
            item for item in (self._take(c) for c in self._proc.pump(max(wait, 0.0))) if item
        )
        if self._proc.done:
            self.outcome = self._finish()
        return progress

    def wait(self, timeout: float | None = None) -> HookOutcome | None:
        """Run until the outcome is known or ``timeout`` s pass (None: no limit)."""
        end = None if timeout is None else time.monotonic() + timeout
        while self.outcome is None:
            left = 1.0 if end is None else end - time.monotonic()
            if left <= 0:
                break
            self.read_output(left)
        return self.outcome

    def kill(self) -> None:
        """Kill the whole group from any thread (the hook lost the race, DEC-HOOK-4)."""
        self._proc.kill()

    def _take(self, chunk: Chunk) -> HookOutput | None:
        buffer = self._buffers[chunk.stream]
        room = MAX_HOOK_OUTPUT_BYTES - len(buffer)
        if len(chunk.data) > room:
            self._overflow = self._overflow or chunk.stream == "stdout"
        data = chunk.data[: max(room, 0)]
        if not data:
            return None
        buffer += data
        text = self._decoders[chunk.stream].decode(data)
        return HookOutput(**{chunk.stream: text}) if text else None

    def _finish(self) -> HookOutcome:
        out, err = bytes(self._buffers["stdout"]), bytes(self._buffers["stderr"])
        seen: dict[str, Any] = {
            "exit_code": None,
            "stdout": out.decode("utf-8", errors="replace"),
            "stderr": err.decode("utf-8", errors="replace"),
        }
        if self._timed_out:
            return HookOutcome(
                decision="error",
                reason=f"hook timed out after {self._timeout_s:g} s",
                timed_out=True,
                **seen,
            )
        if self._proc.killed:
            return HookOutcome(decision="cancelled", reason="hook cancelled", **seen)
        code = self._proc.returncode
        assert code is not None  # done implies reaped
        if self._overflow:
            seen["exit_code"] = code
            return _error(f"hook stdout exceeds {MAX_HOOK_OUTPUT_BYTES} bytes", **seen)
        return parse_outcome(code, out, err)


def start_hook(
    command: str,
    input_obj: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    children: ChildProcesses,
) -> HookProcess:
    """Start ``command`` with ``input_obj`` as JSON on stdin (DEC-HOOK-2).

    ``env`` is the complete environment (see :func:`hook_env`); the hook's
    group joins the session's ``children``. Raises ``OSError`` when the
    shell cannot start; the caller reports that as a hook error.
    """
    stdin = json.dumps(input_obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
    proc = GroupProcess(
        [SHELL, "-c", command], cwd=cwd, env=env, children=children, stdin_data=stdin
    )
    return HookProcess(proc, timeout_s=timeout_s)


# --- records (DEC-HOOK-4) ----------------------------------------------------------


def _identity(subtype: str, *, hook_id: str, hook_name: str, hook_event: str) -> dict[str, Any]:
    return {
        "type": "system",
        "subtype": subtype,
        "hook_id": hook_id,
        "hook_name": hook_name,
        "hook_event": hook_event,
    }


def hook_started_record(
    *, hook_id: str, hook_name: str, hook_event: str, session_id: str, uuid: str
) -> dict[str, Any]:
    record = _identity("hook_started", hook_id=hook_id, hook_name=hook_name, hook_event=hook_event)
    return {**record, "uuid": uuid, "session_id": session_id}


def hook_progress_record(
    output: HookOutput,
    *,
    hook_id: str,
    hook_name: str,
    hook_event: str,
    session_id: str,
    uuid: str,
) -> dict[str, Any]:
    record = _identity("hook_progress", hook_id=hook_id, hook_name=hook_name, hook_event=hook_event)
    return {
        **record,
        "stdout": output.stdout,
        "stderr": output.stderr,
        "output": output.stdout + output.stderr,
        "uuid": uuid,
        "session_id": session_id,
    }


def hook_response_record(
    outcome: HookOutcome,
    *,
    hook_id: str,
    hook_name: str,
    hook_event: str,
    session_id: str,
    uuid: str,
) -> dict[str, Any]:
    record = _identity("hook_response", hook_id=hook_id, hook_name=hook_name, hook_event=hook_event)
    record.update(
        {
            "stdout": outcome.stdout,
            "stderr": outcome.stderr,
            "output": outcome.stdout + outcome.stderr,
        }
    )
    if outcome.exit_code is not None:
        record["exit_code"] = outcome.exit_code
    record.update({"outcome": outcome.response_outcome, "uuid": uuid, "session_id": session_id})
    return record
