"""``CLAUDE_ENV_FILE`` for ``SessionStart`` command hooks (DECISIONS section 3, DEC-AUTH-3).

:class:`SessionEnvFile` gives each firing a fresh empty file in a private
folder (0700, a new one per firing), hands its path to the event's command
hooks as ``CLAUDE_ENV_FILE``, and once they have all finished reads it once:
opened without following a link and without blocking, only a regular file,
at most :data:`~agentx.messages.hooks.env_file.MAX_ENV_FILE_BYTES` bytes
(a FIFO, a link to ``/dev/zero`` or a 100 MB file sets nothing). The parsed
variables (:mod:`agentx.messages.hooks.env_file`) join the session's
environment, which Bash and later hooks get, never agentx's own; the
folder is removed right after. Each refusal is one WARN line.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from agentx.diagnostics import logger
from agentx.tools.child_env import CREDENTIAL_VARIABLES

NAME = "CLAUDE_ENV_FILE"


class SessionEnvFile:
    """One session's ``CLAUDE_ENV_FILE``; see the module docstring."""

    def __init__(
        self, apply: Callable[[Mapping[str, str]], None], secrets: Iterable[str] = ()
    ) -> None:
        self._apply = apply
        self._secrets = tuple(secrets)
        self._folder: Path | None = None

    def prepare(self) -> dict[str, str]:
        """A fresh empty file; the variable the event's command hooks get."""
        # DEC-CLI-3: tempfile (random, shutil, bz2, lzma) loads with the first
        # SessionStart command hook, never at start.
        import tempfile  # noqa: PLC0415

        self.discard()
        folder = Path(tempfile.mkdtemp(prefix="agentx-env-"))
        self._folder = folder
        path = folder / "env.sh"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        os.close(fd)
        return {NAME: str(path)}

    def collect(self) -> None:
        """Read the file once, apply what it sets, and remove the folder."""
        folder = self._folder
        if folder is None:
            return
        try:
            data = _read_bounded(folder / "env.sh")
        except OSError as exc:
            logger.warning("{}: cannot read it ({}); nothing is set", NAME, exc.strerror or exc)
            data = None
        finally:
            self.discard()
        if data is None:
            return
        from agentx.messages.hooks.env_file import parse_env_file  # noqa: PLC0415 - DEC-CLI-3

        parsed = parse_env_file(data, secrets=self._secrets, credential_names=CREDENTIAL_VARIABLES)
        for problem in parsed.refused:
            logger.warning("{}: {}", NAME, problem)
        if parsed.variables:
            self._apply(dict(parsed.variables))

    def discard(self) -> None:
        """Remove the folder: after each firing, whatever its hooks did (collect runs in a
        ``finally``), and before a new one is prepared."""
        folder, self._folder = self._folder, None
        if folder is not None:
            import shutil  # noqa: PLC0415 - loaded by prepare (tempfile), DEC-CLI-3

            shutil.rmtree(folder, ignore_errors=True)


def _read_bounded(path: Path) -> bytes | None:
    """At most one byte past the bound of a regular file, never blocking on
    a FIFO nor following a link; None (with a WARN line) for anything else."""
    from agentx.messages.hooks.env_file import MAX_ENV_FILE_BYTES  # noqa: PLC0415 - DEC-CLI-3

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            logger.warning("{}: not a regular file; nothing is set", NAME)
            return None
        chunks: list[bytes] = []
        left = MAX_ENV_FILE_BYTES + 1
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
