"""The same blocking API over a real ``agentx`` process (DEC-CLI-1 duplex protocol).

For applications that want process isolation: :class:`Client` starts the
``agentx`` executable with the duplex protocol and decodes its stdout with a
strict decoder of its own (one record per ``\\n``-terminated line, duplicate
member names rejected), then offers exactly :class:`agentx.embed.Agent`'s
methods (``prompt``, ``records``, ``control``, ``interrupt``, ``close``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentx.actors.embedded import start_daemon
from agentx.embed import DUPLEX, BlockingSession, PermissionHandler, session_environment


def default_command() -> list[str]:
    """The ``agentx`` beside this interpreter, else ``python -m agentx``."""
    script = Path(sys.executable).with_name("agentx")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentx"]


class Client(BlockingSession):
    """A blocking session driving an ``agentx`` subprocess over pipes."""

    def __init__(
        self,
        *,
        args: Sequence[str] = (),
        home: str | Path | None = None,
        cwd: str | Path | None = None,
        environ: Mapping[str, str] | None = None,
        can_use_tool: PermissionHandler | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        super().__init__(can_use_tool)
        self._proc = subprocess.Popen(
            [*(command or default_command()), *DUPLEX, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=session_environment(home, environ),
            cwd=cwd,
        )
        start_daemon(self._pump, name="agentx-client-stdout")
        self._begin()

    def _pump(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            if not line.endswith(b"\n"):
                break  # a torn last line is not a record
            self._outbound.put(line)
        self._outbound.put(b"")  # end of output for the router
        # Deadline enforced elsewhere (DECISIONS section 8): stdout closed, so
        # agentx is in its shutdown, which has one overall deadline; a caller
        # waits on ``_exit`` with its own timeout.
        self._exit.set_result(self._proc.wait())

    def _put_input(self, data: bytes) -> None:
        assert self._proc.stdin is not None
        if data:
            self._proc.stdin.write(data)
            self._proc.stdin.flush()
        else:
            self._proc.stdin.close()
