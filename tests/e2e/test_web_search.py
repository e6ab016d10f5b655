"""``WebSearch`` end to end over the real process and a loopback Anthropic
model (DEC-TURN-3, DEC-PERM-MODE, DEC-AUTH-2, DEC-AUTH-3): the main model
calls the tool, the host is asked through ``can_use_tool`` unless a rule
allows it, the one sub-request the server received carries Anthropic's
server tool with the call's domains, and the main model reads the links and
summary as a plain ``tool_result``. Not offered with an OpenAI provider.
Hostile: a result title carrying the provider's API key never reaches
stdout; a huge result list reaches the model bounded."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import run_once, write_anthropic_auth, write_auth
from tests.e2e.python_sdk import result_of, run_query
from tests.fakes.provider_server import (
    ProviderServer,
    RecordedRequest,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
    anthropic_web_search_stream,
    openai_text_stream,
    web_search_result,
)

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")

KEY = "sk-ant-websearch-sentinel-0123456789"
CALL = {"query": "python release notes", "allowed_domains": ["docs.python.org"]}


def _replies(results: list[dict[str, Any]], summary: str = "Python 3.14 is out.") -> list[Reply]:
    return [
        Reply(chunks=anthropic_tool_use("WebSearch", CALL)),
        Reply(chunks=anthropic_web_search_stream(CALL["query"], results, summary)),
        Reply(chunks=anthropic_text_stream("searched")),
    ]


_run_sdk = functools.partial(run_query, api_key=KEY)


def _tool_names(request: RecordedRequest) -> list[str]:
    return [tool.get("name", "") for tool in request.body.get("tools", [])]


def _tool_result(request: RecordedRequest) -> dict[str, Any]:
    return next(
        block
        for message in reversed(request.body["messages"])
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    )


def _text(block: dict[str, Any]) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


def test_web_search_asks_then_searches_through_the_provider(tmp_path: Path) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append((tool, tool_input))
        return sdk.PermissionResultAllow()

    hits = [web_search_result("https://docs.python.org/3/whatsnew/3.14.html", "What's New")]
    messages, requests = _run_sdk(tmp_path, _replies(hits), can_use_tool=can_use_tool)
    result = result_of(messages)
    assert result.result == "searched"
    assert asked == [("WebSearch", CALL)]
    # WIRE-012: the sub-request's usage (40 in, 30 out) counts into the turn
    # beside the two main calls' (5 + 25 in, 9 + 15 out).
    assert result.usage["input_tokens"] == 70
    assert result.usage["output_tokens"] == 54
    main, sub, after = requests
    assert "WebSearch" in _tool_names(main)
    assert "WebSearch" in json.dumps(main.body["system"])  # its guidance
    # The one sub-request: the same provider and model, the server tool alone.
    assert sub.path == "/v1/messages" and sub.headers["x-api-key"] == KEY
    assert sub.body["model"] == "model-x" and sub.body["stream"] is True
    assert sub.body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 8,
            "allowed_domains": ["docs.python.org"],
        }
    ]
    assert CALL["query"] in json.dumps(sub.body["messages"])
    # The main model reads a plain tool_result with the links and the summary.
    block = _tool_result(after)
    assert not block.get("is_error")
    text = _text(block)
    assert text.startswith('Web search results for query: "python release notes"')
    assert "https://docs.python.org/3/whatsnew/3.14.html" in text and "What's New" in text
    assert "Python 3.14 is out." in text
    kinds = {
        b.get("type")
        for m in after.body["messages"]
        if isinstance(m["content"], list)
        for b in m["content"]
    }
    assert not kinds & {"server_tool_use", "web_search_tool_result"}


def test_web_search_allowed_by_rule_is_not_asked(tmp_path: Path) -> None:
    asked: list[str] = []

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        return sdk.PermissionResultAllow()

    hits = [web_search_result("https://docs.python.org/x", "X")]
    messages, requests = _run_sdk(
        tmp_path, _replies(hits), allowed_tools=["WebSearch"], can_use_tool=can_use_tool
    )
    assert result_of(messages).result == "searched"
    assert asked == [] and len(requests) == 3
    assert "https://docs.python.org/x" in _text(_tool_result(requests[2]))


def test_web_search_denied_makes_no_sub_request(tmp_path: Path) -> None:
    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        return sdk.PermissionResultDeny(message="no searching")

    replies = [
        Reply(chunks=anthropic_tool_use("WebSearch", CALL)),
        Reply(chunks=anthropic_text_stream("gave up")),
    ]
    messages, requests = _run_sdk(tmp_path, replies, can_use_tool=can_use_tool)
    assert result_of(messages).result == "gave up"
    assert len(requests) == 2  # no sub-request
    block = _tool_result(requests[1])
    assert block["is_error"] and "no searching" in _text(block)


def test_not_offered_with_an_openai_provider(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with ProviderServer([Reply(chunks=openai_text_stream("plain"))]) as server:
        write_auth(
            home,
            [{"id": "o", "type": "openai", "model": "gpt-x", "endpoint": server.url + "/v1"}],
        )
        done = run_once(["-p", "go"], b"", home=home, cwd=tmp_path)
        (request,) = server.requests
    assert done.returncode == 0, done.stderr
    names = [tool["function"]["name"] for tool in request.body["tools"]]
    assert "WebFetch" in names and "WebSearch" not in names
    # Named in --tools, it is still not offered where the provider has no search.
    with ProviderServer([Reply(chunks=openai_text_stream("plain"))]) as server:
        write_auth(
            home,
            [{"id": "o", "type": "openai", "model": "gpt-x", "endpoint": server.url + "/v1"}],
        )
        done = run_once(["-p", "go", "--tools", "WebSearch,Read"], b"", home=home, cwd=tmp_path)
        (request,) = server.requests
    assert done.returncode == 0, done.stderr
    assert [tool["function"]["name"] for tool in request.body["tools"]] == ["Read"]


def test_a_result_title_with_the_api_key_never_reaches_stdout(tmp_path: Path) -> None:
    """The search result is untrusted data: a title carrying the provider's
    API key goes through the output guard like any tool result."""
    home = tmp_path / "home"
    hits = [web_search_result("https://evil.example/", f"leak {KEY} leak")]
    with ProviderServer(_replies(hits, summary=f"the key is {KEY}")) as server:
        write_anthropic_auth(home, server.url, KEY)
        done = run_once(
            [
                "-p",
                "go",
                "--output-format",
                "stream-json",
                "--verbose",
                "--allowedTools",
                "WebSearch",
            ],
            b"",
            home=home,
            cwd=tmp_path,
        )
        requests = list(server.requests)
    assert len(requests) == 3  # the search ran and the model read its result
    assert KEY in _text(_tool_result(requests[2]))  # the model may see it ...
    assert KEY.encode() not in done.stdout  # ... the driver never does
    assert KEY.encode() not in done.stderr
    assert done.stdout  # records were written


def test_a_huge_result_list_reaches_the_model_bounded(tmp_path: Path) -> None:
    hits = [web_search_result(f"https://e.example/{i}", "T" * 5_000) for i in range(500)]
    messages, requests = _run_sdk(
        tmp_path, _replies(hits, summary="S" * 200_000), allowed_tools=["WebSearch"]
    )
    assert result_of(messages).result == "searched"
    text = _text(_tool_result(requests[2]))
    assert len(text.encode()) <= 100 * 1024
    assert text.count("https://e.example/") == 20
    assert "T" * 300 not in text
