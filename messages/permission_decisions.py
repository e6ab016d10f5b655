"""Permission decisions, without IO (DEC-PERM-MODE, DEC-PERM-PATH, DEC-TURN-3).

Evaluation order (DEC-PERM-MODE: deny beats allow beats ask beats the mode):

1. a matching deny rule denies;
1a. a tool only the user can answer (``AskUserQuestion``) always asks, in
   every mode and whatever the allow rules say (``dontAsk`` denies it);
   input outside its bounds is denied without asking;
2. ``plan`` mode denies a tool that is not read-only, without asking;
3. a path outside the cwd and the added directories asks, carrying
   ``blocked_path`` (DEC-TURN-3), unless the mode is ``bypassPermissions`` or an
   allow rule's path glob names that path explicitly;
4. a matching allow rule allows, then a matching ask rule asks;
4a. a Bash command the sandbox confines allows when the settings say
   ``autoAllowBashIfSandboxed`` (``bash_sandboxed``, DEC-PERM-BASH-5);
4b. in ``acceptEdits`` (and ``auto``) a Bash line made only of file
   commands whose every path the file tools would be allowed to edit
   (``bash_edits``: :mod:`agentx.messages.bash.accept_edits` reads the line,
   the caller admits each path) allows, as Claude Code's acceptEdits allows
   its common filesystem commands;
5. the mode decides: ``default`` allows read-only tools and asks for the rest,
   ``acceptEdits`` also allows ``Write``/``Edit``, ``plan`` allows read-only
   tools, ``bypassPermissions`` allows all;
6. ``dontAsk`` turns every ask of the steps above into a deny (only what a
   rule or the mode allows runs, nobody is asked); ``auto`` is agentx's
   auto mode without Claude Code's classifier: it allows exactly what
   ``acceptEdits`` allows and asks for the rest (never more without asking).

What a tool may open while it runs (each file of a ``Grep`` walk, a ``Read``
target that changed since it was asked about) is decided by :func:`admit_path`.
:func:`deny_before_run` is the last check every tool use passes right before
it runs, on the input it runs with (DEC-SET-1, DEC-PERM-MODE): whatever
replaced the input since it was evaluated (a host's ``updatedInput``, a hook,
any later source), a deny rule of any source still denies it.
The rule grammar and what a rule matches are :mod:`agentx.messages.permission_rules`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from agentx.messages.permission_rules import (
    EDIT_TOOLS,
    Decision,
    Mode,
    PermissionRules,
    Rule,
    rule_matches,
)


def _bash_allowed(rules: Sequence[Rule], tool_input: Mapping[str, Any]) -> str | None:
    """Bash allow rules together: each simple command allowed by one of them."""
    from agentx.messages.bash.rules import allowing  # noqa: PLC0415 - DEC-CLI-3

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
    from agentx.messages.bash.rules import opaque_reason  # noqa: PLC0415 - DEC-CLI-3

    reason = opaque_reason(command)
    return "" if reason is None else f" (the command cannot be checked: {reason})"


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


def _evaluate(
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    read_only: bool,
    paths: Sequence[PurePath],
    rules: PermissionRules,
    mode: Mode,
    cwd: PurePath,
    add_dirs: Sequence[PurePath],
    named: Sequence[PurePath],
    bash_sandboxed: bool,
    bash_edits: bool,
) -> Decision:
    match_args: dict[str, Any] = {"paths": paths, "cwd": cwd}
    either: dict[str, Any] = {"paths": (*paths, *named), "cwd": cwd}
    denied = _first_match(rules.deny, tool_name, tool_input, for_allow=False, **either)
    if denied is not None:
        note = _bash_note(denied, tool_input)
        return Decision(behavior="deny", source="rule", reason=f"denied by rule {denied}{note}")
    if tool_name in USER_INTERACTION_TOOLS:
        return _user_interaction(tool_name, tool_input)
    if mode == "plan" and not read_only:
        return Decision(
            behavior="deny", source="mode", reason=f"{tool_name} is not read-only (plan mode)"
        )
    outside = tuple(p for p in paths if _outside(p, (cwd, *add_dirs)))
    boundary = _boundary(tool_name, tool_input, outside, rules=rules, mode=mode, cwd=cwd)
    if boundary is not None:
        return boundary
    allowed = _first_match(rules.allow, tool_name, tool_input, for_allow=True, **match_args)
    if allowed is not None:
        return Decision(behavior="allow", source="rule", reason=f"allowed by rule {allowed}")
    together = _bash_allowed(rules.allow, tool_input) if tool_name == "Bash" else None
    if together is not None:
        return Decision(behavior="allow", source="rule", reason=together)
    asked = _first_match(rules.ask, tool_name, tool_input, for_allow=False, **either)
    if asked is not None:
        note = _bash_note(asked, tool_input)
        return Decision(behavior="ask", source="rule", reason=f"rule {asked} asks{note}")
    if tool_name == "Bash" and bash_sandboxed:
        return Decision(
            behavior="allow",
            source="sandbox",
            reason="the sandbox confines it (autoAllowBashIfSandboxed)",
        )
    if tool_name == "Bash" and bash_edits and mode in ("acceptEdits", "auto"):
        return Decision(
            behavior="allow",
            source="mode",
            reason=f"{mode} mode: file commands inside the working directories",
        )
    return _by_mode(tool_name, read_only=read_only, mode=mode)


#: Tools only the user can answer: they always ask (no mode nor allow rule
#: answers for the user), after the deny rules (DEC-PERM-MODE).
USER_INTERACTION_TOOLS = frozenset({"AskUserQuestion"})
#: DEC-PERM-MODE: read-only tools that still ask when no rule decides (as in
#: Claude Code: a web search sends the query out; plan mode lets it ask).
ASKING_READ_ONLY_TOOLS = frozenset({"WebSearch"})


def _user_interaction(tool_name: str, tool_input: Mapping[str, Any]) -> Decision:
    """``AskUserQuestion``: input outside Claude Code's bounds is denied
    without asking anyone; valid questions are put to the user."""
    from agentx.messages.user_questions import questions_problem  # noqa: PLC0415

    problem = questions_problem(tool_input)
    if problem is not None:
        return Decision(
            behavior="deny", source="tool", reason=f"{tool_name}: invalid input: {problem}"
        )
    return Decision(behavior="ask", source="tool", reason=f"{tool_name} needs the user's answers")


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
    bash_sandboxed: bool = False,
    bash_edits: bool = False,
) -> Decision:
    """Decide one tool use (DEC-PERM-MODE order; see the module docstring).

    ``paths`` and ``cwd``/``add_dirs`` must already be absolute and resolved
    (the tools resolve them); this function only compares them. ``named``
    holds the same paths as the call spelled them (absolute, normalized,
    symlinks not followed): deny and ask rules match either spelling, so a
    link cannot walk around a rule that names it; allow rules and the
    boundary see only where the call lands (DEC-PERM-PATH).
    """
    decision = _evaluate(
        tool_name,
        tool_input,
        read_only=read_only,
        paths=paths,
        rules=rules,
        mode=mode,
        cwd=cwd,
        add_dirs=add_dirs,
        named=named,
        bash_sandboxed=bash_sandboxed,
        bash_edits=bash_edits,
    )
    return _without_asking(decision, mode)


def _without_asking(decision: Decision, mode: Mode) -> Decision:
    """DEC-PERM-MODE ``dontAsk``: what would be asked is denied."""
    if mode != "dontAsk" or decision.behavior != "ask":
        return decision
    return Decision(
        behavior="deny", source=decision.source, reason=f"{decision.reason}; dontAsk mode denies it"
    )


def deny_before_run(
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    rules: PermissionRules,
    cwd: PurePath,
    paths: Sequence[PurePath] = (),
    named: Sequence[PurePath] = (),
) -> Decision | None:
    """DEC-SET-1: the deny rules of every source on the input a tool runs with.

    Deny beats everything (DEC-PERM-MODE), including an allow that came with
    a replaced input: an allow answered for ``echo harmless`` does not run the
    ``curl`` its ``updatedInput`` says when ``Bash(curl:*)`` is denied. The
    rules match as in :func:`evaluate` (both spellings of each path, Bash on
    the parsed line, an opaque line matching every deny rule); ``None`` lets
    the tool run.
    """
    either = (*paths, *named)
    denied = _first_match(rules.deny, tool_name, tool_input, paths=either, cwd=cwd, for_allow=False)
    if denied is None:
        return None
    note = _bash_note(denied, tool_input)
    return Decision(behavior="deny", source="rule", reason=f"denied by rule {denied}{note}")


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
        return Decision(behavior="deny", source="rule", reason=f"denied by rule {denied}")
    if path in granted:
        return Decision(behavior="allow", source="grant", reason="granted for this call")
    roots = (cwd, *add_dirs)
    roots += tuple(g for g in granted if _outside(g, roots))
    outside = one if _outside(path, roots) else ()
    boundary = _boundary(tool_name, {}, outside, rules=rules, mode=mode, cwd=cwd)
    if boundary is not None:
        return _without_asking(boundary, mode)
    allowed = _first_match(rules.allow, tool_name, {}, paths=one, cwd=cwd, for_allow=True)
    if allowed is not None:
        return Decision(behavior="allow", source="rule", reason=f"allowed by rule {allowed}")
    for rule in rules.ask:
        if rule_matches(rule, tool_name, {}, paths=either, cwd=cwd, for_allow=False) and not any(
            rule_matches(rule, tool_name, {}, paths=(g,), cwd=cwd, for_allow=False)
            for g in (*granted, *granted_named)
        ):
            return _without_asking(
                Decision(behavior="ask", source="rule", reason=f"rule {rule} asks"), mode
            )
    return Decision(behavior="allow", source="grant", reason="inside the working directories")


def _boundary(
    tool_name: str,
    tool_input: Mapping[str, Any],
    outside: Sequence[PurePath],
    *,
    rules: PermissionRules,
    mode: Mode,
    cwd: PurePath,
) -> Decision | None:
    """DEC-TURN-3: paths ``outside`` the working directories ask, carrying the
    first as ``blocked_path``, unless the mode is ``bypassPermissions`` or an
    allow rule's glob names them explicitly (a bare allow rule does not)."""
    if not outside or mode == "bypassPermissions":
        return None
    for rule in rules.allow:
        if rule.content is not None and rule_matches(
            rule, tool_name, tool_input, for_allow=True, paths=outside, cwd=cwd
        ):
            return None
    return Decision(
        behavior="ask",
        source="boundary",
        reason="path outside the working directories",
        blocked_path=str(outside[0]),
    )


def _by_mode(tool_name: str, *, read_only: bool, mode: Mode) -> Decision:
    """The last step of :func:`evaluate`: no rule matched, the mode decides."""
    if mode == "bypassPermissions":
        return Decision(behavior="allow", source="mode", reason="bypassPermissions mode")
    if read_only and tool_name not in ASKING_READ_ONLY_TOOLS:
        return Decision(behavior="allow", source="mode", reason=f"read-only tool ({mode} mode)")
    if mode in ("acceptEdits", "auto") and tool_name in EDIT_TOOLS:
        return Decision(behavior="allow", source="mode", reason=f"{mode} mode")
    return Decision(behavior="ask", source="mode", reason=f"{mode} mode asks for {tool_name}")
