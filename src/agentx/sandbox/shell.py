"""The session's sandbox: how each Bash child is started (DEC-PERM-BASH-5,
DEC-EXIT-1).

agentx itself stays unconfined (it needs the model API, the store, the MCP
pipes); every Bash child, foreground and background, starts through
:meth:`Sandbox.command`, which wraps ``/bin/bash -c COMMAND`` for the tier
the probe chose (``agentx.sandbox.probe``):

* ``namespaces``: bubblewrap with its own user, PID, IPC, UTS and network
  namespaces, ``--die-with-parent`` and ``--new-session``, ``/`` read-only,
  a private ``/tmp``, ``/proc`` and ``/dev`` of its own, the writable roots
  bound writable, the protected paths that exist bound read-only over them,
  the denied paths hidden; the exec helper inside it adds no_new_privs,
  seccomp and Landlock (best-effort by ABI).
* ``landlock``: the exec helper alone (Landlock required).
* ``none``: with ``failIfUnavailable`` the command is refused
  (:class:`SandboxRefused`, whose text is the tool result); without it, it
  runs unconfined, as the session reported at start.

Every command sees ``TMPDIR`` set to the session's own temporary folder,
one of the writable roots, removed with the session (:meth:`close`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.sandbox_policy import (
    SandboxPolicy,
    SandboxRefused,
    SandboxSettings,
    Tier,
    runs_unsandboxed,
    writable,
)
from agentx.sandbox.probe import NAMESPACE_FLAGS, Probe, helper_argv, private_tmp

SHELL: Final = "/bin/bash"


def _existing(paths: tuple[str, ...]) -> tuple[str, ...]:
    """Each path that exists, resolved (a symlinked ``.git`` is protected where
    it points), without duplicates."""
    found: dict[str, None] = {}
    for path in paths:
        if os.path.lexists(path):
            found.setdefault(os.path.realpath(path), None)
            if os.path.islink(path):
                found.setdefault(path, None)
    return tuple(found)


class Sandbox:
    """One session's sandbox; see the module docstring."""

    def __init__(
        self, settings: SandboxSettings, policy: SandboxPolicy, probe: Probe, tmp_dir: Path
    ) -> None:
        self.settings = settings
        self.policy = policy
        self.probe = probe
        self.tmp_dir = tmp_dir

    @property
    def tier(self) -> Tier:
        return self.probe.tier

    def report(self) -> FrozenDict:
        """``sandbox`` of ``system/init`` and the ``initialize`` response."""
        confined = self.tier != "none"
        value: FrozenDict = freeze(
            {
                "enabled": True,
                "tier": self.tier,
                "network": "off" if confined else "unrestricted",
                "reason": self.probe.reason,
            }
        )
        return value

    def command(
        self, command: str, env: Mapping[str, str], *, disable_requested: bool = False
    ) -> tuple[list[str], dict[str, str]]:
        """The argv and environment that run ``command`` in this sandbox
        (outside it for an excluded command or an allowed
        ``dangerouslyDisableSandbox``: ``runs_unsandboxed``)."""
        shell = [SHELL, "-c", command]
        child_env = {**env, "TMPDIR": str(self.tmp_dir)}
        if runs_unsandboxed(self.settings, command, disable_requested=disable_requested):
            return shell, dict(env)
        if self.tier == "none":
            if self.settings.fail_if_unavailable:
                raise SandboxRefused(
                    "Bash: refused: the sandbox is unavailable on this machine"
                    f" ({self.probe.reason}) and sandbox.failIfUnavailable is set"
                )
            return shell, dict(env)
        writable = _existing(self.policy.writable)
        protected = _existing(self.policy.protected)
        denied = _existing(self.policy.read_denied)
        options = ["--network", "on" if self.policy.network else "off"]
        options += ["--landlock", "required" if self.tier == "landlock" else "best-effort"]
        for root in writable:
            options += ["--write", root]
        for path in denied:
            options += ["--deny-read", path]
        confined = [*helper_argv(), *options, "--", *shell]
        if self.tier == "landlock":
            return confined, child_env
        assert self.probe.bwrap is not None
        argv = [self.probe.bwrap, *NAMESPACE_FLAGS]
        argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *private_tmp()]
        for root in writable:
            argv += ["--bind", root, root]
        for path in protected:
            if not os.path.islink(path):
                argv += ["--ro-bind", path, path]
        for path in denied:
            if os.path.isdir(path):
                argv += ["--tmpfs", path, "--remount-ro", path]
            else:
                argv += ["--ro-bind", "/dev/null", path]
        return [*argv, "--", *confined], child_env

    def auto_allows(self, tool_input: Mapping[str, object]) -> bool:
        """``autoAllowBashIfSandboxed``: whether this Bash input will run
        confined (a tier is in force, the command is not excluded and does
        not ask to leave the sandbox), so it needs no permission prompt."""
        command = tool_input.get("command")
        if not self.settings.auto_allow or self.tier == "none" or not isinstance(command, str):
            return False
        disable = tool_input.get("dangerouslyDisableSandbox") is True
        return not runs_unsandboxed(self.settings, command, disable_requested=disable)

    def may_write(self, path: Path) -> bool:
        """The write decision of the file tools for a resolved ``path``: what a
        sandboxed command may write (the roots and protected paths resolved
        as the tiers resolve them), whatever the tier."""
        resolved = SandboxPolicy(
            writable=tuple(os.path.realpath(p) for p in self.policy.writable),
            read_denied=(),
            protected=_existing(self.policy.protected),
        )
        return writable(resolved, str(path))

    def close(self) -> None:
        """Remove the session's temporary folder."""
        shutil.rmtree(self.tmp_dir, ignore_errors=True)


def session_tmp_dir() -> Path:
    """A new private temporary folder for one session's commands."""
    return Path(tempfile.mkdtemp(prefix="agentx-sandbox-"))
