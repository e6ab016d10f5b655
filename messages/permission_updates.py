"""Session updates to the permission rules and mode (WIRE-PERM-022).

A closed ``PermissionUpdate`` (destination ``session`` only) is parsed by
:func:`parse_update`; :func:`apply_updates` applies a batch all or nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

from agentx.messages.closed import closed_breach
from agentx.messages.permission_rules import (
    BEHAVIORS,
    TOOL_NAME,
    Behavior,
    Mode,
    PermissionRules,
    Rule,
    RuleError,
    is_mode,
    rule_problem,
)


class AddRules(Struct, frozen=True, kw_only=True):
    behavior: Behavior
    rules: tuple[Rule, ...]


class SetMode(Struct, frozen=True, kw_only=True):
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
    if not isinstance(tool, str) or not TOOL_NAME.fullmatch(tool):
        raise RuleError("addRules: toolName must be a tool name")
    if content is None:
        return Rule(tool_name=tool)
    if not isinstance(content, str) or not content.strip():
        raise RuleError("addRules: ruleContent must be a non-empty string")
    rule = Rule(tool_name=tool, content=content)
    problem = rule_problem(rule)
    if problem is not None:  # DEC-SET-2: never a silent no-op, from the wire either
        raise RuleError(f"addRules: a rule that can never match: {problem}")
    return rule


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
