"""The MCP servers of a session's start: ``--mcp-config``, ``.mcp.json`` and
the settings (DEC-SET-2, DEC-CLI-7; precedence in :mod:`agentx.messages.mcp.sources`).

Every file goes through :func:`~agentx.config.start_files.read_start_file`
(a regular file after links, bounded, never a FIFO or a device, DECISIONS
section 8). Imported only when ``--mcp-config`` is given or a ``.mcp.json``
exists, so a session without either loads none of it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from agentx.config.settings import Settings
from agentx.config.start_files import START_FILE_LIMITS, StartFileError, read_start_file
from agentx.diagnostics import logger
from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.config import McpConfigError
from agentx.messages.mcp.sources import (
    StartServers,
    approvals_from,
    decode_config,
    start_servers,
)

#: Claude Code's project file of MCP servers, at the cwd.
PROJECT_FILE: Final = ".mcp.json"


def session_servers(
    settings: Settings,
    *,
    cwd: Path,
    configs: Sequence[str],
    strict: bool,
    sdk: bool,
) -> StartServers:
    """The servers to start. Raises :class:`McpConfigError` (one line naming
    the flag or file) for a value that cannot be used; ``sdk``: whether
    ``type: "sdk"`` servers may be named (the ``sdk`` profile)."""
    flag_configs = tuple(_flag_config(value, sdk=sdk) for value in configs)
    approvals = approvals_from((s.name, s.settings) for s in settings.sources)
    project: FrozenDict | None = None
    path = cwd / PROJECT_FILE
    if not strict and os.path.lexists(path):
        data = _read(path, PROJECT_FILE)
        project = decode_config(data, str(path), sdk=False, approvals=approvals)
    chosen = start_servers(
        settings_servers=FrozenDict() if strict else settings.mcp_servers,
        settings_scopes=settings.mcp_scopes,
        project_file=project,
        approvals=approvals,
        flag_configs=flag_configs,
        strict=strict,
    )
    for name in chosen.pending:
        logger.warning(
            "MCP server {} of {} is not started: it is not approved (enabledMcpjsonServers "
            "or enableAllProjectMcpServers in user or local settings approve it)",
            name,
            PROJECT_FILE,
        )
    return chosen


def _flag_config(value: str, *, sdk: bool) -> FrozenDict:
    """One ``--mcp-config``: JSON text when it starts with ``{``, else a file."""
    if value.lstrip().startswith("{"):
        return decode_config(value, "--mcp-config", sdk=sdk)
    return decode_config(_read(Path(value), "--mcp-config"), f"--mcp-config {value}", sdk=sdk)


def _read(path: Path, what: str) -> bytes:
    try:
        return read_start_file(path, START_FILE_LIMITS["mcp config"], what)
    except FileNotFoundError:
        raise McpConfigError(f"{what}: {os.fsdecode(path)}: no such file") from None
    except StartFileError as exc:
        raise McpConfigError(str(exc)) from None
