"""A loopback HTTP server that speaks provider streaming formats (DEC-AUTH-2).

``ProviderServer`` listens on 127.0.0.1 on a free port and answers each POST
with the next scripted :class:`Reply` (the last one repeats). A reply can send
any status and headers, stream chunks (chunked transfer encoding), and then
end, hang, or drop the connection. Hangs wait on a server-wide release event
(never a sleep) and set :attr:`ProviderServer.hanging`, so a test can cancel
exactly while the client is blocked. Every request is recorded with its parsed
JSON body. Usable from unit tests, end-to-end tests and benches::

    with ProviderServer([Reply(chunks=openai_text_stream("hi"))]) as server:
        client = OpenAIClient(server.url + "/v1", ...)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """One scripted response.

    ``hang_before_headers`` stalls before the status line; ``then`` says what
    happens after ``chunks``: ``end`` (terminating chunk), ``hang`` (keep the
    connection open, send nothing), ``keepalive`` (send an SSE ``: keepalive``
    comment every ``keepalive_every`` seconds until the server closes: a
    provider that never finishes yet never goes idle) or ``disconnect``
    (close without the terminating chunk). ``chunk_gate`` makes the server wait for the test to
    set the event before each chunk after the first (slow bytes).
    """

    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("content-type", "text/event-stream"),)
    chunks: tuple[bytes, ...] = ()
    then: Literal["end", "hang", "keepalive", "disconnect"] = "end"
    keepalive_every: float = 0.05
    hang_before_headers: bool = False
    chunk_gate: threading.Semaphore | None = None
    #: Builds the chunks from the request (a reply that names what the
    #: request carried, e.g. a task id a tool result reported).
    respond: Callable[[RecordedRequest], tuple[bytes, ...]] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    path: str
    headers: Mapping[str, str]
    body: Any


class ProviderServer:
    """A threaded loopback server with scripted replies; a context manager.

    Replies may also be scripted after start (:meth:`script`), e.g. when a
    body must mention :attr:`url`. A request with no reply scripted gets 503.
    """

    def __init__(
        self,
        replies: Sequence[Reply],
        *,
        routes: Mapping[str, Sequence[Reply]] | None = None,
        route: Callable[[Any], str | None] | None = None,
    ) -> None:
        """``route`` names the queue of ``routes`` a request's body is
        answered from (None: ``replies``), for requests that arrive in no
        fixed order (a background subagent's beside its parent's)."""
        self._replies = list(replies)
        self._routes = {key: list(queue) for key, queue in (routes or {}).items()}
        self._route = route
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        #: Set when a reply starts hanging (before headers or after chunks).
        self.hanging = threading.Event()
        self._release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> ProviderServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def rescript(self, *replies: Reply) -> None:
        """Replace the replies still scripted (one server across several runs)."""
        with self._lock:
            self._replies = list(replies)

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            key = self._route(request.body) if self._route is not None else None
            replies = self._routes[key] if key is not None else self._replies
            if not replies:
                return Reply(status=503, chunks=(b"no reply scripted",))
            return replies.pop(0) if len(replies) > 1 else replies[0]

    def _hang(self) -> None:
        self.hanging.set()
        self._release.wait()


def _handler_for(server: ProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            request = RecordedRequest(
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=json.loads(raw) if raw else None,
            )
            reply = server._next(request)
            chunks = reply.chunks if reply.respond is None else reply.respond(request)
            self.close_connection = True
            if reply.hang_before_headers:
                server._hang()
                return
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for index, chunk in enumerate(chunks):
                if index and reply.chunk_gate is not None:
                    reply.chunk_gate.acquire()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            if reply.then == "hang":
                server._hang()
            elif reply.then == "keepalive":
                server.hanging.set()
                comment = b": keepalive\n\n"
                while not server._release.wait(reply.keepalive_every):
                    try:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(comment), comment))
                        self.wfile.flush()
                    except OSError:  # the client gave up: the point of the test
                        return
            elif reply.then == "end":
                self.wfile.write(b"0\r\n\r\n")

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

    return Handler


# --- stream builders ------------------------------------------------------


def sse(data: Mapping[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event."""
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


def json_reply(
    status: int, body: Mapping[str, Any], headers: Iterable[tuple[str, str]] = ()
) -> Reply:
    """A non-streaming JSON (error) response."""
    return Reply(
        status=status,
        headers=(("content-type", "application/json"), *headers),
        chunks=(json.dumps(body).encode(),),
    )


def openai_chunk(
    delta: Mapping[str, Any] | None = None,
    finish_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
) -> bytes:
    """One Chat Completions ``chat.completion.chunk`` event."""
    choices = (
        []
        if delta is None
        else [{"index": 0, "delta": dict(delta), "finish_reason": finish_reason}]
    )
    return sse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-test",
            "choices": choices,
            "usage": dict(usage) if usage is not None else None,
        }
    )


def openai_text_stream(*texts: str, finish_reason: str = "stop") -> tuple[bytes, ...]:
    """A complete Chat Completions stream of text deltas, usage and [DONE]."""
    return (
        openai_chunk({"role": "assistant", "content": ""}),
        *(openai_chunk({"content": text}) for text in texts),
        openai_chunk({}, finish_reason=finish_reason),
        openai_chunk(usage={"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}),
        sse("[DONE]"),
    )


def anthropic_event(payload: Mapping[str, Any]) -> bytes:
    """One Messages API event (the SSE ``event`` field repeats ``type``)."""
    return sse(payload, event=str(payload["type"]))


def anthropic_text_stream(*texts: str, stop_reason: str = "end_turn") -> tuple[bytes, ...]:
    """A complete Messages API stream with one text block."""
    return (
        anthropic_event(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "usage": {
                        "input_tokens": 25,
                        "output_tokens": 1,
                        "cache_creation_input_tokens": 3,
                        "cache_read_input_tokens": 5,
                    },
                },
            }
        ),
        anthropic_event(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            }
        ),
        anthropic_event({"type": "ping"}),
        *(
            anthropic_event(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": t},
                }
            )
            for t in texts
        ),
        anthropic_event({"type": "content_block_stop", "index": 0}),
        anthropic_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 15},
            }
        ),
        anthropic_event({"type": "message_stop"}),
    )


def anthropic_thinking_blocks(
    thinking: tuple[str, ...], signature: str, *, index: int = 0
) -> tuple[bytes, ...]:
    """One ``thinking`` content block: its deltas, then its ``signature_delta``."""
    return (
        anthropic_event(
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            }
        ),
        *(
            anthropic_event(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "thinking_delta", "thinking": part},
                }
            )
            for part in thinking
        ),
        anthropic_event(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "signature_delta", "signature": signature},
            }
        ),
        anthropic_event({"type": "content_block_stop", "index": index}),
    )


def anthropic_with_thinking(
    thinking: tuple[str, ...], signature: str, rest: tuple[bytes, ...]
) -> tuple[bytes, ...]:
    """A Messages API stream that thinks first: the thinking block, then the
    blocks of ``rest``, a complete stream (``anthropic_text_stream`` or a tool
    call), after its ``message_start``."""
    return (rest[0], *anthropic_thinking_blocks(thinking, signature), *rest[1:])


def anthropic_tool_use(
    name: str, tool_input: dict[str, Any], tool_use_id: str = "toolu_1"
) -> tuple[bytes, ...]:
    """A complete Messages API stream with one tool use."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    }
    block = {"type": "tool_use", "id": tool_use_id, "name": name, "input": {}}
    delta = {"type": "input_json_delta", "partial_json": json.dumps(tool_input)}
    return (
        anthropic_event(start),
        anthropic_event({"type": "content_block_start", "index": 0, "content_block": block}),
        anthropic_event({"type": "content_block_delta", "index": 0, "delta": delta}),
        anthropic_event({"type": "content_block_stop", "index": 0}),
        anthropic_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 9},
            }
        ),
        anthropic_event({"type": "message_stop"}),
    )


def anthropic_web_search_stream(
    query: str,
    results: list[dict[str, Any]] | dict[str, Any],
    summary: str,
    *,
    search_id: str = "srvtoolu_1",
) -> tuple[bytes, ...]:
    """A complete Messages API stream of a server-side web search, as the API
    streams it: a ``server_tool_use`` block (its input as ``input_json_delta``),
    a ``web_search_tool_result`` block whose ``content_block_start`` carries the
    whole result list (or an error object), and a text block with a citation."""
    start = {
        "type": "message_start",
        "message": {
            "id": "msg_ws",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 40, "output_tokens": 1},
        },
    }
    use = {"type": "server_tool_use", "id": search_id, "name": "web_search", "input": {}}
    found = {"type": "web_search_tool_result", "tool_use_id": search_id, "content": results}
    first = results[0] if isinstance(results, list) and results else {}
    citation = {
        "type": "web_search_result_location",
        "url": first.get("url", ""),
        "title": first.get("title", ""),
        "encrypted_index": "EiQ=",
        "cited_text": "cited",
    }
    return (
        anthropic_event(start),
        anthropic_event({"type": "content_block_start", "index": 0, "content_block": use}),
        anthropic_event(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps({"query": query})},
            }
        ),
        anthropic_event({"type": "content_block_stop", "index": 0}),
        anthropic_event({"type": "content_block_start", "index": 1, "content_block": found}),
        anthropic_event({"type": "content_block_stop", "index": 1}),
        anthropic_event(
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "text", "text": "", "citations": []},
            }
        ),
        anthropic_event(
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "citations_delta", "citation": citation},
            }
        ),
        anthropic_event(
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "text_delta", "text": summary},
            }
        ),
        anthropic_event({"type": "content_block_stop", "index": 2}),
        anthropic_event(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 30, "server_tool_use": {"web_search_requests": 1}},
            }
        ),
        anthropic_event({"type": "message_stop"}),
    )


def web_search_result(url: str, title: str) -> dict[str, Any]:
    """One ``web_search_result`` as the Messages API returns it."""
    return {
        "type": "web_search_result",
        "url": url,
        "title": title,
        "encrypted_content": "EqgfCioIARgBIiQ3YTAw",
        "page_age": "April 30, 2025",
    }
