"""WebFetch against a real HTTP server on 127.0.0.1 (WIRE-PERM-023 target, caps, cancel)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentx.providers.base import Cancelled
from agentx.tools.base import ToolContext
from agentx.tools.webfetch import MAX_BODY_BYTES, WebFetchTool
from agentx.turns.cancel import CancelScope

RELEASE = threading.Event()
FIRST_SENT = threading.Event()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path
        if path == "/hello":
            self._send(200, "héllo".encode())
        elif path == "/missing":
            self._send(404, b"not here")
        elif path == "/hop":
            self._send(302, b"", Location="/hello")
        elif path == "/away":
            self._send(302, b"", Location="https://elsewhere.example/x")
        elif path == "/loop":
            self._send(302, b"", Location="/loop")
        elif path.startswith("/size/"):
            self._send(200, b"z" * int(path.removeprefix("/size/")))
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"first")
            self.wfile.flush()
            FIRST_SENT.set()
            RELEASE.wait(10)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    RELEASE.set()
    server.shutdown()
    thread.join()
    server.server_close()


def _fetch(url: str, scope: CancelScope | None = None, **extra: Any) -> Any:
    ctx = ToolContext(cwd=Path("/"), env={})
    return WebFetchTool().run({"url": url, **extra}, ctx, scope or CancelScope())


@pytest.mark.parametrize(
    ("path", "is_error", "fragment"),
    [
        ("/hello", False, "Status: 200\nContent-Type: text/plain; charset=utf-8\n\nhéllo"),
        ("/missing", True, "Status: 404"),
        ("/hop", False, "héllo"),
        ("/away", False, "Redirected (302) to another origin: https://elsewhere.example/x"),
        ("/loop", True, "more than 5 redirects"),
    ],
    ids=["ok", "http-error", "same-origin-redirect", "cross-origin-redirect", "redirect-loop"],
)
def test_webfetch(base_url: str, path: str, is_error: bool, fragment: str) -> None:
    result = _fetch(base_url + path)
    assert result.is_error is is_error
    assert fragment in result.content


def test_webfetch_prompt_echoed(base_url: str) -> None:
    assert _fetch(base_url + "/hello", prompt="find greeting").content.startswith(
        "Prompt: find greeting\nURL: "
    )


@pytest.mark.parametrize(
    ("size", "truncated"),
    [(MAX_BODY_BYTES - 4096, False), (MAX_BODY_BYTES + 1, True)],
    ids=["under", "one-past"],
)
def test_webfetch_body_cap(base_url: str, size: int, truncated: bool) -> None:
    content = _fetch(f"{base_url}/size/{size}").content
    assert ("[body truncated at" in content) is truncated


def test_webfetch_body_cap_at_limit(base_url: str) -> None:
    content = _fetch(f"{base_url}/size/{MAX_BODY_BYTES}").content
    assert "[body truncated at" not in content


def test_webfetch_cancel_closes_open_read(base_url: str) -> None:
    scope = CancelScope()
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["result"] = _fetch(base_url + "/slow", scope)
        except Cancelled as exc:
            outcome["exc"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    assert FIRST_SENT.wait(10)
    scope.cancel()
    worker.join(timeout=5)
    assert not worker.is_alive()
    assert isinstance(outcome.get("exc"), Cancelled)


@pytest.mark.parametrize(
    ("url", "target"),
    [
        ("https://example.com/a", ("example.com", 443)),
        ("http://Example.COM:8080/", ("example.com", 8080)),
        ("http://127.0.0.1/", ("127.0.0.1", 80)),
        ("ftp://example.com/", None),
        ("not a url", None),
        ("http://example.com:99999/", None),
        ("http://example.com/\x00", None),
        ("http://exa\x00mple.com/", None),
    ],
    ids=[
        "https-default",
        "explicit-port",
        "http-default",
        "ftp",
        "garbage",
        "bad-port",
        "nul-in-path",
        "nul-in-host",
    ],
)
def test_network_target(url: str, target: tuple[str, int] | None) -> None:
    assert WebFetchTool().network_target({"url": url}) == target


@pytest.mark.parametrize(
    ("input", "message"),
    [
        ({"url": "file:///etc/passwd"}, "http or https"),
        ({"url": 3}, "must be a string"),
        ({"url": "http://127.0.0.1:1/"}, "request failed: ConnectError"),
        ({"url": "http://x/", "method": "POST"}, "unexpected parameter"),
        ({"url": "http://127.0.0.1:1/a\x00b"}, "control characters"),
        ({"url": "http://127.0.0.1:1/a\x7fb"}, "control characters"),
        ({"url": "http://127.0.0.1:1/a b"}, "whitespace"),
    ],
    ids=["file-scheme", "type", "refused", "unknown", "nul", "del", "space"],
)
def test_webfetch_errors(input: dict[str, Any], message: str) -> None:
    result = WebFetchTool().run(input, ToolContext(cwd=Path("/"), env={}), CancelScope())
    assert result.is_error and message in result.content
