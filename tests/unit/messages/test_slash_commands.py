"""The slash-command core (DEC-TURN-1): recognition in user records, the
advertised list, and the text of each command's output."""

from __future__ import annotations

from typing import Any

import pytest

from agentx.messages.context_usage import context_usage
from agentx.messages.frozen import freeze
from agentx.messages.inbound_user import parse_user
from agentx.messages.slash_commands import (
    COMMANDS,
    SlashCommand,
    parse,
    render_context,
    render_cost,
    render_help,
)

_MANIFEST = {
    "type": "attachment_ref",
    "attachment_id": "att_1",
    "kind": "image",
    "name": "a.png",
    "mime_type": "image/png",
    "size_bytes": 3,
    "sha256": "0" * 64,
    "storage_id": "blob_sha256_" + "0" * 64,
}


def _record(content: Any) -> Any:
    message: dict[str, Any] = {"role": "user", "content": content}
    if isinstance(content, list):
        message["content_version"] = 1
    obj = {"type": "user", "message": message, "parent_tool_use_id": None}
    return parse_user(freeze(obj), line=1, raw_size=100)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param("/help", SlashCommand(name="help"), id="help"),
        pytest.param("  /context \n", SlashCommand(name="context"), id="surrounding-space"),
        pytest.param("/cost", SlashCommand(name="cost"), id="cost"),
        pytest.param("/clear", SlashCommand(name="clear"), id="clear"),
        pytest.param("/compact", SlashCommand(name="compact"), id="compact-bare"),
        pytest.param(
            "/compact  keep the file names ",
            SlashCommand(name="compact", arguments="keep the file names"),
            id="compact-instructions",
        ),
        pytest.param("/help me please", None, id="arguments-to-a-command-without-any"),
        pytest.param("/foo", None, id="unknown-name"),
        pytest.param("/etc/hosts", None, id="a-path"),
        pytest.param("/HELP", None, id="names-are-case-sensitive"),
        pytest.param("help", None, id="no-slash"),
        pytest.param("please /help", None, id="slash-not-first"),
        pytest.param("/", None, id="slash-alone"),
        pytest.param([{"type": "text", "text": "/help"}], SlashCommand(name="help"), id="block"),
        pytest.param(
            [{"type": "text", "text": "/help"}, {"type": "text", "text": "x"}],
            None,
            id="two-text-blocks",
        ),
        pytest.param([{"type": "text", "text": "/cost"}, _MANIFEST], None, id="with-attachment"),
    ],
)
def test_parse(content: Any, expected: SlashCommand | None) -> None:
    assert parse(_record(content)) == expected


def test_advertised_list() -> None:
    assert [spec.name for spec in COMMANDS] == ["compact", "context", "cost", "clear", "help"]
    wire = [spec.to_wire() for spec in COMMANDS]
    assert wire[0] == {
        "name": "compact",
        "description": COMMANDS[0].description,
        "argumentHint": "<optional summarization instructions>",
    }
    assert all(entry["argumentHint"] == "" for entry in wire[1:])


def test_help_lists_every_command_with_its_usage() -> None:
    lines = render_help().splitlines()
    assert lines[0] == "Slash commands:"
    assert (
        lines[1] == f"  /compact <optional summarization instructions> - {COMMANDS[0].description}"
    )
    assert lines[2:] == [f"  /{spec.name} - {spec.description}" for spec in COMMANDS[1:]]


def test_context_renders_the_usage_payload() -> None:
    usage = context_usage(
        system_tokens=10, tools_tokens=20, messages_tokens=30, max_tokens=200, model="m"
    )
    assert render_context(usage).splitlines() == [
        "Context usage for m: 60 of 200 tokens (30.0%)",
        "  System prompt: 10 tokens",
        "  System tools: 20 tokens",
        "  Messages: 30 tokens",
        "  Free space: 140 tokens",
    ]


_USAGE = {
    "inputTokens": 1,
    "outputTokens": 2,
    "cacheReadInputTokens": 3,
    "cacheCreationInputTokens": 4,
    "costUSD": None,
}


@pytest.mark.parametrize(
    ("cost", "seconds", "models", "lines"),
    [
        pytest.param(
            None,
            0.0,
            {},
            ["Total cost: unknown", "Total API duration: 0.0s", "Usage: no model calls yet"],
            id="nothing-yet",
        ),
        pytest.param(
            0.0,
            1.26,
            {"m": _USAGE},
            [
                "Total cost: $0.0000",
                "Total API duration: 1.3s",
                "Usage (m): 1 input, 2 output, 3 cache read, 4 cache write tokens",
            ],
            id="known-zero",
        ),
        pytest.param(
            0.12345,
            2.0,
            {"m": _USAGE},
            [
                "Total cost: $0.1235",
                "Total API duration: 2.0s",
                "Usage (m): 1 input, 2 output, 3 cache read, 4 cache write tokens",
            ],
            id="priced",
        ),
    ],
)
def test_cost(cost: float | None, seconds: float, models: dict[str, Any], lines: list[str]) -> None:
    assert (
        render_cost(total_cost_usd=cost, api_seconds=seconds, model_usage=models).splitlines()
        == lines
    )
