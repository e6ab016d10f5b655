"""Permission rules and modes, evaluated without IO (DEC-SET-2, DEC-PERM-MODE, DEC-TURN-3).

Rule grammar (DEC-SET-2, the spelling of Claude Code's settings):

- ``Tool`` matches every use of the tool.
- ``Bash(git status)`` matches that exact command; ``Bash(git status:*)`` matches
  the command and any command that continues it with more words. Both are
  matched on the parsed command line, each simple command and wrapper layer on
  its own (:mod:`agentx.messages.bash_rules`, DEC-PERM-PATH).
- ``Read(src/**)``, ``Edit(/abs/**)``: a path glob for the path tools (``Read``,
  ``Write``, ``Edit``, ``Glob``, ``Grep``). A relative glob is taken against the
  session cwd; ``**`` crosses directories, ``*`` and ``?`` do not. As in Claude
  Code, a ``Read`` rule (bare or with a glob) also governs ``Glob`` and
  ``Grep``, and an ``Edit`` rule also governs ``Write`` (DEC-PERM-PATH). Deny
  and ask globs match a path as the call spells it and where it resolves;
  allow globs and the boundary only where it resolves.
- ``WebFetch(domain:example.com)``, ``SandboxNetworkAccess(domain:example.com)``:
  a host (WIRE-PERM-023).
- ``mcp__server`` matches every tool of that MCP server (as does
  ``mcp__server__*``); ``mcp__server__tool`` matches one tool.

A specifier on any other tool never matches: a rule we cannot interpret grants
nothing.

Evaluation order (DEC-PERM-MODE: deny beats allow beats ask beats the mode):

1. a matching deny rule denies;
2. ``plan`` mode denies a tool that is not read-only, without asking;
3. a path outside the cwd and the added directories asks, carrying
   ``blocked_path`` (DEC-TURN-3), unless the mode is ``bypassPermissions`` or an
   allow rule's path glob names that path explicitly;
4. a matching allow rule allows, then a matching ask rule asks;
5. the mode decides: ``default`` allows read-only tools and asks for the rest,
   ``acceptEdits`` also allows ``Write``/``Edit``, ``plan`` allows read-only
   tools, ``bypassPermissions`` allows all.

What a tool may open while it runs (each file of a ``Grep`` walk, a ``Read``
target that changed since it was asked about) is decided by :func:`admit_path`.

Session updates (WIRE-PERM-022) are applied by :func:`apply_updates`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, Final, Literal, TypeGuard
from urllib.parse import urlsplit

from agentx.messages.bash_rules import allowing, deny_matches, opaque_reason
from agentx.messages.closed import closed_breach

Behavior = Literal["allow", "deny", "ask"]
Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions"]

MODES: Final[tuple[Mode, ...]] = ("default", "acceptEdits", "plan", "bypassPermissions")
BEHAVIORS: Final[tuple[Behavior, ...]] = ("allow", "deny", "ask")

#: Tools whose rule specifier is a path glob.
PATH_TOOLS: Final = frozenset({"Read", "Write", "Edit", "Glob", "Grep"})
#: Tools whose rule specifier is ``domain:<host>``.
NETWORK_TOOLS: Final = frozenset({"WebFetch", "SandboxNetworkAccess"})
#: Tools ``acceptEdits`` allows inside the working directories (DEC-PERM-MODE).
EDIT_TOOLS: Final = frozenset({"Write", "Edit"})
#: DEC-PERM-PATH: the tools a rule of the key tool governs besides itself.
_RULE_SCOPE: Final[Mapping[str, frozenset[str]]] = {
    "Read": frozenset({"Glob", "Grep"}),
    "Edit": frozenset({"Write"}),
}

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:__\*)?")
_RULE = re.compile(r"(?P<tool>[^()\s]+)(?:\((?P<content>.*)\))?", re.DOTALL)


class RuleError(ValueError):
    """A permission rule or update that does not follow the grammar."""


def is_mode(value: object) -> TypeGuard[Mode]:
    return value in MODES


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One parsed rule: ``tool_name`` with an optional ``content`` specifier."""

    tool_name: str
    content: str | None = None

    def __str__(self) -> str:
        return self.tool_name if self.content is None else f"{self.tool_name}({self.content})"


def parse_rule(text: str) -> Rule:
    """Parse ``Tool`` or ``Tool(specifier)``; raise :class:`RuleError` otherwise."""
    match = _RULE.fullmatch(text.strip())
    if match is None or not _TOOL_NAME.fullmatch(match["tool"]):
        raise RuleError(f"invalid permission rule {text!r}")
    content = match["content"]
    if content is not None and not content.strip():
        raise RuleError(f"empty specifier in permission rule {text!r}")
    return Rule(tool_name=match["tool"], content=content)


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRules:
    """The concatenated rule lists of every source plus session updates."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()

    @classmethod
    def parse(
        cls, *, allow: Iterable[str] = (), deny: Iterable[str] = (), ask: Iterable[str] = ()
    ) -> PermissionRules:
        return cls(
            allow=tuple(parse_rule(r) for r in allow),
            deny=tuple(parse_rule(r) for r in deny),
            ask=tuple(parse_rule(r) for r in ask),
        )

    def added(self, behavior: Behavior, rules: Sequence[Rule]) -> PermissionRules:
        current: tuple[Rule, ...] = getattr(self, behavior)
        fresh = tuple(r for r in rules if r not in current)
        return replace(self, **{behavior: current + fresh})


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """The outcome of :func:`evaluate`; ``blocked_path`` only on a boundary ask."""

    behavior: Behavior
    reason: str
    blocked_path: str | None = None


# --- matching ---------------------------------------------------------------


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a path glob: ``**`` spans directories, ``*``/``?`` stay inside one."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _path_matches(glob: str, path: PurePath, cwd: PurePath) -> bool:
    anchored = PurePath(glob) if PurePath(glob).is_absolute() else cwd / glob
    regex = _glob_regex(anchored.as_posix())
    # ``src/**`` also names the directory ``src`` itself.
    return bool(regex.fullmatch(path.as_posix()) or regex.fullmatch(path.as_posix() + "/"))


def governs(rule_tool: str, tool_name: str) -> bool:
    """DEC-PERM-PATH: ``Read`` rules govern Glob and Grep, ``Edit`` rules Write."""
    return rule_tool == tool_name or tool_name in _RULE_SCOPE.get(rule_tool, ())


def _host_of(tool_name: str, tool_input: Mapping[str, Any]) -> str | None:
    if tool_name == "SandboxNetworkAccess":
        host = tool_input.get("host")
        return host.lower() if isinstance(host, str) else None
    url = tool_input.get("url")
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host


def _bash_matches(spec: str, command: str, *, for_allow: bool) -> bool:
    """An allow rule must cover every simple command; a deny or ask rule one of them."""
    return allowing((spec,), command) is not None if for_allow else deny_matches(spec, command)


def _bash_allowed(rules: Sequence[Rule], tool_input: Mapping[str, Any]) -> str | None:
    """Bash allow rules together: each simple command allowed by one of them."""
    command = tool_input.get("command")
    specs = [r.content for r in rules if r.tool_name == "Bash" and r.content is not None]
    used = allowing(specs, command) if isinstance(command, str) and specs else None
    if used is None:
        return None
    return "allowed by rules " + ", ".join(f"Bash({spec})" for spec in used)


def _bash_note(rule: Rule, tool_input: Mapping[str, Any]) -> str:
    """Why a Bash deny or ask rule matched a command it cannot see through."""
    command = tool_input.get("command")
    if rule.tool_name != "Bash" or rule.content is None or not isinstance(command, str):
        return ""
    reason = opaque_reason(command)
    return "" if reason is None else f" (the command cannot be checked: {reason})"


def _mcp_matches(rule_tool: str, tool_name: str) -> bool:
    server_wide = rule_tool.removesuffix("__*")
    if rule_tool.count("__") == 1 or rule_tool.endswith("__*"):
        return tool_name.startswith(server_wide + "__")
    return False


def rule_matches(
    rule: Rule,
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    paths: Sequence[PurePath],
    cwd: PurePath,
    for_allow: bool,
) -> bool:
    """Whether ``rule`` covers this use of ``tool_name`` (see the module grammar)."""
    if not governs(rule.tool_name, tool_name):
        return (
            rule.content is None
            and rule.tool_name.startswith("mcp__")
            and _mcp_matches(rule.tool_name, tool_name)
        )
    if rule.content is None:
        return True
    spec = rule.content
    if tool_name == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and _bash_matches(spec, command, for_allow=for_allow)
    if tool_name in PATH_TOOLS:
        if not paths:
            return False
        hits = [_path_matches(spec, p, cwd) for p in paths]
        # An allow must cover every path touched; a deny or ask needs one.
        return all(hits) if for_allow else any(hits)
    if tool_name in NETWORK_TOOLS and spec.startswith("domain:"):
        host = _host_of(tool_name, tool_input)
        return host is not None and host == spec.removeprefix("domain:").strip().lower()
    return False


def _first_match(
    rules: Sequence[Rule],
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    paths: Sequence[PurePath],
    cwd: PurePath,
    for_allow: bool,
) -> Rule | None:
    for rule in rules:
        if rule_matches(rule, tool_name, tool_input, paths=paths, cwd=cwd, for_allow=for_allow):
            return rule
    return None


def _outside(path: PurePath, roots: Sequence[PurePath]) -> bool:
    return not any(path == root or path.is_relative_to(root) for root in roots)


def evaluate(
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    read_only: bool,
    paths: Sequence[PurePath],
    rules: PermissionRules,
    mode: Mode,
    cwd: PurePath,
    add_dirs: Sequence[PurePath] = (),
    named: Sequence[PurePath] = (),
) -> Decision:
    """Decide one tool use (DEC-PERM-MODE order; see the module docstring).

    ``paths`` and ``cwd``/``add_dirs`` must already be absolute and resolved
    (the tools resolve them); this function only compares them. ``named``
    holds the same paths as the call spelled them (absolute, normalized,
    symlinks not followed): deny and ask rules match either spelling, so a
    link cannot walk around a rule that names it; allow rules and the
    boundary see only where the call lands (DEC-PERM-PATH).
    """
    match_args: dict[str, Any] = {"paths": paths, "cwd": cwd}
    either: dict[str, Any] = {"paths": (*paths, *named), "cwd": cwd}
    denied = _first_match(rules.deny, tool_name, tool_input, for_allow=False, **either)
    if denied is not None:
        note = _bash_note(denied, tool_input)
        return Decision(behavior="deny", reason=f"denied by rule {denied}{note}")
    if mode == "plan" and not read_only:
        return Decision(behavior="deny", reason=f"{tool_name} is not read-only (plan mode)")
    roots = (cwd, *add_dirs)
    outside = [p for p in paths if _outside(p, roots)]
    if outside and mode != "bypassPermissions":
        granted = [
            r
            for r in rules.allow
            if r.content is not None
            and rule_matches(r, tool_name, tool_input, for_allow=True, paths=outside, cwd=cwd)
        ]
        if not granted:
            return Decision(
                behavior="ask",
                reason="path outside the working directories",
                blocked_path=str(outside[0]),
            )
    allowed = _first_match(rules.allow, tool_name, tool_input, for_allow=True, **match_args)
    if allowed is not None:
        return Decision(behavior="allow", reason=f"allowed by rule {allowed}")
    together = _bash_allowed(rules.allow, tool_input) if tool_name == "Bash" else None
    if together is not None:
        return Decision(behavior="allow", reason=together)
    asked = _first_match(rules.ask, tool_name, tool_input, for_allow=False, **either)
    if asked is not None:
        note = _bash_note(asked, tool_input)
        return Decision(behavior="ask", reason=f"rule {asked} asks{note}")
    if mode == "bypassPermissions":
        return Decision(behavior="allow", reason="bypassPermissions mode")
    if read_only:
        return Decision(behavior="allow", reason=f"read-only tool ({mode} mode)")
    if mode == "acceptEdits" and tool_name in EDIT_TOOLS:
        return Decision(behavior="allow", reason="acceptEdits mode")
    return Decision(behavior="ask", reason=f"{mode} mode asks for {tool_name}")


def admit_path(
    tool_name: str,
    path: PurePath,
    *,
    rules: PermissionRules,
    mode: Mode,
    cwd: PurePath,
    add_dirs: Sequence[PurePath] = (),
    granted: Sequence[PurePath] = (),
    granted_named: Sequence[PurePath] = (),
    named: Sequence[PurePath] = (),
) -> Decision:
    """DEC-PERM-PATH at run time: may this call open the resolved ``path``?

    ``granted`` holds the resolved paths the call was allowed for when it was
    evaluated (asked about or allowed by the rules), ``granted_named`` the
    call's own spellings of them; ``named`` the spellings of ``path`` before
    symlinks were followed, which deny and ask rules also match (as in
    :func:`evaluate`). Order:

    1. a matching deny rule denies, on either spelling (deny wins in every
       source);
    2. a granted path itself is allowed;
    3. outside the working directories, and outside every granted path that
       lies beyond them, asks with ``blocked_path``, unless the mode is
       ``bypassPermissions`` or an allow rule's glob names the path;
    4. a matching allow rule allows;
    5. an ask rule asks (on either spelling), unless it already matched a
       granted path (the ask was answered for this call);
    6. otherwise allowed: the call itself was allowed.
    """
    one = (path,)
    either = (path, *named)
    denied = _first_match(rules.deny, tool_name, {}, paths=either, cwd=cwd, for_allow=False)
    if denied is not None:
        return Decision(behavior="deny", reason=f"denied by rule {denied}")
    if path in granted:
        return Decision(behavior="allow", reason="granted for this call")
    roots = (cwd, *add_dirs)
    roots += tuple(g for g in granted if _outside(g, roots))
    explicit = [
        r
        for r in rules.allow
        if r.content is not None
        and rule_matches(r, tool_name, {}, paths=one, cwd=cwd, for_allow=True)
    ]
    if _outside(path, roots) and mode != "bypassPermissions" and not explicit:
        return Decision(
            behavior="ask",
            reason="path outside the working directories",
            blocked_path=str(path),
        )
    allowed = _first_match(rules.allow, tool_name, {}, paths=one, cwd=cwd, for_allow=True)
    if allowed is not None:
        return Decision(behavior="allow", reason=f"allowed by rule {allowed}")
    for rule in rules.ask:
        if rule_matches(rule, tool_name, {}, paths=either, cwd=cwd, for_allow=False) and not any(
            rule_matches(rule, tool_name, {}, paths=(g,), cwd=cwd, for_allow=False)
            for g in (*granted, *granted_named)
        ):
            return Decision(behavior="ask", reason=f"rule {rule} asks")
    return Decision(behavior="allow", reason="inside the working directories")


# --- session updates (WIRE-PERM-022) -----------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class AddRules:
    behavior: Behavior
    rules: tuple[Rule, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetMode:
    mode: Mode


PermissionUpdate = AddRules | SetMode


def _refuse_unknown(obj: Mapping[str, Any], allowed: frozenset[str], what: str) -> None:
    breach = closed_breach(obj, allowed)
    if breach is not None:
        raise RuleError(f"{what}: unexpected member {min(breach.unknown)!r}")


def parse_update(obj: object) -> PermissionUpdate:
    """Validate one closed WIRE-PERM-022 PermissionUpdate (destination session only)."""
    if not isinstance(obj, Mapping):
        raise RuleError("permission update must be an object")
    kind = obj.get("type")
    if obj.get("destination") != "session":
        raise RuleError("permission update destination must be 'session'")
    if kind == "setMode":
        _refuse_unknown(obj, frozenset({"type", "mode", "destination"}), "setMode")
        mode = obj.get("mode")
        if not is_mode(mode):
            raise RuleError("setMode: unknown mode")
        return SetMode(mode=mode)
    if kind != "addRules":
        raise RuleError("permission update type must be 'addRules' or 'setMode'")
    _refuse_unknown(obj, frozenset({"type", "rules", "behavior", "destination"}), "addRules")
    behavior = obj.get("behavior")
    if behavior not in BEHAVIORS:
        raise RuleError("addRules: behavior must be allow, deny or ask")
    raw_rules = obj.get("rules")
    if not isinstance(raw_rules, Sequence) or isinstance(raw_rules, str) or not raw_rules:
        raise RuleError("addRules: rules must be a non-empty array")
    return AddRules(behavior=behavior, rules=tuple(_parse_rule_value(r) for r in raw_rules))


def _parse_rule_value(obj: object) -> Rule:
    if not isinstance(obj, Mapping):
        raise RuleError("addRules: each rule must be an object")
    _refuse_unknown(obj, frozenset({"toolName", "ruleContent"}), "addRules rule")
    tool = obj.get("toolName")
    content = obj.get("ruleContent")
    if not isinstance(tool, str) or not _TOOL_NAME.fullmatch(tool):
        raise RuleError("addRules: toolName must be a tool name")
    if content is None:
        return Rule(tool_name=tool)
    if not isinstance(content, str) or not content.strip():
        raise RuleError("addRules: ruleContent must be a non-empty string")
    return Rule(tool_name=tool, content=content)


def apply_updates(
    rules: PermissionRules, mode: Mode, updates: Sequence[object]
) -> tuple[PermissionRules, Mode]:
    """Apply WIRE-PERM-022 updates to the session; all or nothing.

    Every update is validated before any is applied, so an invalid one raises
    :class:`RuleError` and leaves the caller's rules and mode as they were.
    """
    parsed = [parse_update(u) for u in updates]
    for update in parsed:
        if isinstance(update, SetMode):
            mode = update.mode
        else:
            rules = rules.added(update.behavior, update.rules)
    return rules, mode
