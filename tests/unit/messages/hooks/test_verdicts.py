"""One hook's answer as a verdict, both spellings (DEC-HOOK-3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.hooks.verdicts import Verdict, command_verdict, json_verdict
from agentx.messages.permission_wire import PermissionAllow, PermissionDeny


def _out(body: Any) -> bytes:
    return json.dumps(body).encode()


COMMANDS = [
    # exit status
    pytest.param("PreToolUse", 0, b"", b"", Verdict(), id="empty-no-opinion"),
    pytest.param(
        "PreToolUse",
        2,
        b'{"decision":"approve"}',
        b"no rm\n",
        Verdict(decision="block", reason="no rm"),
        id="exit-2-stderr-reason-stdout-unread",
    ),
    pytest.param(
        "PreToolUse",
        2,
        b"",
        b"",
        Verdict(decision="block", reason="blocked by a PreToolUse hook"),
        id="exit-2-default-reason",
    ),
    pytest.param(
        "PermissionRequest",
        2,
        b"",
        b"",
        Verdict(
            decision="block",
            reason="denied by hook",
            request=PermissionDeny(message="denied by hook"),
        ),
        id="exit-2-permission-request",
    ),
    pytest.param(
        "PreToolUse", 1, b"", b"x", Verdict(failure="hook exited with status 1"), id="exit-1-fails"
    ),
    pytest.param(
        "Stop", 127, b"", b"", Verdict(failure="hook exited with status 127"), id="exit-127-fails"
    ),
    # plain stdout
    pytest.param(
        "UserPromptSubmit",
        0,
        b"  ctx line\n",
        b"",
        Verdict(context="ctx line"),
        id="ups-plain-context",
    ),
    pytest.param(
        "SessionStart", 0, b"hello", b"", Verdict(context="hello"), id="session-start-plain-context"
    ),
    pytest.param("PreToolUse", 0, b"just text", b"", Verdict(), id="pre-tool-plain-ignored"),
    pytest.param(
        "PermissionRequest",
        0,
        b"just text",
        b"",
        Verdict(failure="hook stdout is not a JSON object"),
        id="permission-request-plain-fails",
    ),
    # invalid JSON
    pytest.param(
        "PreToolUse",
        0,
        b"{not json",
        b"",
        Verdict(failure="hook stdout: invalid JSON"),
        id="invalid-json",
    ),
    pytest.param(
        "PreToolUse",
        0,
        b'{"decision":"block","decision":"approve"}',
        b"",
        Verdict(failure="hook stdout: ambiguous JSON: duplicate member name"),
        id="duplicate-member",
    ),
    pytest.param("PreToolUse", 0, b"\xff{", b"", Verdict(), id="non-utf8-plain-ignored"),
]


@pytest.mark.parametrize(("event", "code", "stdout", "stderr", "expected"), COMMANDS)
def test_command_verdicts(
    event: str, code: int, stdout: bytes, stderr: bytes, expected: Verdict
) -> None:
    assert command_verdict(event, code, stdout, stderr, tool_use_id="t1") == expected


CMD_INPUT = freeze({"command": "ls -a"})

JSON = [
    # Claude Code's PreToolUse spelling
    pytest.param(
        "PreToolUse",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "policy",
            }
        },
        Verdict(decision="block", reason="policy"),
        id="pre-deny",
    ),
    pytest.param(
        "PreToolUse",
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": "ls -a"},
                "additionalContext": "c",
            }
        },
        Verdict(decision="allow", updated_input=CMD_INPUT, context="c"),
        id="pre-allow-updated",
    ),
    pytest.param(
        "PreToolUse",
        {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}},
        Verdict(decision="ask", reason="check"),
        id="pre-ask-without-event-name",
    ),
    pytest.param(
        "PreToolUse",
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "defer"}},
        Verdict(),
        id="pre-defer-no-opinion",
    ),
    pytest.param(
        "PreToolUse",
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "x"}}},
        Verdict(),
        id="updated-input-without-decision-ignored",
    ),
    pytest.param(
        "PreToolUse",
        {"decision": "approve", "reason": "ok"},
        Verdict(decision="allow", reason="ok"),
        id="pre-legacy-approve",
    ),
    pytest.param(
        "PreToolUse",
        {"decision": "block", "reason": "no"},
        Verdict(decision="block", reason="no"),
        id="pre-legacy-block",
    ),
    pytest.param(
        "PreToolUse",
        {"decision": "block", "hookSpecificOutput": {"permissionDecision": "allow"}},
        Verdict(decision="allow"),
        id="specific-wins-over-top-level",
    ),
    # agentx's DEC-HOOK-3 spelling
    pytest.param(
        "PreToolUse",
        {"decision": "allow", "updatedInput": {"command": "ls -a"}},
        Verdict(decision="allow", updated_input=CMD_INPUT),
        id="agentx-allow-updated",
    ),
    pytest.param("PreToolUse", {"decision": "passthrough"}, Verdict(), id="agentx-passthrough"),
    pytest.param(
        "PermissionRequest",
        {"decision": "deny", "reason": "r"},
        Verdict(decision="block", reason="r", request=PermissionDeny(message="r")),
        id="agentx-deny",
    ),
    pytest.param(
        "PermissionRequest",
        {"decision": "allow", "updatedInput": {"command": "ls -a"}},
        Verdict(
            decision="allow",
            updated_input=CMD_INPUT,
            request=PermissionAllow(updated_input=CMD_INPUT),
        ),
        id="agentx-allow",
    ),
    # Claude Code's PermissionRequest spelling
    pytest.param(
        "PermissionRequest",
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "m", "interrupt": True},
            }
        },
        Verdict(decision="block", request=PermissionDeny(message="m", interrupt=True)),
        id="cc-deny",
    ),
    pytest.param(
        "PermissionRequest",
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "allow", "updatedInput": {"command": "ls -a"}},
            }
        },
        Verdict(decision="allow", request=PermissionAllow(updated_input=CMD_INPUT)),
        id="cc-allow",
    ),
    pytest.param(
        "PermissionRequest",
        {
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "ask"},
            }
        },
        Verdict(decision="block", request=PermissionDeny(message="invalid permission response")),
        id="cc-invalid-behavior-denies",
    ),
    pytest.param(
        "PermissionRequest",
        {
            "decision": "allow",
            "hookSpecificOutput": {
                "hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny"},
            },
        },
        Verdict(failure="hook output: decision and hookSpecificOutput.decision disagree"),
        id="spellings-disagree",
    ),
    # the common fields
    pytest.param(
        "Stop",
        {"continue": False, "stopReason": "done", "systemMessage": "warn", "suppressOutput": True},
        Verdict(stop=True, stop_reason="done", system_message="warn", suppress_output=True),
        id="common-fields",
    ),
    pytest.param(
        "Stop",
        {"decision": "block", "reason": "tests fail"},
        Verdict(decision="block", reason="tests fail"),
        id="stop-block",
    ),
    pytest.param(
        "UserPromptSubmit",
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "more"}},
        Verdict(context="more"),
        id="ups-context",
    ),
    pytest.param(
        "PostToolUse", {"unknownMember": 1, "async": True}, Verdict(), id="unknown-members-ignored"
    ),
    # failures
    pytest.param(
        "Stop",
        {"continue": "no"},
        Verdict(failure="hook output: continue must be a boolean"),
        id="bad-continue",
    ),
    pytest.param(
        "Stop",
        {"reason": 3},
        Verdict(failure="hook output: reason must be a string"),
        id="bad-reason",
    ),
    pytest.param(
        "Stop",
        {"decision": "maybe"},
        Verdict(failure="hook output: decision 'maybe' is not known"),
        id="bad-decision",
    ),
    pytest.param(
        "Stop",
        {"decision": "ask"},
        Verdict(failure="hook output: decision 'ask' is not known for Stop"),
        id="ask-outside-pre-tool-use",
    ),
    pytest.param(
        "PreToolUse",
        {"hookSpecificOutput": {"hookEventName": "PostToolUse"}},
        Verdict(failure="hook output: hookSpecificOutput is for PostToolUse, not PreToolUse"),
        id="wrong-event-name",
    ),
    pytest.param(
        "PreToolUse",
        {"hookSpecificOutput": {"permissionDecision": "Deny"}},
        Verdict(failure="hook output: permissionDecision 'Deny' is not known"),
        id="bad-permission-decision",
    ),
    pytest.param(
        "PreToolUse",
        {"hookSpecificOutput": []},
        Verdict(failure="hook output: hookSpecificOutput must be an object"),
        id="specific-not-object",
    ),
    pytest.param(
        "PreToolUse",
        {
            "decision": "allow",
            "updatedInput": {"a": 1},
            "hookSpecificOutput": {"updatedInput": {"a": 2}},
        },
        Verdict(failure="hook output: updatedInput is given twice, differently"),
        id="two-updated-inputs",
    ),
    pytest.param(
        "Stop",
        {"continue": 1},
        Verdict(failure="hook output: continue must be a boolean"),
        id="int-is-not-bool",
    ),
    pytest.param(
        "Stop",
        {"reason": True},
        Verdict(failure="hook output: reason must be a string"),
        id="bool-is-not-string",
    ),
    pytest.param(
        "PostToolUse",
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "updatedToolOutput": "new",
                "updatedMCPToolOutput": {"content": [{"type": "text", "text": "m"}]},
            }
        },
        Verdict(
            updated_output="new",
            updated_mcp_output='{"content":[{"type":"text","text":"m"}]}',
        ),
        id="post-tool-use-updated-outputs",
    ),
    pytest.param(
        "PreToolUse",
        {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedToolOutput": "x"}},
        Verdict(),
        id="updated-output-only-on-post-tool-use",
    ),
    pytest.param(
        "PostToolUse",
        {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": None}},
        Verdict(),
        id="updated-output-null-keeps-the-output",
    ),
    pytest.param(
        "PermissionDenied",
        {
            "hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": True},
            "systemMessage": "seen",
            "suppressOutput": True,
        },
        Verdict(system_message="seen", suppress_output=True),
        id="permission-denied-retry-ignored",
    ),
]


@pytest.mark.parametrize(("event", "body", "expected"), JSON)
def test_json_verdicts(event: str, body: dict[str, Any], expected: Verdict) -> None:
    """A callback's answer and a command's stdout read the same (DEC-PROFILE-2)."""
    frozen = freeze(body)
    assert isinstance(frozen, FrozenDict)
    assert json_verdict(event, frozen, tool_use_id="t1") == expected
    assert command_verdict(event, 0, _out(body), b"", tool_use_id="t1") == expected
