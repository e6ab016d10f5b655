"""The sandbox settings and the one policy derived from them (DEC-PERM-BASH-5,
DEC-SET-1, DEC-SET-2, DECISIONS section 8).

Permission rules on program names are a policy, not a boundary
(DEC-PERM-BASH-5); the sandbox is the boundary, and this core is its single
policy, shared by the Bash sandbox (``agentx.sandbox``) and the file tools so
the two can never disagree. Nothing here touches the file system: paths come
in already made absolute (``home`` and ``cwd`` are arguments) and lexically
normal; the IO side resolves symlinks.

* :func:`parse_sandbox` reads the ``sandbox`` block of the effective
  settings, the keys Claude Code's SDKs send (``enabled``,
  ``failIfUnavailable``, ``autoAllowBashIfSandboxed``, ``excludedCommands``,
  ``allowUnsandboxedCommands``, ``filesystem``, ``network``,
  ``ignoreViolations``, ``enableWeakerNestedSandbox``) and agentx's own
  ``bwrapPath``; a wrong type is a
  :class:`SandboxSettingsError` naming the key (exit 2). Off unless
  ``enabled`` is true, as in Claude Code.
* :func:`refusal` is the start-up refusal of what this sandbox cannot
  enforce: a network allowlist or a proxy port needs a host-side proxy,
  which agentx does not run, so it is refused loudly, never ignored.
* :func:`derive_policy`: writable roots = cwd, every ``--add-dir``, the
  session's temporary folder (exported as ``TMPDIR``) and
  ``filesystem.allowWrite``; read denies = ``filesystem.denyRead`` plus the
  paths of ``Read(...)`` deny rules; protected paths that stay read-only
  inside the writable roots = ``.git/hooks``, ``.git/config`` and
  ``.agentx`` of each root, the settings files, and
  ``filesystem.denyWrite``; the network is off.
* :func:`writable` is the decision the file tools apply to a resolved path.
* :func:`runs_unsandboxed`: ``excludedCommands`` matched on the parsed
  command line, and ``dangerouslyDisableSandbox`` where
  ``allowUnsandboxedCommands`` allows it (the permission prompt has already
  seen that input: it is never an automatic rerun).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from msgspec import Struct

#: The keys the sandbox block may hold (the SDKs' ``SandboxSettings``), by type.
_BOOLS: Final = (
    "enabled",
    "failIfUnavailable",
    "autoAllowBashIfSandboxed",
    "allowUnsandboxedCommands",
    "enableWeakerNestedSandbox",
)
_FS_LISTS: Final = ("allowWrite", "denyWrite", "denyRead", "allowRead")
_NET_LISTS: Final = ("allowedDomains", "deniedDomains", "allowUnixSockets", "allowMachLookup")
_NET_BOOLS: Final = (
    "allowAllUnixSockets",
    "allowLocalBinding",
    "allowManagedDomainsOnly",
    "strictAllowlist",
)
_NET_PORTS: Final = ("httpProxyPort", "socksProxyPort")
#: Inside every writable root, what stays read-only.
PROTECTED_NAMES: Final = (".git/hooks", ".git/config", ".agentx")

Tier = Literal["namespaces", "landlock", "none"]


class SandboxRefused(Exception):
    """A command the sandbox will not run; the message is its tool result."""


class SandboxSettingsError(ValueError):
    """A ``sandbox`` settings value of the wrong type; the message names the key."""


class SandboxSettings(Struct, frozen=True, kw_only=True):
    enabled: bool = False
    fail_if_unavailable: bool = False
    auto_allow: bool = False
    excluded_commands: tuple[str, ...] = ()
    allow_unsandboxed: bool = True
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    proxy_ports: tuple[str, ...] = ()
    bwrap_path: str | None = None


def _strings(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, tuple) or not all(isinstance(v, str) for v in value):
        raise SandboxSettingsError(f"sandbox.{key} must be an array of strings")
    return value


def _object(value: object, key: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SandboxSettingsError(f"sandbox.{key} must be an object")
    return value


def parse_sandbox(value: object) -> SandboxSettings:
    """The ``sandbox`` settings block (None or absent: the sandbox is off)."""
    if value is None:
        return SandboxSettings()
    block = _object(value, "")
    for key in _BOOLS:
        if key in block and not isinstance(block[key], bool):
            raise SandboxSettingsError(f"sandbox.{key} must be a boolean")
    excluded = _strings(block.get("excludedCommands", ()), "excludedCommands")
    fs = _object(block.get("filesystem", {}), "filesystem")
    fs_lists = {key: _strings(fs.get(key, ()), f"filesystem.{key}") for key in _FS_LISTS}
    net = _object(block.get("network", {}), "network")
    net_lists = {key: _strings(net.get(key, ()), f"network.{key}") for key in _NET_LISTS}
    for key in _NET_BOOLS:
        if key in net and not isinstance(net[key], bool):
            raise SandboxSettingsError(f"sandbox.network.{key} must be a boolean")
    ports = []
    for key in _NET_PORTS:
        port = net.get(key)
        if port is None:
            continue
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise SandboxSettingsError(f"sandbox.network.{key} must be a port number")
        ports.append(key)
    bwrap_path = block.get("bwrapPath")
    if bwrap_path is not None and (not isinstance(bwrap_path, str) or not bwrap_path):
        raise SandboxSettingsError("sandbox.bwrapPath must be a path")
    ignore = block.get("ignoreViolations", {})
    for pattern, texts in _object(ignore, "ignoreViolations").items():
        _strings(texts, f"ignoreViolations.{pattern}")
    return SandboxSettings(
        enabled=block.get("enabled", False),
        fail_if_unavailable=block.get("failIfUnavailable", False),
        auto_allow=block.get("autoAllowBashIfSandboxed", False),
        excluded_commands=excluded,
        allow_unsandboxed=block.get("allowUnsandboxedCommands", True),
        allow_write=fs_lists["allowWrite"],
        deny_write=fs_lists["denyWrite"],
        deny_read=fs_lists["denyRead"],
        allowed_domains=net_lists["allowedDomains"],
        proxy_ports=tuple(ports),
        bwrap_path=bwrap_path,
    )


def refusal(settings: SandboxSettings) -> str | None:
    """Why this sandbox cannot start as configured (exit 2), or None."""
    if not settings.enabled:
        return None
    if settings.allowed_domains:
        return (
            "sandbox.network.allowedDomains needs a network proxy, which agentx does not"
            " run: remove it (sandboxed commands then have no network)"
        )
    if settings.proxy_ports:
        return (
            f"sandbox.network.{settings.proxy_ports[0]} is not supported: sandboxed"
            " commands have no network at all"
        )
    return None


class SandboxPolicy(Struct, frozen=True, kw_only=True):
    """What every sandboxed command may do (absolute, lexically normal paths)."""

    writable: tuple[str, ...]
    read_denied: tuple[str, ...]
    protected: tuple[str, ...]
    network: bool = False


def absolute(path: str, *, cwd: str, home: str) -> str:
    """A settings path made absolute: ``//x`` is ``/x``, ``~/x`` is under
    ``home``, ``/x`` and ``x`` are under ``cwd`` (the project), as the
    sandbox path forms of Claude Code's settings."""
    if path.startswith("//"):
        joined = "/" + path.lstrip("/")
    elif path == "~" or path.startswith("~/"):
        joined = posixpath.join(home, path[2:])
    else:
        joined = posixpath.join(cwd, path.lstrip("/"))
    return posixpath.normpath(joined)


def _unique(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))


def derive_policy(
    settings: SandboxSettings,
    *,
    cwd: str,
    add_dirs: tuple[str, ...],
    tmp_dir: str,
    home: str,
    read_deny_paths: tuple[str, ...],
    settings_files: tuple[str, ...],
) -> SandboxPolicy:
    """The one policy (see the module docstring); every argument absolute."""

    def norm(path: str) -> str:
        return absolute(path, cwd=cwd, home=home)

    roots = _unique(
        posixpath.normpath(p)
        for p in (cwd, *add_dirs, tmp_dir, *(norm(p) for p in settings.allow_write))
    )
    protected = _unique(
        (
            *(
                posixpath.join(root, name)
                for root in roots
                if root != tmp_dir
                for name in PROTECTED_NAMES
            ),
            *(posixpath.normpath(p) for p in settings_files),
            *(norm(p) for p in settings.deny_write),
        )
    )
    denied = _unique((*(norm(p) for p in settings.deny_read), *(norm(p) for p in read_deny_paths)))
    return SandboxPolicy(writable=roots, read_denied=denied, protected=protected)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def rule_path_prefix(pattern: str) -> str | None:
    """The path a ``Read(...)`` deny pattern covers at most: everything before
    its first wildcard, as a folder (``~/.ssh/**`` is ``~/.ssh``); None when
    the pattern starts with a wildcard (the file tools alone enforce it)."""
    cut = min((i for i, c in enumerate(pattern) if c in "*?["), default=len(pattern))
    head = pattern[:cut]
    if cut < len(pattern):
        head = head.rsplit("/", 1)[0] if "/" in head else ""
    head = head.rstrip("/") or ("/" if head.startswith("/") else "")
    if not head or head in ("/", "//", "~", ".", "./"):
        return None
    return head


def writable(policy: SandboxPolicy, path: str) -> bool:
    """Whether a sandboxed command may write ``path`` (resolved, absolute):
    inside a writable root and outside every protected path."""
    return any(_inside(path, root) for root in policy.writable) and not any(
        _inside(path, p) for p in policy.protected
    )


#: An ``excludedCommands`` entry: a program name, optionally followed by
#: `` *`` or ``:*`` (Claude Code's spellings of "with any arguments"); a
#: source ``re`` compiles on first use, not at import (start-up, DEC-CLI-3).
_EXCLUDED: Final = r"(?P<name>[^\s:*]+)(?:\s*\*|:\*)?"


def excluded_names(entries: tuple[str, ...]) -> frozenset[str]:
    """The program names of ``excludedCommands`` (an entry of another shape
    excludes nothing: sandboxed is the safe side)."""
    names = set()
    for entry in entries:
        match = re.fullmatch(_EXCLUDED, entry.strip())
        if match is not None:
            names.add(match["name"])
    return frozenset(names)


def runs_unsandboxed(settings: SandboxSettings, command: str, *, disable_requested: bool) -> bool:
    """Whether ``command`` runs outside the sandbox: ``dangerouslyDisableSandbox``
    when ``allowUnsandboxedCommands`` allows it, else when every program of
    every simple command of the parsed line (each wrapper layer too, the
    shell of a ``-c`` body too) is an excluded command. A line the parser
    cannot see through runs sandboxed."""
    if disable_requested and settings.allow_unsandboxed:
        return True
    names = excluded_names(settings.excluded_commands)
    if not names:
        return False
    # The Bash line cores load with the first command checked (DEC-CLI-3).
    from agentx.messages.bash.commands import CommandLine, parse_command_line  # noqa: PLC0415

    parsed = parse_command_line(command)
    if not isinstance(parsed, CommandLine) or not parsed.commands:
        return False
    for simple in parsed.commands:
        for start in simple.starts:
            program = simple.argv[start].value
            if program is None or program not in names:
                return False
    return True
