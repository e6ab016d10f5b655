"""The built-in system prompt (agentx.messages.system_prompt, DEC-CLI-5)."""

from __future__ import annotations

import pytest

from agentx.messages.system_prompt import (
    IDENTITY,
    PERMISSIONS,
    PLAN_MODE,
    TOOL_GUIDANCE,
    Environment,
    built_in,
    compose,
    environment_block,
    tool_section,
)
from agentx.tools.registry import BUILTIN_NAMES

ENV = Environment(
    cwd="/work/project",
    additional_directories=("/work/shared",),
    platform="Linux 6.1",
    shell="bash",
    today="2026-12-04",
    model="claude-sonnet-4-5",
    is_git_repository=True,
)


def test_every_built_in_tool_has_guidance_and_nothing_else_does() -> None:
    assert set(TOOL_GUIDANCE) == set(BUILTIN_NAMES)


@pytest.mark.parametrize("offered", [(), ("Read",), ("Bash", "Edit"), BUILTIN_NAMES])
def test_guidance_for_exactly_the_tools_offered(offered: tuple[str, ...]) -> None:
    prompt = built_in(offered, ENV)
    for name, text in TOOL_GUIDANCE.items():
        assert (text in prompt) is (name in offered), name


def test_guidance_keeps_the_order_offered_and_skips_unknown_tools() -> None:
    section = tool_section(["Write", "mcp__x__y", "Read"])
    assert section.splitlines() == [
        "Tools:",
        f"- {TOOL_GUIDANCE['Write']}",
        f"- {TOOL_GUIDANCE['Read']}",
    ]
    assert tool_section(["mcp__x__y"]) == ""


def test_the_environment_block_says_everything_the_model_needs() -> None:
    block = environment_block(ENV)
    assert block.splitlines() == [
        "<env>",
        "Working directory: /work/project",
        "Is the working directory a git repository: yes",
        "Additional working directories: /work/shared",
        "Platform: Linux 6.1",
        "Shell: bash",
        "Today's date: 2026-12-04",
        "Model: claude-sonnet-4-5",
        "</env>",
    ]


def test_the_prompt_is_identity_tools_permissions_then_environment() -> None:
    prompt = built_in(("Read",), ENV)
    order = [prompt.index(part) for part in (IDENTITY, "Tools:", PERMISSIONS, "<env>")]
    assert order == sorted(order)
    assert PLAN_MODE not in prompt
    assert PLAN_MODE in built_in(("Read",), ENV, plan_mode=True)
    assert "<env>" not in built_in(("Read",), None)


@pytest.mark.parametrize(
    ("replacement", "append", "expected"),
    [
        (None, None, "DEFAULT"),
        ("", None, "DEFAULT"),
        ("MINE", None, "MINE"),
        (None, "MORE", "DEFAULT\n\nMORE"),
        ("MINE", "MORE", "MINE\n\nMORE"),
        ("", "", "DEFAULT"),
    ],
)
def test_compose_follows_the_flags(
    replacement: str | None, append: str | None, expected: str
) -> None:
    assert compose(replacement=replacement, append=append, default="DEFAULT") == expected


def test_a_path_that_is_not_utf8_is_shown_as_valid_text(tmp_path: object) -> None:
    from pathlib import Path

    from agentx.agents.environment import shown_path

    odd = Path("/tmp") / "caf\udce9"  # the byte 0xE9 as os.fsdecode gives it
    assert shown_path(odd) == "/tmp/caf\ufffd"
    assert shown_path(odd).encode("utf-8")
