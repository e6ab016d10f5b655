"""Session updates to the permission rules and mode (WIRE-PERM-022): closed
parsing, destination session only, applied all or nothing."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.permission_rules import (
    PermissionRules,
    Rule,
    RuleError,
)
from agentx.messages.permission_updates import AddRules, SetMode, apply_updates, parse_update


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        ({"type": "setMode", "mode": "plan", "destination": "session"}, SetMode(mode="plan")),
        (
            {
                "type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}, {"toolName": "Read"}],
                "behavior": "allow",
                "destination": "session",
            },
            AddRules(
                behavior="allow",
                rules=(Rule(tool_name="Bash", content="ls:*"), Rule(tool_name="Read")),
            ),
        ),
        (
            {
                "type": "addRules",
                "rules": [{"toolName": "Bash", "ruleContent": None}],
                "behavior": "deny",
                "destination": "session",
            },
            AddRules(behavior="deny", rules=(Rule(tool_name="Bash"),)),
        ),
    ],
    ids=["set-mode", "add-allow", "null-content"],
)
def test_parse_update(update: dict[str, Any], expected: object) -> None:
    assert parse_update(update) == expected


@pytest.mark.parametrize(
    "update",
    [
        {"type": "setMode", "mode": "plan", "destination": "userSettings"},
        {"type": "setMode", "mode": "plan"},
        {"type": "setMode", "mode": "yolo", "destination": "session"},
        {"type": "setMode", "mode": "plan", "destination": "session", "extra": 1},
        {"type": "addRules", "rules": [], "behavior": "allow", "destination": "session"},
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash"}],
            "behavior": "maybe",
            "destination": "session",
        },
        {
            "type": "addRules",
            "rules": [{"toolName": "Ba sh"}],
            "behavior": "allow",
            "destination": "session",
        },
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": 3}],
            "behavior": "allow",
            "destination": "session",
        },
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "x": 1}],
            "behavior": "allow",
            "destination": "session",
        },
        {
            "type": "addRules",
            "rules": [{"toolName": "WebFetch", "ruleContent": "evil.example"}],
            "behavior": "deny",
            "destination": "session",
        },
        {"type": "addRules", "rules": "Bash", "behavior": "allow", "destination": "session"},
        {"type": "removeRules", "rules": [], "behavior": "allow", "destination": "session"},
        ["not", "an", "object"],
    ],
    ids=[
        "other-destination",
        "no-destination",
        "bad-mode",
        "extra-member",
        "empty-rules",
        "bad-behavior",
        "bad-tool",
        "bad-content",
        "rule-extra",
        "rule-that-can-never-match",
        "rules-string",
        "unknown-type",
        "not-object",
    ],
)
def test_parse_update_rejects(update: object) -> None:
    with pytest.raises(RuleError):
        parse_update(update)


def test_apply_updates_session() -> None:
    rules = PermissionRules.parse(allow=["Read"])
    updates = [
        {
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}],
            "behavior": "allow",
            "destination": "session",
        },
        {
            "type": "addRules",
            "rules": [{"toolName": "Read"}],
            "behavior": "allow",
            "destination": "session",
        },
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
    ]
    new_rules, mode = apply_updates(rules, "default", updates)
    assert mode == "acceptEdits"
    assert new_rules.allow == (Rule(tool_name="Read"), Rule(tool_name="Bash", content="ls:*"))
    assert rules.allow == (Rule(tool_name="Read"),)


def test_apply_updates_all_or_nothing() -> None:
    rules = PermissionRules()
    good = {"type": "setMode", "mode": "plan", "destination": "session"}
    bad = {"type": "setMode", "mode": "plan", "destination": "projectSettings"}
    with pytest.raises(RuleError):
        apply_updates(rules, "default", [good, bad])
