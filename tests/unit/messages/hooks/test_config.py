"""Hook definitions of both transports and Claude Code's matchers (DEC-HOOK-1, DEC-PROFILE-2)."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.hooks.config import (
    MAX_TIMEOUT_S,
    CallbackHook,
    CommandHook,
    HookConfigError,
    HookGroup,
    check_matcher,
    initialize_groups,
    matches,
    select,
    settings_groups,
)

MATCHES = [
    pytest.param("", "Bash", True, id="empty-all"),
    pytest.param("*", "Bash", True, id="star-all"),
    pytest.param("Bash", "Bash", True, id="exact"),
    pytest.param("Bash", "BashOutput", False, id="exact-is-not-prefix"),
    pytest.param("Edit|Write", "Write", True, id="list"),
    pytest.param("Edit|Write", "NotebookEdit", False, id="list-is-exact"),
    pytest.param("^Notebook", "NotebookEdit", True, id="regex-searched"),
    pytest.param("mcp__memory__.*", "mcp__memory__create", True, id="mcp-regex"),
    pytest.param("mcp__memory__.*", "mcp__other__x", False, id="mcp-regex-other"),
    pytest.param("bash", "Bash", False, id="case-sensitive"),
    pytest.param("Bash", None, True, id="event-without-matcher-field"),
    pytest.param("manual", "auto", False, id="compact-trigger"),
]


@pytest.mark.parametrize(("matcher", "value", "expected"), MATCHES)
def test_matches(matcher: str, value: str | None, expected: bool) -> None:
    assert matches(matcher, value) is expected


def test_check_matcher() -> None:
    assert check_matcher(None, "w") == ""
    assert check_matcher("Edit|Write", "w") == "Edit|Write"
    with pytest.raises(HookConfigError, match=r"^w\.matcher must be a regular expression$"):
        check_matcher("(", "w")
    with pytest.raises(HookConfigError, match=r"^w\.matcher must be a string$"):
        check_matcher(3, "w")


def test_select_order_and_duplicate_commands() -> None:
    groups = settings_groups(
        {
            "PreToolUse": (
                {"matcher": "Bash", "hooks": ({"type": "command", "command": "a", "timeout": 5},)},
                {
                    "hooks": (
                        {"type": "command", "command": "a"},
                        {"type": "command", "command": "b"},
                    )
                },
            ),
            "Stop": ({"matcher": "ignored", "hooks": ({"type": "command", "command": "s"},)},),
        }
    )
    callbacks = initialize_groups(
        {"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]}
    )
    chosen = select((*groups, *callbacks), "PreToolUse", "Bash")
    assert chosen == (
        CommandHook(command="a", timeout_s=5.0),
        CommandHook(command="b"),
        CallbackHook(callback_id="hook_0"),
    )
    assert select(groups, "PreToolUse", "Read") == (
        CommandHook(command="a"),
        CommandHook(command="b"),
    )
    # Stop has no matched field: its matcher is ignored.
    assert select(groups, "Stop", None) == (CommandHook(command="s"),)


def test_initialize_groups() -> None:
    groups = initialize_groups(
        {
            "PreToolUse": [
                {
                    "matcher": None,
                    "hookCallbackIds": ["hook_0", "hook_1"],
                    "timeout": 2.5,
                    "onFailure": "block",
                }
            ],
            "Stop": None,
            "SessionEnd": [{"matcher": "clear", "hookCallbackIds": ["hook_2"]}],
        }
    )
    assert groups == (
        HookGroup(
            event="PreToolUse",
            matcher="",
            hooks=(
                CallbackHook(callback_id="hook_0", timeout_s=2.5, on_failure="block"),
                CallbackHook(callback_id="hook_1", timeout_s=2.5, on_failure="block"),
            ),
        ),
        HookGroup(event="SessionEnd", matcher="clear", hooks=(CallbackHook(callback_id="hook_2"),)),
    )
    assert initialize_groups(None) == ()


BAD = [
    pytest.param([], "hooks must be an object", id="not-object"),
    pytest.param({"Nope": []}, "hooks.Nope is not a hook event", id="unknown-event"),
    pytest.param({"Stop": {}}, "hooks.Stop must be an array", id="not-array"),
    pytest.param({"Stop": [3]}, r"hooks.Stop\[0\] must be an object", id="group-not-object"),
    pytest.param(
        {"Stop": [{"hookCallbackIds": ["a"], "x": 1}]},
        r"hooks.Stop\[0\].x is not supported",
        id="unknown-member",
    ),
    pytest.param(
        {"Stop": [{"hookCallbackIds": "a"}]},
        r"hookCallbackIds must be an array",
        id="ids-not-array",
    ),
    pytest.param(
        {"Stop": [{"hookCallbackIds": [""]}]}, r"must hold non-empty strings", id="empty-id"
    ),
    pytest.param(
        {"Stop": [{"hookCallbackIds": ["a"]}], "SessionEnd": [{"hookCallbackIds": ["a"]}]},
        r"repeats 'a'",
        id="duplicate-id",
    ),
    pytest.param(
        {"Stop": [{"matcher": "(", "hookCallbackIds": []}]},
        r"matcher must be a regular expression",
        id="bad-matcher",
    ),
    pytest.param(
        {"Stop": [{"timeout": 0, "hookCallbackIds": []}]},
        r"timeout must be a positive",
        id="zero-timeout",
    ),
    pytest.param(
        {"Stop": [{"timeout": MAX_TIMEOUT_S + 1, "hookCallbackIds": []}]},
        r"timeout must be a positive",
        id="timeout-one-past",
    ),
    pytest.param(
        {"Stop": [{"timeout": True, "hookCallbackIds": []}]},
        r"timeout must be a positive",
        id="bool-timeout",
    ),
    pytest.param(
        {"Stop": [{"onFailure": "explode", "hookCallbackIds": []}]},
        r"onFailure must be",
        id="bad-on-failure",
    ),
]


@pytest.mark.parametrize(("hooks", "message"), BAD)
def test_initialize_groups_refused(hooks: Any, message: str) -> None:
    with pytest.raises(HookConfigError, match=message):
        initialize_groups(hooks)


def test_timeout_at_the_limit() -> None:
    (group,) = initialize_groups({"Stop": [{"timeout": MAX_TIMEOUT_S, "hookCallbackIds": ["a"]}]})
    assert group.hooks[0].timeout_s == MAX_TIMEOUT_S
