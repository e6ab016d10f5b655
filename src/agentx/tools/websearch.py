"""``WebSearch``: a web search through the provider's own search tool
(DEC-TURN-3; offered only where the session's provider is Anthropic-typed,
DEC-AUTH-2).

Claude Code's design: a local tool whose run makes one sub-request to the
same provider (the Messages API, streamed like every call,
:meth:`agentx.providers.anthropic.AnthropicClient.server_tool_events`) that
carries Anthropic's server tool ``web_search_20250305`` (``max_uses``
:data:`MAX_USES`, the call's ``allowed_domains`` or ``blocked_domains``) and
asks the model to search for the query. The streamed ``server_tool_use``,
``web_search_tool_result`` and text blocks of that sub-request are folded
(:class:`SearchFold`) into the tool's result text: the links (title and URL)
and the model's summary, bounded (:data:`MAX_RESULTS` links per search,
:data:`MAX_TITLE_CHARS`, :data:`MAX_URL_CHARS`, :data:`MAX_RESULT_BYTES` in
all). The main conversation keeps plain ``tool_use``/``tool_result`` blocks.

Input (Claude Code's): ``query`` (at least :data:`MIN_QUERY_CHARS`
characters, at most :data:`MAX_QUERY_CHARS`), optional ``allowed_domains``
and ``blocked_domains`` (not both; at most :data:`MAX_DOMAINS` each). The
call asks unless a ``WebSearch`` rule or the mode allows it (DEC-PERM-MODE).
A cancel ends the sub-request (the provider call's own deadline bounds it).
The result is untrusted web data: it reaches the driver through the output
guard like every tool result (DEC-AUTH-3).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from agentx.providers.base import CancelToken, Usage
from agentx.tools.base import (
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_members,
    error,
    get_str,
    invalid_input,
    output,
)
from agentx.tools.specs import MIN_QUERY_CHARS, WEB_SEARCH

if TYPE_CHECKING:
    from agentx.providers.anthropic import AnthropicClient

#: Claude Code's bounds on the query.
MAX_QUERY_CHARS: Final = 1000
#: The most domains one list may name, and the longest domain (RFC 1035).
MAX_DOMAINS: Final = 100
MAX_DOMAIN_CHARS: Final = 253
#: The searches one sub-request may make (Claude Code's ``max_uses``).
MAX_USES: Final = 8
#: The sub-request's output budget.
SUB_MAX_TOKENS: Final = 4096
#: Bounds on what the result keeps.
MAX_RESULTS: Final = 20
MAX_TITLE_CHARS: Final = 300
MAX_URL_CHARS: Final = 2048
MAX_SUMMARY_CHARS: Final = 32 * 1024
MAX_RESULT_BYTES: Final = 100 * 1024

_USAGE_FIELDS: Final = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)

SERVER_TOOL_TYPE: Final = "web_search_20250305"
SYSTEM_PROMPT: Final = "You are an assistant for performing a web search tool use."


def _domains(input: Mapping[str, Any], name: str) -> tuple[str, ...] | None:
    value = input.get(name)
    if value is None:
        return None
    # A call's input comes frozen (a tuple) from the model, a list from a caller.
    if not isinstance(value, (list, tuple)) or not all(isinstance(i, str) for i in value):
        raise ToolInputError(f"parameter {name!r} must be a list of strings")
    if len(value) > MAX_DOMAINS:
        raise ToolInputError(f"parameter {name!r} names more than {MAX_DOMAINS} domains")
    for domain in value:
        if not domain or len(domain) > MAX_DOMAIN_CHARS or not domain.isprintable():
            raise ToolInputError(
                f"parameter {name!r}: each domain must be 1 to {MAX_DOMAIN_CHARS}"
                " printable characters"
            )
        if any(ch.isspace() for ch in domain):
            raise ToolInputError(f"parameter {name!r}: a domain must not contain whitespace")
    return tuple(value)


class SearchInput:
    """A validated call: the query and at most one domain list."""

    __slots__ = ("allowed", "blocked", "query")

    def __init__(self, input: Mapping[str, Any]) -> None:
        check_members(input, WEB_SEARCH)
        query = get_str(input, "query")
        if len(query.strip()) < MIN_QUERY_CHARS:
            raise ToolInputError(
                f"parameter 'query' must have at least {MIN_QUERY_CHARS} characters"
            )
        if len(query) > MAX_QUERY_CHARS:
            raise ToolInputError(f"parameter 'query' is longer than {MAX_QUERY_CHARS} characters")
        self.query = query
        self.allowed = _domains(input, "allowed_domains")
        self.blocked = _domains(input, "blocked_domains")
        if self.allowed and self.blocked:
            raise ToolInputError(
                "cannot specify both allowed_domains and blocked_domains in the same request"
            )

    def server_tool(self) -> dict[str, Any]:
        """Anthropic's server tool for this call."""
        tool: dict[str, Any] = {
            "type": SERVER_TOOL_TYPE,
            "name": "web_search",
            "max_uses": MAX_USES,
        }
        if self.allowed:
            tool["allowed_domains"] = list(self.allowed)
        if self.blocked:
            tool["blocked_domains"] = list(self.blocked)
        return tool

    def body(self, model: str) -> dict[str, Any]:
        """The sub-request's Messages API body (streamed)."""
        return {
            "model": model,
            "max_tokens": SUB_MAX_TOKENS,
            "system": SYSTEM_PROMPT,
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": f"Perform a web search for the query: {self.query}",
                        }
                    ],
                }
            ],
            "tools": [self.server_tool()],
            "stream": True,
        }


def _clip(value: object, limit: int) -> str:
    text = value if isinstance(value, str) else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class SearchFold:
    """Folds the sub-request's Messages API events into the result's parts:
    a list of links per ``web_search_tool_result``, the model's text between
    them, the number of searches made, and the error the stream ended in."""

    def __init__(self) -> None:
        self.parts: list[str | list[dict[str, str]]] = []
        self.searches = 0
        self.failure: str | None = None
        self.stopped = False
        self._text: dict[int, list[str]] = {}
        self._summary_chars = 0
        #: WIRE-012: the sub-request's usage (``message_start``, then the
        #: cumulative ``message_delta``); None until the API reported any.
        self.usage: dict[str, int] | None = None

    def feed(self, events: Iterable[Mapping[str, Any]]) -> SearchFold:
        for event in events:
            self.on_event(event)
            if self.stopped or self.failure is not None:
                break
        return self

    def on_event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        index = event.get("index")
        if kind == "message_start":
            message = event.get("message")
            self._take_usage(message.get("usage") if isinstance(message, Mapping) else None)
        elif kind == "message_delta":
            self._take_usage(event.get("usage"))
        elif kind == "content_block_start":
            block = event.get("content_block")
            if not isinstance(block, Mapping):
                return
            if block.get("type") == "server_tool_use":
                self.searches += 1
            elif block.get("type") == "web_search_tool_result":
                self._results(block.get("content"))
            elif block.get("type") == "text" and isinstance(index, int):
                self._text[index] = [str(block.get("text") or "")]
        elif kind == "content_block_delta" and isinstance(index, int) and index in self._text:
            delta = event.get("delta")
            if isinstance(delta, Mapping) and delta.get("type") == "text_delta":
                self._text[index].append(str(delta.get("text") or ""))
        elif kind == "content_block_stop" and isinstance(index, int) and index in self._text:
            self._summary("".join(self._text.pop(index)))
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            detail = event.get("error")
            kind_text = detail.get("type") if isinstance(detail, Mapping) else None
            self.failure = f"the provider's stream failed ({kind_text or 'error'})"

    def _take_usage(self, usage: object) -> None:
        if not isinstance(usage, Mapping):
            return
        taken = self.usage if self.usage is not None else {}
        for name in _USAGE_FIELDS:
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                taken[name] = value
        self.usage = taken

    def spent(self) -> Usage | None:
        """The sub-request's usage, to count into the turn (WIRE-012)."""
        return None if self.usage is None else Usage(**self.usage)

    def _results(self, content: object) -> None:
        if isinstance(content, Mapping):  # web_search_tool_result_error
            code = content.get("error_code")
            self.parts.append(f"Web search error: {_clip(code, 64) or 'unknown'}")
            return
        if not isinstance(content, (list, tuple)):  # events come frozen (tuples)
            return
        links = [
            {
                "title": _clip(hit.get("title"), MAX_TITLE_CHARS),
                "url": _clip(hit.get("url"), MAX_URL_CHARS),
            }
            for hit in content[:MAX_RESULTS]
            if isinstance(hit, Mapping) and hit.get("type") == "web_search_result"
        ]
        self.parts.append(links)

    def _summary(self, text: str) -> None:
        text = text.strip()
        room = MAX_SUMMARY_CHARS - self._summary_chars
        if not text or room <= 0:
            return
        kept = text[:room]
        self._summary_chars += len(kept)
        self.parts.append(kept)


def result_text(query: str, fold: SearchFold) -> str:
    """The tool result the main model reads (Claude Code's layout)."""
    lines = [f'Web search results for query: "{query}"', ""]
    for part in fold.parts:
        if isinstance(part, str):
            lines.append(part)
        elif part:
            lines.append("Links: " + json.dumps(part, ensure_ascii=False))
        else:
            lines.append("No links found.")
        lines.append("")
    lines.append(
        "REMINDER: You MUST include the sources above in your response to the user "
        "using markdown hyperlinks."
    )
    return "\n".join(lines)


class WebSearchTool:
    """The session's ``WebSearch`` (built with the session's Anthropic client)."""

    name: Final = "WebSearch"
    spec: Final = WEB_SEARCH
    #: It changes no file and runs no program; it still asks (DEC-PERM-MODE).
    read_only: Final = True

    def __init__(self, *, client: AnthropicClient) -> None:
        self._client = client

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"Search the web for: {_clip(SearchInput(input).query, 200)}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            call = SearchInput(input)
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        from agentx.providers.errors import ProviderHTTPError  # noqa: PLC0415

        fold = SearchFold()
        model = self._client.model
        try:
            fold.feed(self._client.server_tool_events(call.body(model), cancel))
        except ProviderHTTPError as exc:
            return error(f"WebSearch: the search request failed: {exc.message}")
        finally:
            # WIRE-012: what the sub-request spent counts into the turn, a
            # cancelled or failed one included (as far as it was reported).
            spent = fold.spent()
            if spent is not None and ctx.usage is not None:
                ctx.usage(spent, model)
        if fold.failure is not None:
            return error(f"WebSearch: {fold.failure}")
        if not fold.stopped:
            return error("WebSearch: the provider's stream ended before message_stop")
        return output(result_text(call.query, fold), limit=MAX_RESULT_BYTES)
