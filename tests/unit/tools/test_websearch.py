"""``WebSearch`` (DEC-TURN-3): its input at the bounds, the fold of the
sub-request's Messages API events into the result, the result's bounds, and
one run over a real loopback Anthropic server (the body it received)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.permission_decisions import evaluate
from agentx.messages.permission_rules import PermissionRules
from agentx.providers.anthropic import AnthropicClient
from agentx.providers.base import Cancelled, Usage
from agentx.providers.http import RetryPolicy
from agentx.tools.base import ToolContext, ToolInputError
from agentx.tools.registry import builtin_tools, offers_web_search
from agentx.tools.websearch import (
    MAX_DOMAIN_CHARS,
    MAX_DOMAINS,
    MAX_QUERY_CHARS,
    MAX_RESULT_BYTES,
    MAX_RESULTS,
    MAX_TITLE_CHARS,
    SearchFold,
    SearchInput,
    WebSearchTool,
    result_text,
)
from agentx.turns.cancel import CancelScope
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_web_search_stream,
    json_reply,
    web_search_result,
)


@pytest.mark.parametrize(
    ("tool_input", "problem"),
    [
        ({"query": "ab"}, None),
        ({"query": "a"}, "at least 2"),
        ({"query": " a "}, "at least 2"),
        ({"query": "x" * MAX_QUERY_CHARS}, None),
        ({"query": "x" * (MAX_QUERY_CHARS + 1)}, "longer than"),
        ({}, "missing required parameter 'query'"),
        ({"query": 3}, "must be a string"),
        ({"query": "ab", "extra": 1}, "unexpected parameter"),
        ({"query": "ab", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}, "both"),
        ({"query": "ab", "allowed_domains": "a.com"}, "list of strings"),
        ({"query": "ab", "allowed_domains": [1]}, "list of strings"),
        ({"query": "ab", "allowed_domains": [""]}, "printable"),
        ({"query": "ab", "blocked_domains": ["a b.com"]}, "whitespace"),
        ({"query": "ab", "blocked_domains": ["a\x00.com"]}, "printable"),
        ({"query": "ab", "allowed_domains": ["d" * MAX_DOMAIN_CHARS]}, None),
        ({"query": "ab", "allowed_domains": ["d" * (MAX_DOMAIN_CHARS + 1)]}, "printable"),
        ({"query": "ab", "allowed_domains": [f"d{i}.com" for i in range(MAX_DOMAINS)]}, None),
        (
            {"query": "ab", "allowed_domains": [f"d{i}.com" for i in range(MAX_DOMAINS + 1)]},
            "more than",
        ),
        ({"query": "ab", "allowed_domains": [], "blocked_domains": ["b.com"]}, None),
        ({"query": "ab", "allowed_domains": ("a.com",)}, None),
    ],
)
def test_input_bounds(tool_input: dict[str, Any], problem: str | None) -> None:
    if problem is None:
        SearchInput(tool_input)
    else:
        with pytest.raises(ToolInputError, match=problem):
            SearchInput(tool_input)


def test_server_tool_carries_the_domains() -> None:
    allowed = SearchInput({"query": "news", "allowed_domains": ["a.com"]}).server_tool()
    assert allowed == {
        "type": "web_search_20250305",
        "name": "web_search",
        "max_uses": 8,
        "allowed_domains": ["a.com"],
    }
    blocked = SearchInput({"query": "news", "blocked_domains": ["b.com"]}).body("m")
    assert blocked["tools"][0]["blocked_domains"] == ["b.com"]
    assert "allowed_domains" not in blocked["tools"][0]
    assert blocked["stream"] is True and blocked["model"] == "m"
    assert "news" in blocked["messages"][0]["content"][0]["text"]


def _events(chunks: tuple[bytes, ...]) -> list[dict[str, Any]]:
    events = []
    for chunk in chunks:
        for line in chunk.decode().splitlines():
            if line.startswith("data: "):
                events.append(json.loads(line[len("data: ") :]))
    return events


def test_fold_and_layout() -> None:
    hits = [web_search_result("https://a.example/1", "First"), {"type": "other"}]
    fold = SearchFold().feed(_events(anthropic_web_search_stream("q", hits, "The summary.")))
    assert fold.stopped and fold.failure is None and fold.searches == 1
    assert fold.spent() == Usage(input_tokens=40, output_tokens=30)
    assert SearchFold().spent() is None
    text = result_text("q", fold)
    assert text.startswith('Web search results for query: "q"')
    assert 'Links: [{"title": "First", "url": "https://a.example/1"}]' in text
    assert "The summary." in text and "REMINDER" in text
    assert "encrypted" not in text and "EqgfCioIARgBIiQ3YTAw" not in text


def test_fold_error_result_and_stream_error() -> None:
    error = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}
    fold = SearchFold().feed(_events(anthropic_web_search_stream("q", error, "")))
    assert "Web search error: max_uses_exceeded" in result_text("q", fold)
    failed = SearchFold().feed([{"type": "error", "error": {"type": "overloaded_error"}}])
    assert failed.failure is not None and "overloaded_error" in failed.failure


def test_links_per_search_at_the_bound_and_past_it() -> None:
    def links(count: int) -> list[Any]:
        hits = [web_search_result(f"https://e.example/{i}", f"t{i}") for i in range(count)]
        fold = SearchFold().feed(_events(anthropic_web_search_stream("q", hits, "s")))
        part = fold.parts[0]
        assert isinstance(part, list)
        return part

    assert len(links(MAX_RESULTS)) == MAX_RESULTS
    assert len(links(MAX_RESULTS + 1)) == MAX_RESULTS


def test_a_huge_result_is_bounded(tmp_path: Path) -> None:
    """Two thousand results with 2,000-character titles, a summary of
    500,000 characters: titles are clipped, links capped, and the result
    stays under its byte bound."""
    hits = [web_search_result(f"https://e.example/{i}", "T" * 2_000) for i in range(2_000)]
    chunks = anthropic_web_search_stream("q", hits, "S" * 500_000)
    with ProviderServer([Reply(chunks=chunks)]) as server:
        result = _tool(server.url).run({"query": "qq"}, _ctx(tmp_path), CancelScope())
    assert not result.is_error
    assert len(result.content.encode()) <= MAX_RESULT_BYTES
    assert "T" * (MAX_TITLE_CHARS - 1) + "…" in result.content
    assert "T" * MAX_TITLE_CHARS not in result.content


def _tool(url: str) -> WebSearchTool:
    client = AnthropicClient(url, "sk-unit", {}, "model-ws", retry=RetryPolicy(attempts=1))
    return WebSearchTool(client=client)


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, env={})


def test_run_over_loopback_sends_one_sub_request(tmp_path: Path) -> None:
    hits = [web_search_result("https://docs.example/x", "Docs")]
    spent: list[tuple[Usage, str]] = []
    ctx = ToolContext(cwd=tmp_path, env={}, usage=lambda u, m: spent.append((u, m)))
    with ProviderServer([Reply(chunks=anthropic_web_search_stream("py", hits, "Found."))]) as s:
        result = _tool(s.url).run(
            {"query": "python 3.14", "allowed_domains": ["docs.example"]}, ctx, CancelScope()
        )
        (request,) = s.requests
    assert not result.is_error
    assert spent == [(Usage(input_tokens=40, output_tokens=30), "model-ws")]
    assert 'Links: [{"title": "Docs", "url": "https://docs.example/x"}]' in result.content
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-unit"
    assert request.body["model"] == "model-ws" and request.body["stream"] is True
    assert request.body["tools"] == [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 8,
            "allowed_domains": ["docs.example"],
        }
    ]


def test_bad_input_makes_no_request_and_failures_are_tool_errors(tmp_path: Path) -> None:
    with ProviderServer([json_reply(400, {"type": "error", "error": {"type": "x"}})]) as s:
        tool = _tool(s.url)
        bad = tool.run({"query": "a"}, _ctx(tmp_path), CancelScope())
        assert bad.is_error and "at least 2" in bad.content and s.requests == []
        failed = tool.run({"query": "ab"}, _ctx(tmp_path), CancelScope())
    assert failed.is_error and failed.content.startswith("WebSearch: the search request failed")
    with ProviderServer([Reply(chunks=anthropic_web_search_stream("q", [], "")[:3])]) as s:
        cut = _tool(s.url).run({"query": "ab"}, _ctx(tmp_path), CancelScope())
    assert cut.is_error and "before message_stop" in cut.content


def test_offered_only_for_anthropic_and_asks() -> None:
    assert offers_web_search(None, "anthropic")
    assert offers_web_search(["default"], "anthropic")
    assert offers_web_search(["WebSearch"], "anthropic")
    assert not offers_web_search(["Read"], "anthropic")
    for other in ("openai", "azure_openai", "scripted"):
        assert not offers_web_search(None, other)
    assert builtin_tools(["WebSearch"]) == ()  # a name --tools accepts; the session adds it

    def decide(mode: Any, rules: PermissionRules) -> str:
        return evaluate(
            "WebSearch",
            {"query": "ab"},
            read_only=True,
            paths=(),
            rules=rules,
            mode=mode,
            cwd=Path("/w"),
        ).behavior

    none = PermissionRules()
    assert decide("default", none) == "ask"
    assert decide("plan", none) == "ask"
    assert decide("acceptEdits", none) == "ask"
    assert decide("bypassPermissions", none) == "allow"
    assert decide("default", PermissionRules.parse(allow=["WebSearch"])) == "allow"
    assert decide("bypassPermissions", PermissionRules.parse(deny=["WebSearch"])) == "deny"


def test_a_cancel_ends_the_sub_request(tmp_path: Path) -> None:
    """The provider hangs mid-stream; the cancel (an interrupt) ends the
    search with Cancelled, synchronised on the server's hang."""
    chunks = anthropic_web_search_stream("q", [], "")[:3]
    cancel = CancelScope()
    with ProviderServer([Reply(chunks=chunks, then="hang")]) as server:
        watcher = threading.Thread(target=lambda: server.hanging.wait(30) and cancel.cancel())
        watcher.start()
        with pytest.raises(Cancelled):
            _tool(server.url).run({"query": "ab"}, _ctx(tmp_path), cancel)
        watcher.join()
