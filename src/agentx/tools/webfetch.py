"""The ``WebFetch`` tool: one bounded HTTP(S) GET with httpx.

Before ``run`` the caller asks the synthetic ``SandboxNetworkAccess``
permission for :meth:`WebFetchTool.network_target` (WIRE-PERM-004,
WIRE-PERM-023). Because that permission names one host and port, redirects
are followed only while they stay on that origin; a redirect elsewhere is
reported to the model, which may fetch the new URL (and be asked again).
The body is capped at :data:`MAX_BODY_BYTES`. The whole call, redirects
included, has one deadline of :data:`TOTAL_TIMEOUT_S` from the first connect
to the last byte, headers included (DECISIONS section 8,
:mod:`agentx.providers.net_deadline`): a server that trickles its headers or
body cannot stretch it. A cancel closes the open response at once.

httpx is imported at the first fetch, not with the tool registry: a session
that never fetches never loads it (start-up, bench/startup_bench.py).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin, urlsplit

from agentx.providers.base import Cancelled, CancelToken
from agentx.tools.base import (
    ToolContext,
    ToolInputError,
    ToolOutput,
    check_members,
    error,
    get_optional_str,
    get_str,
    invalid_input,
    output,
)
from agentx.tools.specs import MAX_BODY_BYTES, WEB_FETCH

if TYPE_CHECKING:
    import socket

    import httpx

TOTAL_TIMEOUT_S: Final = 30.0
MAX_REDIRECTS: Final = 5
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_USER_AGENT: Final = "agentx-webfetch"


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; ToolInputError otherwise (a
    URL with whitespace or a control character such as NUL included)."""
    if not url.isprintable() or any(ch.isspace() for ch in url):
        raise ToolInputError("url must not contain whitespace or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise ToolInputError("url is not a valid URL") from None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        raise ToolInputError("url must be an absolute http or https URL")
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


class _SocketCutter:
    """Cancellation that reaches a blocked read: shut down the call's sockets.

    Closing an httpx client from another thread does not wake a thread
    blocked in ``recv``; ``shutdown`` on the socket does. The sockets are
    learnt through httpx's ``trace`` extension.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._cut = False

    def trace(self, name: str, info: Mapping[str, Any]) -> None:
        if name not in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            return
        sock = info["return_value"].get_extra_info("socket")
        with self._lock:
            self._sockets.append(sock)
            cut = self._cut
        if cut:
            _shutdown(sock)

    def cut(self) -> None:
        with self._lock:
            self._cut = True
            sockets = tuple(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def forget(self) -> None:
        with self._lock:
            self._sockets.clear()


def _shutdown(sock: socket.socket) -> None:
    import socket  # noqa: PLC0415 - loaded with the first fetch's cancel (DEC-CLI-3)

    with contextlib.suppress(OSError):  # already closed by the reading thread
        sock.shutdown(socket.SHUT_RDWR)


class WebFetchTool:
    name: Final = "WebFetch"
    spec: Final = WEB_FETCH
    #: It changes nothing; its network reach is asked about separately (WIRE-PERM-023).
    read_only: Final = True

    def summarize(self, input: Mapping[str, Any]) -> str:
        return f"Fetch {get_str(input, 'url')}"

    def paths(self, input: Mapping[str, Any], cwd: Path) -> tuple[Path, ...]:
        return ()

    def network_target(self, input: Mapping[str, Any]) -> tuple[str, int] | None:
        """The ``{"host","port"}`` of the SandboxNetworkAccess ask; None for bad input."""
        try:
            _, host, port = _origin(get_str(input, "url"))
        except ToolInputError:
            return None
        return host, port

    def __init__(self, *, total_timeout_s: float = TOTAL_TIMEOUT_S) -> None:
        self._total_timeout_s = total_timeout_s

    def run(self, input: Mapping[str, Any], ctx: ToolContext, cancel: CancelToken) -> ToolOutput:
        try:
            check_members(input, self.spec)
            url = get_str(input, "url")
            origin = _origin(url)
            prompt = get_optional_str(input, "prompt")
        except ToolInputError as exc:
            return invalid_input(self.name, exc)
        import httpx  # noqa: PLC0415 - at the first fetch (module docstring)

        from agentx.providers.net_deadline import deadline_transport  # noqa: PLC0415

        deadline = time.monotonic() + self._total_timeout_s
        sockets = _SocketCutter()
        cancel.on_cancel(sockets.cut)
        with httpx.Client(
            timeout=httpx.Timeout(10.0),
            follow_redirects=False,
            trust_env=False,
            transport=deadline_transport(deadline),
        ) as client:
            try:
                return self._fetch(
                    client,
                    url,
                    origin=origin,
                    prompt=prompt,
                    deadline=deadline,
                    cancel=cancel,
                    sockets=sockets,
                )
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                if cancel.is_set():
                    raise Cancelled from None
                if time.monotonic() >= deadline:
                    return error(self._timed_out())
                return error(f"WebFetch: request failed: {type(exc).__name__}")
            finally:
                sockets.forget()

    def _timed_out(self) -> str:
        return f"WebFetch: timed out after {self._total_timeout_s:g} s"

    def _fetch(
        self,
        client: httpx.Client,
        url: str,
        *,
        origin: tuple[str, str, int],
        prompt: str | None,
        deadline: float,
        cancel: CancelToken,
        sockets: _SocketCutter,
    ) -> ToolOutput:
        for _ in range(MAX_REDIRECTS + 1):
            if cancel.is_set():
                raise Cancelled
            with client.stream(
                "GET",
                url,
                headers={"User-Agent": _USER_AGENT},
                extensions={"trace": sockets.trace},
            ) as response:
                if response.is_redirect:
                    target = urljoin(url, response.headers.get("location", ""))
                    try:
                        same_origin = _origin(target) == origin
                    except ToolInputError:
                        same_origin = False
                    if not same_origin:
                        return output(
                            f"Redirected ({response.status_code}) to another origin: {target}\n"
                            "Fetch that URL to follow it."
                        )
                    url = target
                    continue
                body = bytearray()
                truncated = False
                for data in response.iter_bytes():
                    if cancel.is_set():
                        raise Cancelled
                    if time.monotonic() > deadline:
                        return error(self._timed_out())
                    body += data
                    if len(body) > MAX_BODY_BYTES:
                        del body[MAX_BODY_BYTES:]
                        truncated = True
                        break
                if cancel.is_set():  # a cut socket can look like a short body
                    raise Cancelled
                text = body.decode(response.encoding or "utf-8", errors="replace")
                head = f"Prompt: {prompt}\n" if prompt else ""
                head += f"URL: {url}\nStatus: {response.status_code}\n"
                head += f"Content-Type: {response.headers.get('content-type', 'unknown')}\n"
                if truncated:
                    head += f"[body truncated at {MAX_BODY_BYTES} bytes]\n"
                return output(f"{head}\n{text}", is_error=response.status_code >= 400)
        return error(f"WebFetch: more than {MAX_REDIRECTS} redirects")
