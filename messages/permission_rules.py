"""Permission rules and modes: the grammar and what a rule matches (DEC-SET-2,
DEC-PERM-PATH, DEC-PERM-MODE).

Rule grammar (DEC-SET-2, the spelling of Claude Code's settings):

- ``Tool`` matches every use of the tool.
- ``Bash(git status)`` matches that exact command; ``Bash(git status:*)`` matches
  the command and any command that continues it with more words. Both are
  matched on the parsed command line, each simple command and wrapper layer on
  its own (:mod:`agentx.messages.bash.rules`, DEC-PERM-PATH).
- ``Bash(curl *)`` is ``Bash(curl:*)``; a ``*`` anywhere else
  (``Bash(git * main)``, ``Bash(* --version)``) matches any text, spaces
  included, against each simple command; ``Bash(*)`` is ``Bash``.
- ``Read(src/**)``, ``Read(~/.ssh/**)``, ``Edit(//etc/**)``, ``Read(/docs)``,
  ``Read(.env)``: a gitignore pattern for the path tools (``Read``, ``Write``,
  ``Edit``, ``Glob``, ``Grep``), rooted as Claude Code roots it
  (:mod:`agentx.messages.path_rules`). As in Claude Code, a ``Read`` rule (bare
  or with a pattern) also governs ``Glob`` and ``Grep``, and an ``Edit`` rule
  also governs ``Write`` (DEC-PERM-PATH). Deny and ask patterns match a path as
  the call spells it and where it resolves; allow patterns and the boundary
  only where it resolves.
- ``WebFetch(domain:example.com)``, ``SandboxNetworkAccess(domain:example.com)``:
  a host (WIRE-PERM-023).
- ``mcp__server`` matches every tool of that MCP server (as does
  ``mcp__server__*``); ``mcp__server__tool`` matches one tool.

A rule that can match nothing (a specifier on a tool that takes none, a
``WebFetch`` specifier without ``domain:``, a path pattern with ``..``...) is
named by :func:`rule_problem`; the settings loader refuses it at start-up, so
no deny rule is ever a silent no-op.

:mod:`agentx.messages.permission_decisions` decides a tool use with these
rules and the mode; :mod:`agentx.messages.permission_updates` applies the
session's updates (WIRE-PERM-022).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any, Final, Literal, TypeGuard
from urllib.parse import urlsplit

from msgspec import Struct
from msgspec.structs import replace

Behavior = Literal["allow", "deny", "ask"]
#: What settled a :class:`Decision` (DEC-PERM-MODE's steps): a rule, the
#: mode, the working-directory boundary (DEC-TURN-3), the sandbox
#: (``autoAllowBashIfSandboxed``, or a path it keeps read-only), or the
#: call's own grant (DEC-PERM-PATH). Carried, never read back from the
#: reason's text.
#: ``tool``: the tool's own need (``AskUserQuestion`` asks whatever the mode).
DecisionSource = Literal["rule", "mode", "boundary", "sandbox", "grant", "tool"]
Mode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]

MODES: Final[tuple[Mode, ...]] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
    "auto",
)
BEHAVIORS: Final[tuple[Behavior, ...]] = ("allow", "deny", "ask")

#: Tools whose rule specifier is a path glob.
PATH_TOOLS: Final = frozenset({"Read", "Write", "Edit", "NotebookEdit", "Glob", "Grep"})
#: Tools whose rule specifier is ``domain:<host>``.
NETWORK_TOOLS: Final = frozenset({"WebFetch", "SandboxNetworkAccess"})
#: Tools ``acceptEdits`` allows inside the working directories (DEC-PERM-MODE).
EDIT_TOOLS: Final = frozenset({"Write", "Edit", "NotebookEdit"})
#: DEC-PERM-PATH: the tools a rule of the key tool governs besides itself.
_RULE_SCOPE: Final[Mapping[str, frozenset[str]]] = {
    "Read": frozenset({"Glob", "Grep"}),
    "Edit": frozenset({"Write", "NotebookEdit"}),
}

TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:__\*)?")
_RULE = re.compile(r"(?P<tool>[^()\s]+)(?:\((?P<content>.*)\))?", re.DOTALL)


class RuleError(ValueError):
    """A permission rule or update that does not follow the grammar."""


def is_mode(value: object) -> TypeGuard[Mode]:
    return value in MODES


class Rule(Struct, frozen=True, kw_only=True):
    """One parsed rule: ``tool_name`` with an optional ``content`` specifier."""

    tool_name: str
    content: str | None = None
    #: The folder a ``~/`` or ``/`` path pattern is rooted at: the home
    #: directory, or the root of the settings source that holds the rule
    #: (``None``: the session cwd). See :mod:`agentx.messages.path_rules`.
    anchor: str | None = None

    def __str__(self) -> str:
        return self.tool_name if self.content is None else f"{self.tool_name}({self.content})"


def parse_rule(text: str, *, root: str | None = None, home: str | None = None) -> Rule:
    """Parse ``Tool`` or ``Tool(specifier)``; raise :class:`RuleError` otherwise.

    ``root`` is the root of the settings source the rule comes from and
    ``home`` the user's home directory, for a ``/`` or ``~/`` path pattern.
    """
    match = _RULE.fullmatch(text.strip())
    if match is None or not TOOL_NAME.fullmatch(match["tool"]):
        raise RuleError(f"invalid permission rule {text!r}")
    content = match["content"]
    if content is not None and not content.strip():
        raise RuleError(f"empty specifier in permission rule {text!r}")
    return anchored(Rule(tool_name=match["tool"], content=content), root=root, home=home)


def anchored(rule: Rule, *, root: str | None, home: str | None) -> Rule:
    """``rule`` with its ``/`` or ``~/`` path pattern rooted (DEC-PERM-PATH)."""
    if rule.tool_name not in PATH_TOOLS or rule.content is None or rule.anchor is not None:
        return rule
    # DEC-CLI-3: the path grammar loads with the first path rule or path check.
    from agentx.messages.path_rules import rooted  # noqa: PLC0415

    kind = rooted(rule.content)
    anchor = home if kind == "home" else root if kind == "source" else None
    return rule if anchor is None else replace(rule, anchor=anchor)


def rule_problem(rule: Rule) -> str | None:
    """Why ``rule`` can match no tool use; ``None`` when it can (DEC-SET-2)."""
    tool, content = rule.tool_name, rule.content
    if content is None:
        return None
    if tool == "Bash":
        from agentx.messages.bash.rules import bash_rule_problem  # noqa: PLC0415 - DEC-CLI-3

        return bash_rule_problem(content)
    if tool in PATH_TOOLS:
        from agentx.messages.path_rules import path_problem  # noqa: PLC0415 - DEC-CLI-3

        return path_problem(content)
    if tool in NETWORK_TOOLS:
        host = content.removeprefix("domain:").strip() if content.startswith("domain:") else ""
        return None if host else f"{tool} rules take domain:<host>"
    if tool == "Skill":
        # DEC-TURN-3: ``Skill(name)`` is one skill (the Python SDK's skills option).
        return None if content.strip() else "Skill rules take a skill name"
    if tool.startswith("mcp__"):
        return "an MCP rule takes no specifier"
    return f"{tool} rules take no specifier"


class PermissionRules(Struct, frozen=True, kw_only=True):
    """The concatenated rule lists of every source plus session updates."""

    allow: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()

    @classmethod
    def parse(
        cls,
        *,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        ask: Iterable[str] = (),
        root: str | None = None,
        home: str | None = None,
    ) -> PermissionRules:
        where = {"root": root, "home": home}
        return cls(
            allow=tuple(parse_rule(r, **where) for r in allow),
            deny=tuple(parse_rule(r, **where) for r in deny),
            ask=tuple(parse_rule(r, **where) for r in ask),
        )

    def __add__(self, other: PermissionRules) -> PermissionRules:
        """Two sources' rules, concatenated (DEC-SET-1)."""
        return PermissionRules(
            allow=self.allow + other.allow, deny=self.deny + other.deny, ask=self.ask + other.ask
        )

    def fully_denies(self, tool_name: str) -> bool:
        """A deny rule without a specifier covers every use of ``tool_name``
        (``Edit`` also covers ``Write``): such a tool is not offered to the
        model at all, as Claude Code does (DEC-CLI-5 ``--disallowedTools``)."""
        return any(r.content is None and governs(r.tool_name, tool_name) for r in self.deny)

    def added(self, behavior: Behavior, rules: Sequence[Rule]) -> PermissionRules:
        current: tuple[Rule, ...] = getattr(self, behavior)
        fresh = tuple(r for r in rules if r not in current)
        return replace(self, **{behavior: current + fresh})


class Decision(Struct, frozen=True, kw_only=True):
    """The outcome of :func:`evaluate`; ``blocked_path`` only on a boundary ask."""

    behavior: Behavior
    #: Which step decided: every decision names it.
    source: DecisionSource
    reason: str
    blocked_path: str | None = None


# --- matching ---------------------------------------------------------------


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
    """An allow rule must cover every simple command; a deny or ask rule one of
    them. The Bash line cores load with the first Bash rule used (DEC-CLI-3)."""
    from agentx.messages.bash.rules import allowing, deny_matches  # noqa: PLC0415

    return allowing((spec,), command) is not None if for_allow else deny_matches(spec, command)


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
    if rule.content is None or (rule.tool_name == "Bash" and rule.content.strip() == "*"):
        return True
    spec = rule.content
    if tool_name == "Bash":
        command = tool_input.get("command")
        return isinstance(command, str) and _bash_matches(spec, command, for_allow=for_allow)
    if tool_name in PATH_TOOLS:
        if not paths:
            return False
        from agentx.messages.path_rules import path_matches  # noqa: PLC0415 - DEC-CLI-3

        hits = [path_matches(spec, rule.anchor, p, cwd, for_allow=for_allow) for p in paths]
        # An allow must cover every path touched; a deny or ask needs one.
        return all(hits) if for_allow else any(hits)
    if tool_name == "Skill":
        skill = tool_input.get("skill")
        return isinstance(skill, str) and skill.strip().removeprefix("/") == spec.strip()
    if tool_name in NETWORK_TOOLS and spec.startswith("domain:"):
        host = _host_of(tool_name, tool_input)
        return host is not None and host == spec.removeprefix("domain:").strip().lower()
    return False
