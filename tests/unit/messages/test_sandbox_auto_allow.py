"""autoAllowBashIfSandboxed in the decision order (DEC-PERM-MODE, DEC-PERM-BASH-5):
after deny, plan, the boundary, allow and ask rules, before the mode."""

from __future__ import annotations

from pathlib import PurePath

import pytest

from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import Mode, PermissionRules

CWD = PurePath("/w")


@pytest.mark.parametrize(
    ("tool", "sandboxed", "mode", "rules", "behavior"),
    [
        ("Bash", True, "default", PermissionRules(), "allow"),
        ("Bash", False, "default", PermissionRules(), "ask"),
        ("Bash", True, "plan", PermissionRules(), "deny"),
        ("Bash", True, "default", PermissionRules.parse(deny=["Bash(curl:*)"]), "deny"),
        ("Bash", True, "default", PermissionRules.parse(ask=["Bash(curl:*)"]), "ask"),
        ("Bash", True, "default", PermissionRules.parse(ask=["Bash(ls:*)"]), "allow"),
        ("Write", True, "default", PermissionRules(), "ask"),
    ],
)
def test_auto_allow(
    tool: str, sandboxed: bool, mode: Mode, rules: PermissionRules, behavior: str
) -> None:
    tool_input = {"command": "curl x"} if tool == "Bash" else {"file_path": "/w/a"}
    decision = evaluate(
        tool,
        tool_input,
        read_only=False,
        paths=() if tool == "Bash" else (PurePath("/w/a"),),
        rules=rules,
        mode=mode,
        cwd=CWD,
        bash_sandboxed=sandboxed,
    )
    assert decision.behavior == behavior
