"""Permission rule grammar and the evaluation order (DEC-SET-2, DEC-PERM-MODE)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import (
    Decision,
    Mode,
    PermissionRules,
    Rule,
    RuleError,
    parse_rule,
)

CWD = PurePosixPath("/work/proj")
EXTRA = PurePosixPath("/data/shared")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Bash", Rule(tool_name="Bash")),
        ("Bash(git status:*)", Rule(tool_name="Bash", content="git status:*")),
        ("Read(src/**)", Rule(tool_name="Read", content="src/**")),
        ("  Edit(/abs/**)  ", Rule(tool_name="Edit", content="/abs/**")),
        ("mcp__server", Rule(tool_name="mcp__server")),
        ("mcp__server__*", Rule(tool_name="mcp__server__*")),
        ("WebFetch(domain:example.com)", Rule(tool_name="WebFetch", content="domain:example.com")),
    ],
    ids=["bare", "bash-prefix", "path-glob", "stripped", "mcp-server", "mcp-star", "domain"],
)
def test_parse_rule(text: str, expected: Rule) -> None:
    assert parse_rule(text) == expected
    assert str(expected) == text.strip()


@pytest.mark.parametrize(
    "text",
    ["", "Bash(", "Bash()", "Bash(  )", "Ba sh", "(x)", "1Tool", "Bash(x)y", "Read*"],
    ids=[
        "empty",
        "unclosed",
        "empty-spec",
        "blank-spec",
        "space",
        "no-tool",
        "digit",
        "tail",
        "star",
    ],
)
def test_parse_rule_rejects(text: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(text)


def _decide(
    tool: str,
    *,
    tool_input: dict[str, Any] | None = None,
    read_only: bool = False,
    paths: tuple[str, ...] = (),
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
    ask: tuple[str, ...] = (),
    mode: Mode = "default",
) -> Decision:
    return evaluate(
        tool,
        tool_input or {},
        read_only=read_only,
        paths=tuple(PurePosixPath(p) for p in paths),
        rules=PermissionRules.parse(allow=allow, deny=deny, ask=ask),
        mode=mode,
        cwd=CWD,
        add_dirs=(EXTRA,),
    )


IN = "/work/proj/src/a.py"
OUT = "/etc/passwd"


def case(
    case_id: str,
    tool: str,
    expect: str,
    blocked: str | None = None,
    **kwargs: Any,
) -> Any:
    """One evaluation row: the call's keyword arguments and the expected outcome."""
    return pytest.param(tool, kwargs, expect, blocked, id=case_id)


LS = {"command": "ls"}
EVAL_TABLE = [
    case("default-read", "Read", "allow", read_only=True, paths=(IN,)),
    case("default-write-asks", "Write", "ask", paths=(IN,)),
    case("default-bash-asks", "Bash", "ask", tool_input=LS),
    case("accept-edits-edit", "Edit", "allow", paths=(IN,), mode="acceptEdits"),
    case("accept-edits-bash", "Bash", "ask", tool_input=LS, mode="acceptEdits"),
    case("accept-edits-outside", "Edit", "ask", OUT, paths=(OUT,), mode="acceptEdits"),
    case("plan-read", "Grep", "allow", read_only=True, paths=(IN,), mode="plan"),
    case("plan-write-denied", "Write", "deny", paths=(IN,), allow=("Write",), mode="plan"),
    case("plan-outside-write-denied", "Write", "deny", paths=(OUT,), mode="plan"),
    case("plan-outside-read-asks", "Read", "ask", OUT, read_only=True, paths=(OUT,), mode="plan"),
    case("bypass-all", "Bash", "allow", tool_input=LS, mode="bypassPermissions"),
    case("bypass-outside", "Write", "allow", paths=(OUT,), mode="bypassPermissions"),
    case(
        "bypass-deny-wins", "Bash", "deny", tool_input=LS, deny=("Bash",), mode="bypassPermissions"
    ),
    case("bypass-ask-wins", "Bash", "ask", tool_input=LS, ask=("Bash",), mode="bypassPermissions"),
    case("deny-beats-allow", "Bash", "deny", tool_input=LS, allow=("Bash",), deny=("Bash(ls)",)),
    case("allow-beats-ask", "Bash", "allow", tool_input=LS, allow=("Bash(ls)",), ask=("Bash",)),
    case("ask-beats-mode", "Read", "ask", read_only=True, paths=(IN,), ask=("Read",)),
    case("outside-asks-blocked", "Read", "ask", OUT, read_only=True, paths=(OUT,), allow=("Read",)),
    case("outside-deny", "Read", "deny", read_only=True, paths=(OUT,), deny=("Read(/etc/**)",)),
    case("outside-explicit-allow", "Read", "allow", paths=(OUT,), allow=("Read(//etc/**)",)),
    case("add-dir-inside", "Write", "allow", paths=("/data/shared/x",), allow=("Write",)),
    case("cwd-itself-inside", "Glob", "allow", read_only=True, paths=("/work/proj",)),
    case("sibling-prefix-outside", "Read", "ask", "/work/proj2/a", paths=("/work/proj2/a",)),
    case("glob-relative-allow", "Edit", "allow", paths=(IN,), allow=("Edit(src/**)",)),
    case(
        "glob-relative-miss", "Edit", "ask", paths=("/work/proj/d/a.md",), allow=("Edit(src/**)",)
    ),
    case(
        "glob-star-one-level",
        "Edit",
        "ask",
        paths=("/work/proj/src/d/a.py",),
        allow=("Edit(src/*.py)",),
    ),
    case(
        "glob-allow-needs-all",
        "Edit",
        "ask",
        paths=(IN, "/work/proj/b.py"),
        allow=("Edit(src/**)",),
    ),
    case(
        "glob-deny-needs-one", "Read", "deny", paths=(IN, "/work/proj/.env"), deny=("Read(.env)",)
    ),
    case(
        "bash-prefix",
        "Bash",
        "allow",
        tool_input={"command": "git status -s"},
        allow=("Bash(git status:*)",),
    ),
    case(
        "bash-prefix-exact",
        "Bash",
        "allow",
        tool_input={"command": "git status"},
        allow=("Bash(git status:*)",),
    ),
    case(
        "bash-prefix-word",
        "Bash",
        "ask",
        tool_input={"command": "git statusx"},
        allow=("Bash(git status:*)",),
    ),
    case(
        "bash-chained-no-allow",
        "Bash",
        "ask",
        tool_input={"command": "git status; rm -rf ~"},
        allow=("Bash(git status:*)",),
    ),
    case(
        "bash-subst-no-allow",
        "Bash",
        "ask",
        tool_input={"command": "git status $(rm x)"},
        allow=("Bash(git status:*)",),
    ),
    case(
        "bash-deny-segment",
        "Bash",
        "deny",
        tool_input={"command": "ls && rm -rf /"},
        allow=("Bash",),
        deny=("Bash(rm:*)",),
    ),
    case(
        "bash-exact-miss",
        "Bash",
        "ask",
        tool_input={"command": "npm test"},
        allow=("Bash(npm run)",),
    ),
    case("mcp-server-wide", "mcp__gh__issues", "allow", allow=("mcp__gh",)),
    case("mcp-server-star", "mcp__gh__issues", "allow", allow=("mcp__gh__*",)),
    case("mcp-other-server", "mcp__ghx__issues", "ask", allow=("mcp__gh",)),
    case("mcp-exact-tool", "mcp__gh__issues", "allow", allow=("mcp__gh__issues",)),
    case(
        "webfetch-domain",
        "WebFetch",
        "allow",
        tool_input={"url": "https://Example.com/x"},
        allow=("WebFetch(domain:example.com)",),
    ),
    case(
        "webfetch-other",
        "WebFetch",
        "ask",
        tool_input={"url": "https://evil.com/"},
        allow=("WebFetch(domain:example.com)",),
    ),
    case(
        "network-domain",
        "SandboxNetworkAccess",
        "allow",
        tool_input={"host": "example.com", "port": 443},
        allow=("SandboxNetworkAccess(domain:example.com)",),
    ),
    case("unknown-specifier", "Task", "ask", tool_input={"x": 1}, allow=("Task(x)",)),
]


@pytest.mark.parametrize(("tool", "kwargs", "expect", "blocked"), EVAL_TABLE)
def test_evaluate(tool: str, kwargs: dict[str, Any], expect: str, blocked: str | None) -> None:
    decision = _decide(tool, **kwargs)
    assert (decision.behavior, decision.blocked_path) == (expect, blocked), decision.reason


@given(
    mode=st.sampled_from(["default", "acceptEdits", "plan", "bypassPermissions"]),
    read_only=st.booleans(),
    extra_allow=st.lists(st.sampled_from(["Bash", "Read", "Bash(ls:*)", "Read(**)"]), max_size=3),
)
def test_deny_rule_always_wins(mode: Mode, read_only: bool, extra_allow: list[str]) -> None:
    """A matching deny rule denies whatever the mode and allow rules say (DEC-PERM-MODE)."""
    for tool, tool_input, paths in (("Bash", {"command": "ls"}, ()), ("Read", {}, (IN,))):
        decision = _decide(
            tool,
            tool_input=tool_input,
            read_only=read_only,
            paths=paths,
            allow=tuple(extra_allow),
            deny=(tool,),
            mode=mode,
        )
        assert decision.behavior == "deny"
