"""The ``sdk`` profile's system prompt fields over pipes (DEC-PROFILE-2,
DEC-CLI-5): ``systemPrompt`` (a string or the TypeScript SDK's array),
``appendSystemPrompt``, ``excludeDynamicSections`` and
``planModeInstructions`` reach the model's request; a wrong value is refused
by name and no turn runs; the standalone profile keeps DEC-COMPAT-4."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.mode_notes import PLAN_MODE_RULES, PLAN_MODE_WORKFLOW
from agentx.messages.system_prompt import DYNAMIC_BOUNDARY, IDENTITY
from tests.e2e.agentx_process import (
    DUPLEX,
    control,
    encode,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream

KEY = "sk-sdk-prompt-sentinel"
SDK = (*DUPLEX, "--control-profile", "sdk")


def _system(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    if isinstance(system, list):
        return "\n\n".join(block["text"] for block in system)
    assert isinstance(system, str)
    return system


def _requests(
    home: Path, cwd: Path, args: tuple[str, ...], fields: dict[str, Any], prompts: int = 1
) -> tuple[list[dict[str, Any]], Any]:
    replies = [Reply(chunks=anthropic_text_stream(f"r{n}")) for n in range(prompts)]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "endpoint": server.url,
                    "api_key": KEY,
                }
            ],
        )
        stdin = encode(control("i", "initialize", **fields)) if fields else b""
        for n in range(prompts):
            stdin += encode(user(f"prompt {n}"))
        proc = run_once(args, stdin, home=home, cwd=cwd)
        return [r.body for r in server.requests], proc


@pytest.mark.parametrize(
    ("fields", "args", "expected"),
    [
        pytest.param({"systemPrompt": "Custom."}, (), ("Custom.", False, False), id="string"),
        pytest.param(
            {"systemPrompt": ["Static.", DYNAMIC_BOUNDARY, "Dynamic."]},
            (),
            ("Static.\n\nDynamic.", False, False),
            id="ts-array-with-boundary",
        ),
        pytest.param(
            {"systemPrompt": ["Custom."], "appendSystemPrompt": "Appended."},
            (),
            ("Custom.\n\nAppended.", False, False),
            id="custom-and-append",
        ),
        pytest.param(
            {"systemPrompt": "Custom.", "excludeDynamicSections": True},
            (),
            ("Custom.", False, False),
            id="exclude-has-no-effect-on-a-custom-prompt",
        ),
        pytest.param(
            {"appendSystemPrompt": "Appended."}, (), (None, True, False), id="built-in-and-append"
        ),
        pytest.param(
            {"excludeDynamicSections": True}, (), (None, False, True), id="exclude-dynamic"
        ),
        pytest.param(
            {"excludeDynamicSections": False},
            ("--exclude-dynamic-system-prompt-sections",),
            (None, True, False),
            id="initialize-wins-over-the-flag",
        ),
        pytest.param(
            {"appendSystemPrompt": "Appended."},
            ("--system-prompt", "From the flag."),
            ("From the flag.\n\nAppended.", False, False),
            id="append-to-the-flag-prompt",
        ),
    ],
)
def test_initialize_prompt_fields_reach_the_request(
    home: Path,
    tmp_path: Path,
    fields: dict[str, Any],
    args: tuple[str, ...],
    expected: tuple[str | None, bool, bool],
) -> None:
    """``expected``: the system prompt (None: the built-in one), whether the
    ``<env>`` block is in it, and whether it is in the first prompt."""
    system, env_in_system, env_in_first = expected
    bodies, proc = _requests(home, tmp_path, (*SDK, *args), fields, prompts=2)
    assert proc.returncode == 0, proc.stderr
    assert len(bodies) == 2
    sent = _system(bodies[0])
    if system is not None:
        assert sent == system
    else:
        assert sent.startswith(IDENTITY)
        if "appendSystemPrompt" in fields:
            assert sent.endswith("\n\nAppended.")
    assert ("<env>" in sent) is env_in_system
    first = json.dumps(bodies[0]["messages"][0])
    assert ("<env>" in first) is env_in_first
    # Only the first prompt carries it; every request has the same system prompt.
    assert "<env>" not in json.dumps(bodies[1]["messages"][2:])
    assert _system(bodies[1]) == sent
    if env_in_first:
        assert f"Working directory: {tmp_path}" in first


def test_the_flag_moves_the_environment_block_in_every_profile(home: Path, tmp_path: Path) -> None:
    bodies, proc = _requests(
        home, tmp_path, (*DUPLEX, "--exclude-dynamic-system-prompt-sections"), {}
    )
    assert proc.returncode == 0, proc.stderr
    assert "<env>" not in _system(bodies[0])
    assert "<env>" in json.dumps(bodies[0]["messages"][0])


@pytest.mark.parametrize(
    ("instructions", "present", "absent"),
    [
        pytest.param("Write the plan as a numbered list.", "numbered list", PLAN_MODE_WORKFLOW),
        pytest.param("", PLAN_MODE_WORKFLOW, "numbered list", id="empty-keeps-the-default"),
    ],
)
def test_plan_mode_instructions_replace_the_workflow(
    home: Path, tmp_path: Path, instructions: str, present: str, absent: str
) -> None:
    bodies, proc = _requests(
        home,
        tmp_path,
        (*SDK, "--permission-mode", "plan"),
        {"planModeInstructions": instructions},
    )
    assert proc.returncode == 0, proc.stderr
    sent = _system(bodies[0])
    assert PLAN_MODE_RULES in sent and present in sent and absent not in sent


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        pytest.param(
            {"systemPrompt": 5}, "systemPrompt: must be a string or an array of strings", id="int"
        ),
        pytest.param(
            {"systemPrompt": ["a", 1]},
            "systemPrompt: must be a string or an array of strings",
            id="array-of-mixed",
        ),
        pytest.param({"appendSystemPrompt": ["a"]}, "appendSystemPrompt: must be a string"),
        pytest.param(
            {"excludeDynamicSections": "yes"}, "excludeDynamicSections: must be true or false"
        ),
        pytest.param({"planModeInstructions": None}, "planModeInstructions: must be a string"),
        pytest.param(
            {"systemPrompt": "x" * (1024 * 1024 + 1)},
            "systemPrompt: is longer than 1048576 characters",
            id="one-past-the-bound",
        ),
    ],
)
def test_a_wrong_prompt_field_is_refused_and_no_turn_runs(
    home: Path, tmp_path: Path, fields: dict[str, Any], error: str
) -> None:
    bodies, proc = _requests(home, tmp_path, SDK, fields)
    assert proc.returncode == 2
    assert bodies == []
    response = next(r for r in records_of(proc.stdout) if r["type"] == "control_response")
    assert response["response"]["error"] == f"initialize refused: {error}"


def test_a_prompt_at_the_bound_is_applied(home: Path, tmp_path: Path) -> None:
    text = "y" * (1024 * 1024)
    bodies, proc = _requests(home, tmp_path, SDK, {"systemPrompt": text})
    assert proc.returncode == 0, proc.stderr
    # (A prompt this long may first make agentx compact the empty context.)
    assert _system(bodies[-1]) == text


def test_standalone_still_refuses_a_client_prompt(home: Path, tmp_path: Path) -> None:
    """DEC-COMPAT-4: the standalone profile's correlated error and WARN line;
    the turn runs with the built-in prompt."""
    bodies, proc = _requests(home, tmp_path, DUPLEX, {"systemPrompt": ["Custom."]})
    assert proc.returncode == 0, proc.stderr
    response = next(r for r in records_of(proc.stdout) if r["type"] == "control_response")
    assert response["response"]["subtype"] == "error"
    assert "--system-prompt" in proc.stderr.decode()
    assert _system(bodies[0]).startswith(IDENTITY)
