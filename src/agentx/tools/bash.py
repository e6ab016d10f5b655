"""The ``Bash`` tool (DEC-TURN-3): one shell command in its own process group.

The command runs under ``/bin/bash -c`` with the session environment only
(``ToolContext.env``), stdin closed and stderr merged into stdout. A timeout
(default 120 s, at most 600 s) or a cancel kills the whole process group at
once: the cancel callback itself sends the SIGKILL, so cancellation does not
wait for the next output. With ``run_in_background`` the command is handed to
the session's background launcher and the result names its task id and
output file at once (finite background work, ``system/task_*`` records).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from msgspec import Struct

from agentx.messages.sandbox_policy import SandboxRefused
from agentx.providers.base import Cancelled, CancelToken
from agentx.tools.base import (
    MAX_OUTPUT_BYTES,
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_members,
    error,
    get_bool,
    get_int,
    get_optional_str,
    get_str,
    invalid_input,
    output,
)
from agentx.tools.process import GroupProcess
from agentx.tools.specs import BASH, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS

#: Raw bytes kept from the command's output; the rest is counted, not stored
#: (the result could not show more: each byte costs at least one encoded byte).
MAX_CAPTURE_BYTES: Final = MAX_OUTPUT_BYTES
SHELL: Final = "/bin/bash"

#: A session without a background launcher (a bare tool context) refuses it.
BACKGROUND_UNAVAILABLE: Final = (
    "Bash: run_in_background is not available here; run the command in the foreground"
)


class _Call(Struct, frozen=True, kw_only=True):
    command: str
    timeout_ms: int
    description: str | None
    background: bool
    unsandboxed: bool


def _parse(input: Mapping[str, Any]) -> _Call:
    check_members(input, BASH)
    command = get_str(input, "command")
    if not command.strip():
        raise ToolInputError("parameter 'command' must not be empty")
    if "\0" in command:  # no argument of a program can hold one (spec "Ordering")
        raise ToolInputError("parameter 'command' must not contain a NUL character")
    return _Call(
        command=command,
        timeout_ms=get_int(
            input, "timeout", default=DEFAULT_TIMEOUT_MS, minimum=1, maximum=MAX_TIMEOUT_MS
        ),
        description=get_optional_str(input, "description"),
        background=get_bool(input, "run_in_background"),
        unsandboxed=get_bool(input, "dangerouslyDisableSandbox"),
    )


class BashTool:
    name: Final = "Bash"
    spec: Final = BASH
    read_only: Final = False

    def summarize(self, input: Mapping[str, Any]) -> str:
        """WIRE-PERM-003: every simple command the line runs, never the
        model's ``description`` alone nor only the first line. The Bash line
        cores load here, not with the tool's spec (DEC-CLI-3)."""
        from agentx.messages.bash.summary import command_summary  # noqa: PLC0415

        return command_summary(_parse(input).command)

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        # A shell command's paths cannot be known; the command itself is asked about.
        return ()

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            call = _parse(input)
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        if cancel.is_set():
            raise Cancelled
        try:
            argv, env = shell_command(call.command, ctx, disable_requested=call.unsandboxed)
        except SandboxRefused as exc:
            return error(str(exc))
        if call.background:
            return _start_background(call, ctx, argv, env)
        try:
            proc = GroupProcess(
                argv, cwd=ctx.cwd, env=env, children=ctx.children, merge_stderr=True
            )
        except OSError as exc:
            return error(f"Bash: cannot start the shell: {exc.strerror}")
        cancel.on_cancel(proc.kill)
        deadline = time.monotonic() + call.timeout_ms / 1000
        captured = bytearray()
        dropped = 0
        timed_out = False
        while not proc.done:
            remaining = deadline - time.monotonic()
            if remaining <= 0 and not timed_out:
                timed_out = True
                proc.kill()
            for chunk in proc.pump(max(remaining, 0.0) if not timed_out else 1.0):
                room = MAX_CAPTURE_BYTES - len(captured)
                captured += chunk.data[:room]
                dropped += max(0, len(chunk.data) - room)
        if cancel.is_set():
            raise Cancelled
        text = captured.decode("utf-8", errors="replace")
        code = proc.returncode
        if timed_out:
            status = f"Command timed out after {call.timeout_ms} ms"
        elif code:
            status = f"[killed by signal {-code}]" if code < 0 else f"[exit code {code}]"
        else:
            return output(text, dropped=dropped)
        # The status goes first so a truncated output can never cut it off.
        return output(f"{status}\n{text}".rstrip("\n"), is_error=True, dropped=dropped)


def shell_command(
    command: str, ctx: ToolContext, *, disable_requested: bool = False
) -> tuple[list[str], Mapping[str, str]]:
    """The argv and environment of ``command``: through the session's sandbox
    when it has one (DEC-PERM-BASH-5; raises :class:`SandboxRefused`)."""
    if ctx.sandbox is None:
        return [SHELL, "-c", command], ctx.env
    return ctx.sandbox.command(command, ctx.env, disable_requested=disable_requested)


def _start_background(
    call: _Call, ctx: ToolContext, argv: list[str], env: Mapping[str, str]
) -> ToolOutput:
    """DEC-TURN-3: finite background work; the result names the task and its file."""
    if ctx.background is None:
        return error(BACKGROUND_UNAVAILABLE)
    try:
        ticket = ctx.background.start(
            command=call.command,
            description=call.description or call.command,
            tool_use_id=ctx.tool_use_id,
            cwd=ctx.cwd,
            env=env,
            timeout_ms=call.timeout_ms,
            argv=argv,
        )
    except OSError as exc:
        return error(f"Bash: cannot start the background command: {exc.strerror or exc}")
    return output(
        f"Command running in background with ID: {ticket.task_id}. "
        f"Output is being written to: {ticket.output_file}"
    )
