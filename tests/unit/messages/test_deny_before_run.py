"""The last check before a tool runs: deny rules of every source on the input
it runs with (DEC-SET-1, DEC-PERM-MODE).

A host's ``updatedInput`` (or a hook's) replaces what was evaluated; each row
is the replaced input, and the deny rules must still hold on it.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import pytest

from agentx.messages.permission_decisions import deny_before_run
from agentx.messages.permission_rules import PermissionRules

CWD = PurePosixPath("/work/proj")

#: (tool, the input it runs with, resolved paths, deny rules, the rule that denies or None)
ROWS: list[tuple[str, dict[str, Any], tuple[str, ...], tuple[str, ...], str | None]] = [
    ("Bash", {"command": "curl http://x"}, (), ("Bash(curl:*)",), "Bash(curl:*)"),
    ("Bash", {"command": "echo hi; curl x"}, (), ("Bash(curl:*)",), "Bash(curl:*)"),
    ("Bash", {"command": "taskset -c 0 curl x"}, (), ("Bash(curl:*)",), "Bash(curl:*)"),
    ("Bash", {"command": "echo curl x | sh"}, (), ("Bash(curl:*)",), "Bash(curl:*)"),
    ("Bash", {"command": "eval x"}, (), ("Bash(zzz:*)",), "Bash(zzz:*)"),
    ("Bash", {"command": "echo harmless"}, (), ("Bash(curl:*)",), None),
    ("Bash", {"command": "anything"}, (), ("Bash",), "Bash"),
    ("Bash", {"command": "ls"}, (), ("Read(**)",), None),
    ("Read", {"file_path": "/etc/shadow"}, ("/etc/shadow",), ("Read(/etc/**)",), "Read(/etc/**)"),
    ("Grep", {"pattern": "x"}, ("/etc/shadow",), ("Read(/etc/**)",), "Read(/etc/**)"),
    (
        "Write",
        {"file_path": "/work/proj/.env"},
        ("/work/proj/.env",),
        ("Edit(.env)",),
        "Edit(.env)",
    ),
    ("Read", {"file_path": "/work/proj/a"}, ("/work/proj/a",), ("Read(/etc/**)",), None),
    (
        "WebFetch",
        {"url": "https://evil.example/x"},
        (),
        ("WebFetch(domain:evil.example)",),
        "WebFetch(domain:evil.example)",
    ),
    ("WebFetch", {"url": "https://ok.example/x"}, (), ("WebFetch(domain:evil.example)",), None),
    ("mcp__srv__drop", {"table": "x"}, (), ("mcp__srv",), "mcp__srv"),
    ("Bash", {"command": "curl x"}, (), (), None),
]


@pytest.mark.parametrize(("tool", "tool_input", "paths", "deny", "rule"), ROWS)
def test_deny_rules_hold_on_the_input_a_tool_runs_with(
    tool: str,
    tool_input: dict[str, Any],
    paths: tuple[str, ...],
    deny: tuple[str, ...],
    rule: str | None,
) -> None:
    decision = deny_before_run(
        tool,
        tool_input,
        rules=PermissionRules.parse(allow=(tool, "Bash(curl:*)"), deny=deny),
        cwd=CWD,
        paths=tuple(PurePosixPath(p) for p in paths),
    )
    if rule is None:
        assert decision is None
    else:
        assert decision is not None and decision.behavior == "deny"
        assert decision.reason.startswith(f"denied by rule {rule}")


def test_the_typed_spelling_of_a_path_is_denied_too() -> None:
    """A link in the cwd to a denied file: the typed path matches the rule (DEC-PERM-PATH-3)."""
    decision = deny_before_run(
        "Read",
        {"file_path": "/work/proj/link"},
        rules=PermissionRules.parse(deny=("Read(link)",)),
        cwd=CWD,
        paths=(PurePosixPath("/elsewhere/target"),),
        named=(PurePosixPath("/work/proj/link"),),
    )
    assert decision is not None and decision.reason == "denied by rule Read(link)"
