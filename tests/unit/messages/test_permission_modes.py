"""The dontAsk and auto permission modes, fully denied tools, and the plan
mode note (DEC-PERM-MODE, DEC-CLI-5)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from agentx.messages.mode_notes import PLAN_MODE_NOTE, PLAN_MODE_RULES, system_for_mode
from agentx.messages.permission_decisions import admit_path, evaluate
from agentx.messages.permission_rules import MODES, Mode, PermissionRules

CWD = PurePosixPath("/work")
INSIDE = (PurePosixPath("/work/a.txt"),)
OUTSIDE = (PurePosixPath("/etc/passwd"),)


def decide(
    tool: str,
    mode: Mode,
    *,
    read_only: bool = False,
    paths: tuple[PurePosixPath, ...] = (),
    rules: PermissionRules | None = None,
    tool_input: dict[str, object] | None = None,
) -> str:
    return evaluate(
        tool,
        tool_input or {},
        read_only=read_only,
        paths=paths,
        rules=rules or PermissionRules(),
        mode=mode,
        cwd=CWD,
    ).behavior


@pytest.mark.parametrize(
    ("tool", "read_only", "paths", "rules", "expected"),
    [
        pytest.param("Read", True, INSIDE, None, "allow", id="read-only-inside"),
        pytest.param("Write", False, INSIDE, None, "deny", id="write-would-ask"),
        pytest.param("Bash", False, (), None, "deny", id="bash-would-ask"),
        pytest.param("Read", True, OUTSIDE, None, "deny", id="boundary-would-ask"),
        pytest.param(
            "Write", False, INSIDE, PermissionRules.parse(allow=["Write"]), "allow", id="allowed"
        ),
        pytest.param(
            "Read", True, INSIDE, PermissionRules.parse(ask=["Read"]), "deny", id="ask-rule"
        ),
        pytest.param(
            "Read", True, INSIDE, PermissionRules.parse(deny=["Read"]), "deny", id="deny-rule"
        ),
    ],
)
def test_dont_ask_denies_what_it_would_ask(
    tool: str,
    read_only: bool,
    paths: tuple[PurePosixPath, ...],
    rules: PermissionRules | None,
    expected: str,
) -> None:
    assert decide(tool, "dontAsk", read_only=read_only, paths=paths, rules=rules) == expected


@pytest.mark.parametrize(
    ("tool", "read_only", "paths"),
    [
        ("Read", True, INSIDE),
        ("Write", False, INSIDE),
        ("Edit", False, INSIDE),
        ("Write", False, OUTSIDE),
        ("Bash", False, ()),
        ("WebFetch", False, ()),
    ],
)
def test_auto_is_never_more_than_accept_edits(
    tool: str, read_only: bool, paths: tuple[PurePosixPath, ...]
) -> None:
    """auto without a classifier allows exactly what acceptEdits allows."""
    assert decide(tool, "auto", read_only=read_only, paths=paths) == decide(
        tool, "acceptEdits", read_only=read_only, paths=paths
    )


def test_auto_allows_edits_inside_and_asks_for_bash() -> None:
    assert decide("Write", "auto", paths=INSIDE) == "allow"
    assert decide("Bash", "auto") == "ask"
    assert decide("Write", "auto", paths=OUTSIDE) == "ask"


def test_dont_ask_at_run_time_denies_a_path_outside() -> None:
    decision = admit_path("Read", OUTSIDE[0], rules=PermissionRules(), mode="dontAsk", cwd=CWD)
    assert decision.behavior == "deny" and "dontAsk" in decision.reason
    assert (
        admit_path("Read", OUTSIDE[0], rules=PermissionRules(), mode="default", cwd=CWD).behavior
        == "ask"
    )


def test_the_modes() -> None:
    assert MODES == ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")


@pytest.mark.parametrize(
    ("deny", "tool", "expected"),
    [
        (["Bash"], "Bash", True),
        (["Bash(rm:*)"], "Bash", False),  # a specifier leaves the tool offered
        (["Edit"], "Write", True),  # Edit rules govern Write
        (["Edit"], "Edit", True),
        (["Write"], "Edit", False),
        (["Read"], "Grep", True),
        ([], "Read", False),
    ],
)
def test_fully_denies(deny: list[str], tool: str, expected: bool) -> None:
    assert PermissionRules.parse(deny=deny).fully_denies(tool) is expected


@pytest.mark.parametrize(
    ("system", "mode", "expected"),
    [
        ("S", "default", "S"),
        ("S", "acceptEdits", "S"),
        ("S", "plan", f"S\n\n{PLAN_MODE_NOTE}"),
        ("", "plan", PLAN_MODE_NOTE),
        ("", "dontAsk", ""),
    ],
)
def test_system_for_mode(system: str, mode: Mode, expected: str) -> None:
    assert system_for_mode(system, mode) == expected


@pytest.mark.parametrize(
    ("tool", "mode", "read_only", "paths", "rules", "expected"),
    [
        pytest.param("Bash", "default", False, (), "deny:Bash", ("deny", "rule"), id="deny-rule"),
        pytest.param(
            "Bash", "default", False, (), "allow:Bash", ("allow", "rule"), id="allow-rule"
        ),
        pytest.param("Read", "default", True, INSIDE, "ask:Read", ("ask", "rule"), id="ask-rule"),
        pytest.param(
            "Read", "dontAsk", True, INSIDE, "ask:Read", ("deny", "rule"), id="ask-rule-dontAsk"
        ),
        pytest.param("Read", "default", True, OUTSIDE, "", ("ask", "boundary"), id="boundary"),
        pytest.param(
            "Read", "dontAsk", True, OUTSIDE, "", ("deny", "boundary"), id="boundary-dontAsk"
        ),
        pytest.param("Write", "plan", False, INSIDE, "", ("deny", "mode"), id="plan"),
        pytest.param("Read", "default", True, INSIDE, "", ("allow", "mode"), id="read-only"),
        # A tool whose name says "rule" is still decided by the mode: the
        # source is carried, never read from the reason's text.
        pytest.param(
            "mcp__rules__rule_tool", "default", False, (), "", ("ask", "mode"), id="rule-in-name"
        ),
        pytest.param(
            "mcp__rules__rule_tool",
            "bypassPermissions",
            False,
            (),
            "",
            ("allow", "mode"),
            id="rule-in-name-bypass",
        ),
    ],
)
def test_every_decision_carries_its_source(
    *,
    tool: str,
    mode: Mode,
    read_only: bool,
    paths: tuple[PurePosixPath, ...],
    rules: str,
    expected: tuple[str, str],
) -> None:
    kind, _, rule = rules.partition(":")
    parsed = PermissionRules.parse(**{kind: [rule]}) if rules else PermissionRules()
    decision = evaluate(
        tool, {}, read_only=read_only, paths=paths, rules=parsed, mode=mode, cwd=CWD
    )
    assert (decision.behavior, decision.source) == expected


@pytest.mark.parametrize(
    ("mode", "instructions", "expected"),
    [
        ("plan", "Plan in steps.", f"S\n\n{PLAN_MODE_RULES}\n\nPlan in steps."),
        ("plan", None, f"S\n\n{PLAN_MODE_NOTE}"),
        ("plan", "", f"S\n\n{PLAN_MODE_NOTE}"),
        ("default", "Plan in steps.", "S"),
    ],
)
def test_plan_mode_instructions_replace_only_the_workflow(
    mode: Mode, instructions: str | None, expected: str
) -> None:
    """DEC-PROFILE-2 ``planModeInstructions``: the read-only rules stay."""
    assert system_for_mode("S", mode, instructions) == expected
