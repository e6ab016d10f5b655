"""The built-in system prompt (agentx.messages.system_prompt, DEC-CLI-5)."""

from __future__ import annotations

from typing import Any

import pytest
from msgspec.structs import replace

from agentx.messages.system_prompt import (
    DYNAMIC_BOUNDARY,
    IDENTITY,
    MAX_CLIENT_PROMPT_CHARS,
    PERMISSIONS,
    PLAN_MODE,
    TOOL_GUIDANCE,
    Environment,
    PromptSources,
    SessionPrompt,
    built_in,
    client_prompt,
    client_prompt_problem,
    client_text_problem,
    compose,
    environment_block,
    session_prompt,
    tool_section,
)
from agentx.tools.registry import BUILTIN_NAMES, SKILL, WEB_SEARCH

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
    assert set(TOOL_GUIDANCE) == {*BUILTIN_NAMES, "Agent", SKILL.name, WEB_SEARCH.name}


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


SOURCES = PromptSources(built_in="BUILT", environment="<env>E</env>")


@pytest.mark.parametrize(
    ("sources", "kwargs", "system", "first"),
    [
        pytest.param(SOURCES, {}, "BUILT\n\n<env>E</env>", None, id="built-in"),
        pytest.param(SOURCES, {"exclude_dynamic": True}, "BUILT", "<env>E</env>", id="exclude"),
        pytest.param(
            SOURCES,
            {"exclude_dynamic": True, "append": "A"},
            "BUILT\n\nA",
            "<env>E</env>",
            id="exclude-append",
        ),
        pytest.param(SOURCES, {"replacement": "MINE"}, "MINE", None, id="custom"),
        pytest.param(
            SOURCES, {"replacement": "MINE", "exclude_dynamic": True}, "MINE", None, id="custom-ex"
        ),
        pytest.param(SOURCES, {"replacement": ""}, "BUILT\n\n<env>E</env>", None, id="empty"),
        pytest.param(
            replace(SOURCES, replacement="FLAG", append="FA"),
            {},
            "FLAG\n\nFA",
            None,
            id="flags",
        ),
        pytest.param(
            replace(SOURCES, replacement="FLAG", append="FA"),
            {"replacement": "MINE", "append": "A"},
            "MINE\n\nA",
            None,
            id="client-wins",
        ),
        pytest.param(
            replace(SOURCES, append="FA"), {"append": ""}, "BUILT\n\n<env>E</env>", None, id="a0"
        ),
        pytest.param(
            replace(SOURCES, exclude_dynamic=True), {}, "BUILT", "<env>E</env>", id="flag-ex"
        ),
        pytest.param(
            replace(SOURCES, exclude_dynamic=True),
            {"exclude_dynamic": False},
            "BUILT\n\n<env>E</env>",
            None,
            id="client-keeps",
        ),
    ],
)
def test_session_prompt(
    sources: PromptSources, kwargs: dict[str, Any], system: str, first: str | None
) -> None:
    """DEC-CLI-5, DEC-PROFILE-2: the client's fields over the flags', and the
    dynamic block moved only out of the built-in prompt."""
    assert session_prompt(sources, **kwargs) == SessionPrompt(system=system, first_context=first)


@pytest.mark.parametrize(
    ("value", "text", "problem"),
    [
        ("S", "S", None),
        (("S",), "S", None),
        (("A", DYNAMIC_BOUNDARY, "B"), "A\n\nB", None),
        (("A", "", "B"), "A\n\nB", None),
        ((), "", None),
        (5, None, "must be a string or an array of strings"),
        (("A", 5), None, "must be a string or an array of strings"),
        (None, None, "must be a string or an array of strings"),
        ("x" * MAX_CLIENT_PROMPT_CHARS, "x" * MAX_CLIENT_PROMPT_CHARS, None),
        (
            "x" * (MAX_CLIENT_PROMPT_CHARS + 1),
            "x" * (MAX_CLIENT_PROMPT_CHARS + 1),
            f"is longer than {MAX_CLIENT_PROMPT_CHARS} characters",
        ),
    ],
)
def test_client_prompt(value: Any, text: str | None, problem: str | None) -> None:
    assert client_prompt(value) == text
    assert client_prompt_problem(value) == problem


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", None),
        ("x" * MAX_CLIENT_PROMPT_CHARS, None),
        (
            "x" * (MAX_CLIENT_PROMPT_CHARS + 1),
            f"is longer than {MAX_CLIENT_PROMPT_CHARS} characters",
        ),
        (("x",), "must be a string"),
        (None, "must be a string"),
    ],
)
def test_client_text_problem(value: Any, problem: str | None) -> None:
    assert client_text_problem(value) == problem
