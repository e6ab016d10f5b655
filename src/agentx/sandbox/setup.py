"""The sandbox a session starts with (DEC-PERM-BASH-5, DEC-SET-1, DEC-CLI-6).

:func:`start_sandbox` reads the merged ``sandbox`` settings; when they turn
the sandbox on it refuses what cannot be enforced (a network allowlist:
:class:`SandboxStartError`, exit 2, one line), derives the one policy
(``agentx.messages.sandbox_policy``), picks the tier from the remembered
probe and makes the session's temporary folder. A tier below
``namespaces`` is one WARN line on stderr.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentx.config.settings import INLINE, Settings
from agentx.diagnostics import logger
from agentx.messages.sandbox_policy import derive_policy, refusal, rule_path_prefix
from agentx.sandbox.probe import cached_probe, find_bwrap
from agentx.sandbox.shell import Sandbox, session_tmp_dir


class SandboxStartError(Exception):
    """The sandbox is on but cannot be what the settings ask (exit 2)."""


def start_sandbox(
    settings: Settings, *, cwd: Path, add_dirs: tuple[Path, ...], home: Path, environ_home: str
) -> Sandbox | None:
    """The session's sandbox, or None when the settings leave it off."""
    config = settings.sandbox
    if not config.enabled:
        return None
    refused = refusal(config)
    if refused is not None:
        raise SandboxStartError(refused)
    read_denies = tuple(
        _rooted(prefix, rule.anchor)
        for rule in settings.rules.deny
        if rule.tool_name == "Read" and rule.content is not None
        for prefix in (rule_path_prefix(rule.content),)
        if prefix is not None
    )
    files = tuple(
        os.path.abspath(source.path) for source in settings.sources if source.path != INLINE
    )
    tmp_dir = session_tmp_dir()
    policy = derive_policy(
        config,
        cwd=str(cwd),
        add_dirs=tuple(str(d) for d in add_dirs),
        tmp_dir=str(tmp_dir),
        home=environ_home,
        read_deny_paths=read_denies,
        settings_files=files,
    )
    bwrap = find_bwrap(config.bwrap_path, policy.writable)
    probe = cached_probe(home, bwrap)
    if probe.tier != "namespaces":
        logger.warning("sandbox tier {}: {}", probe.tier, probe.reason)
    return Sandbox(config, policy, probe, tmp_dir)


def _rooted(prefix: str, anchor: str | None) -> str:
    """A rule's path with its anchor (DEC-PERM-PATH: ``~/`` at the home,
    ``/`` at its settings source's root) as an absolute ``//`` path."""
    if anchor is None or prefix.startswith("//"):
        return prefix
    if prefix.startswith("~/"):
        return "//" + os.path.join(anchor, prefix[2:]).lstrip("/")
    if prefix.startswith("/"):
        return "//" + os.path.join(anchor, prefix[1:]).lstrip("/")
    return prefix
