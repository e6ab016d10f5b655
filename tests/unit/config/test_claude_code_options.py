"""The table of Claude Code's options and initialize fields (DEC-CLI-4, DEC-CLI-5,
DEC-PROFILE-2): each is accepted, mapped (accepted with agentx's meaning), or
refused with a sentence naming it; never a bare "unknown option", never a
silent drop. The pinned SDKs' own sources are read to keep the lists whole."""

from __future__ import annotations

import re
from pathlib import Path

import claude_agent_sdk
import pytest

from agentx.config.claude_flags import CLAUDE_CODE_FLAGS, refusal
from agentx.config.cli_args import UsageError, parse_args
from agentx.config.cli_flags import FLAGS
from agentx.messages.initialize import SDK_FIELDS

ACCEPTED = frozenset(name for flag in FLAGS for name in flag.names)
PY_SDK = Path(claude_agent_sdk.__file__).parent
TS_SDK = (
    Path(__file__).parents[2] / "e2e/ts_sdk/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs"
)

#: Accepted with agentx's own meaning (DEC-CLI-5): the option and what it does here.
MAPPED = {
    "--verbose": "full records, which stream-json output always is; debug lines are --debug's",
    "--permission-prompt-tool": "stdio (can_use_tool) or an MCP tool mcp__server__tool",
    "--await-initialize": "prompts held until initialize is handled, at most 60 s",
    "--model": "a model the selected provider serves",
    "-c": "--continue",
    "-r": "--resume",
    "-d": "--debug",
}


def _flags_in(text: str) -> set[str]:
    return set(re.findall(r'"(--[a-z][a-zA-Z-]*)"', text))


def test_every_flag_the_python_sdk_passes_is_in_the_table() -> None:
    source = (PY_SDK / "_internal" / "transport" / "subprocess_cli.py").read_text()
    passed = _flags_in(source)
    assert "--fork-session" in passed  # the scan found the SDK's argv
    assert passed - set(CLAUDE_CODE_FLAGS) == set()


def test_every_flag_the_ts_sdk_passes_is_in_the_table() -> None:
    if not TS_SDK.exists():
        pytest.skip("the TypeScript Agent SDK is not installed (npm ci in tests/e2e/ts_sdk)")
    passed = _flags_in(TS_SDK.read_text())
    assert "--resume-session-at" in passed
    assert passed - set(CLAUDE_CODE_FLAGS) == set()


@pytest.mark.parametrize("name", sorted(CLAUDE_CODE_FLAGS))
def test_each_claude_code_flag_is_accepted_or_refused_by_name(name: str) -> None:
    if name in ACCEPTED:
        assert refusal(name) is not None  # it is one of Claude Code's options
        return
    with pytest.raises(UsageError) as info:
        parse_args([name, "x"] if not name.startswith("--no-") else [name])
    assert str(info.value) == refusal(name)
    assert str(info.value).startswith(f"{name} (") and "is not supported by agentx" in str(
        info.value
    )


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_mapped_flags_are_accepted(name: str) -> None:
    assert name in ACCEPTED and name in CLAUDE_CODE_FLAGS


def test_an_option_nobody_has_is_still_unknown() -> None:
    with pytest.raises(UsageError, match=r"^unknown option --frobnicate$"):
        parse_args(["--frobnicate"])


def test_refused_with_equals_spelling() -> None:
    with pytest.raises(UsageError) as info:
        parse_args(["--sdk-url=x"])
    assert str(info.value) == refusal("--sdk-url")


def _initialize_keys_ts(text: str) -> set[str]:
    start = text.index('subtype:"initialize",hooks:')
    body = text[start : text.index("}", text.index("mcpServers:", start))]
    return set(re.findall(r"[,{]?([a-zA-Z]+):", body)) - {"subtype", "this", "initConfig"}


def test_every_initialize_field_the_ts_sdk_sends_is_in_the_catalog() -> None:
    if not TS_SDK.exists():
        pytest.skip("the TypeScript Agent SDK is not installed (npm ci in tests/e2e/ts_sdk)")
    sent = _initialize_keys_ts(TS_SDK.read_text())
    assert {"hooks", "sdkMcpServers", "jsonSchema", "systemPrompt", "mcpServers"} <= sent
    assert sent - set(SDK_FIELDS) == set()


def test_every_initialize_field_the_python_sdk_sends_is_in_the_catalog() -> None:
    source = (PY_SDK / "_internal" / "query.py").read_text()
    body = source[source.index('"subtype": "initialize"') : source.index("_send_control_request(")]
    sent = set(re.findall(r'request\["([a-zA-Z]+)"\]', body)) | {"hooks"}
    assert {"agents", "skills", "forwardSubagentText"} <= sent
    assert sent - set(SDK_FIELDS) == set()
