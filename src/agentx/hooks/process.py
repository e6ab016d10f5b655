"""One command hook as a child process group (DEC-HOOK-2, DEC-HOOK-3).

:func:`start_hook` runs one command under ``/bin/sh -c`` in its own process
group, joined to the session's children (stopped at its end), with the
hook's input as JSON on stdin. The caller polls :meth:`HookProcess.read_output`
(each call waits at most the given time and enforces the hook's deadline)
until :attr:`HookProcess.finished` is set; any thread may :meth:`HookProcess.kill`
it (the event no longer needs it: the outcome is ``cancelled``).

Output is bounded: past :data:`MAX_HOOK_OUTPUT_BYTES` on stdout the group is
killed at once and the hook has failed (a hook printing 100 MB costs one
buffer, never the session's memory). A hook is never sandboxed: it is the
user's own code, as in Claude Code.
"""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from msgspec import Struct

from agentx.messages.hooks.config import CommandHook, HttpHook
from agentx.messages.hooks.records import ResponseOutcome
from agentx.messages.hooks.verdicts import CANCELLED, Verdict, command_verdict, failed
from agentx.tools.process import ChildProcesses, Chunk, GroupProcess

#: Bytes kept per stream; a longer stdout is a failure and kills the hook.
MAX_HOOK_OUTPUT_BYTES: Final = 64 * 1024
#: Variables a hook inherits from agentx's own environment (DEC-HOOK-2: clean).
INHERITED_ENV: Final = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "TMPDIR")
SHELL: Final = "/bin/sh"


class Finished(Struct, frozen=True, kw_only=True):
    """How one command hook ended: its verdict and what its record shows."""

    verdict: Verdict
    exit_code: int | None = None
    stdout: str = ""
    stderr: str = ""

    @property
    def outcome(self) -> ResponseOutcome:
        """The ``system/hook_response`` outcome (DEC-HOOK-4)."""
        if self.verdict.cancelled:
            return "cancelled"
        return "error" if self.verdict.failure is not None else "success"


class HookOutput(Struct, frozen=True, kw_only=True):
    """Hook output as it arrives, for ``system/hook_progress``."""

    stdout: str = ""
    stderr: str = ""


def hook_env(
    session_env: Mapping[str, str], base: Mapping[str, str], *, project_dir: Path
) -> dict[str, str]:
    """A clean environment plus the session's (DEC-HOOK-2), and
    ``CLAUDE_PROJECT_DIR`` (the session cwd) as Claude Code sets it.

    Only :data:`INHERITED_ENV` is taken from ``base`` (agentx's environment),
    so provider keys and other secrets never reach a hook.
    """
    env = {name: base[name] for name in INHERITED_ENV if name in base}
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    env.update(session_env)
    return env


class HookProcess:
    """One running command hook; see the module docstring for the protocol."""

    def __init__(
        self,
        proc: GroupProcess,
        *,
        event: str,
        tool_use_id: str,
        timeout_s: float,
        now: float,
        http: bool = False,
    ) -> None:
        """``http``: the child is an http hook's POST (:mod:`agentx.hooks.http_post`)."""
        self._proc = proc
        self._http = http
        self._event = event
        self._tool_use_id = tool_use_id
        self._timeout_s = timeout_s
        self._deadline = now + timeout_s
        self._timed_out = False
        self._buffers: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        self._overflow = False
        self._decoders = {
            name: codecs.getincrementaldecoder("utf-8")(errors="replace") for name in self._buffers
        }
        self.finished: Finished | None = None

    @property
    def pid(self) -> int:
        return self._proc.pid

    def read_output(self, timeout: float) -> tuple[HookOutput, ...]:
        """Wait up to ``timeout`` s; return the output that arrived (bounded, decoded).

        Kills the group when the hook's deadline passes. When the process
        has ended, :attr:`finished` is set and later calls return ``()``.
        """
        if self.finished is not None:
            return ()
        remaining = self._deadline - time.monotonic()
        if remaining <= 0 and not self._timed_out:
            self._timed_out = True
            self._proc.kill()
        wait = timeout if self._timed_out else min(timeout, remaining)
        progress = tuple(
            item for item in (self._take(c) for c in self._proc.pump(max(wait, 0.0))) if item
        )
        if self._proc.done:
            self.finished = self._finish()
        return progress

    def wait(self, timeout: float) -> Finished | None:
        """Run until finished or ``timeout`` s pass, discarding progress."""
        end = time.monotonic() + timeout
        while self.finished is None and (left := end - time.monotonic()) > 0:
            self.read_output(left)
        return self.finished

    def kill(self) -> None:
        """Kill the whole group, from any thread; the outcome is ``cancelled``."""
        self._proc.kill()

    def _take(self, chunk: Chunk) -> HookOutput | None:
        buffer = self._buffers[chunk.stream]
        room = MAX_HOOK_OUTPUT_BYTES - len(buffer)
        if len(chunk.data) > room and chunk.stream == "stdout" and not self._overflow:
            self._overflow = True
            self._proc.kill()
        data = chunk.data[: max(room, 0)]
        if not data:
            return None
        buffer += data
        text = self._decoders[chunk.stream].decode(data)
        return HookOutput(**{chunk.stream: text}) if text else None

    def _finish(self) -> Finished:
        out, err = bytes(self._buffers["stdout"]), bytes(self._buffers["stderr"])
        seen: dict[str, Any] = {
            "stdout": out.decode("utf-8", errors="replace"),
            "stderr": err.decode("utf-8", errors="replace"),
        }
        if self._timed_out:
            reason = f"hook timed out after {self._timeout_s:g} s"
            return Finished(verdict=failed(reason, timed_out=True), **seen)
        if self._overflow:
            reason = f"hook stdout exceeds {MAX_HOOK_OUTPUT_BYTES} bytes"
            return Finished(verdict=failed(reason), **seen)
        if self._proc.killed:
            return Finished(verdict=CANCELLED, **seen)
        code = self._proc.returncode
        assert code is not None  # done implies reaped
        if self._http and code == 1:
            # An http hook's POST that failed says why in its one stderr line
            # (status, timeout, connection); its exit status alone would not.
            line = seen["stderr"].strip().splitlines()[-1:] or ["http hook: failed"]
            return Finished(verdict=failed(line[0][:200]), exit_code=code, **seen)
        verdict = command_verdict(self._event, code, out, err, tool_use_id=self._tool_use_id)
        return Finished(verdict=verdict, exit_code=code, **seen)


def start_process_hook(
    spec: CommandHook | HttpHook,
    hook_input: Mapping[str, Any],
    *,
    header_env: Mapping[str, str],
    cwd: Path,
    env: Mapping[str, str],
    children: ChildProcesses,
) -> HookProcess:
    """Start a hook that runs as a child of the session: a command hook's
    shell, or an http hook's POST (:mod:`agentx.hooks.http_post`, loaded
    only then), the same way for every event (DECISIONS section 3)."""
    if isinstance(spec, HttpHook):
        from agentx.hooks.http_post import start_http_hook  # noqa: PLC0415 - only with one

        return start_http_hook(
            spec, hook_input, header_env=header_env, cwd=cwd, env=env, children=children
        )
    return start_hook(
        spec.command, hook_input, cwd=cwd, env=env, timeout_s=spec.timeout_s, children=children
    )


def start_hook(
    command: str,
    hook_input: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    children: ChildProcesses,
) -> HookProcess:
    """Start ``command`` with ``hook_input`` as JSON on stdin (DEC-HOOK-2).

    ``env`` is the complete environment (see :func:`hook_env`); the hook's
    group joins the session's ``children``. Raises ``OSError`` when the
    shell cannot start; the caller reports that as a hook failure.
    """
    stdin = json.dumps(hook_input, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return start_program(
        [SHELL, "-c", command],
        stdin,
        hook_input,
        cwd=cwd,
        env=env,
        timeout_s=timeout_s,
        children=children,
    )


def start_program(
    argv: list[str],
    stdin: bytes,
    hook_input: Mapping[str, Any],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    children: ChildProcesses,
    http: bool = False,
) -> HookProcess:
    """Start ``argv`` as one hook of ``hook_input``'s event, ``stdin`` on its
    standard input (an http hook's POST runs this way, ``http``: DECISIONS
    section 3)."""
    proc = GroupProcess(argv, cwd=cwd, env=env, children=children, stdin_data=stdin)
    return HookProcess(
        proc,
        event=str(hook_input.get("hook_event_name", "")),
        tool_use_id=str(hook_input.get("tool_use_id", "")),
        timeout_s=timeout_s,
        now=time.monotonic(),
        http=http,
    )
