"""MCP tools as the turn engine's tools (DEC-SET-2).

:class:`McpTool` is a :class:`~agentx.turns.contracts.ToolRunner` named
``mcp__<server>__<tool>`` with the server's JSON Schema; it goes through the
same permission path as every built-in tool (rules may name ``mcp__server``
or ``mcp__server__tool``). A call is handed to the MCP manager's event loop
as a future; an interrupt cancels that future, which cancels the call on the
loop (the server is sent a cancellation), and the turn ends promptly.

:class:`McpToolSet` is the live list the engine reads before each model call:
servers connect after ``system/init`` and may come and go.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError, Future
from typing import TYPE_CHECKING, Any

from agentx.diagnostics import logger
from agentx.messages.frozen import FrozenDict, thaw
from agentx.messages.mcp.status import ToolInfo
from agentx.providers.base import Cancelled, MediaBlock, ToolSpec
from agentx.tools.base import output
from agentx.turns.cancel import CancelScope
from agentx.turns.contracts import ToolRunner

if TYPE_CHECKING:
    from agentx.media.blobs import Blobs
    from agentx.messages.mcp.results import ImagePart
    from agentx.messages.mcp.search import SearchMode

#: Appended when images cannot go to the provider (it accepts no attachments).
NO_IMAGES_NOTE = "\n[images omitted: the selected provider does not accept images]"

#: Start one call: (server, tool, arguments) -> the ``CallToolResult`` JSON.
CallTool = Callable[[str, str, Mapping[str, Any]], "Future[Mapping[str, Any]]"]


class McpTool:
    """One server tool offered to the model."""

    __slots__ = ("_call", "_info", "_media", "_redact", "_spec")

    def __init__(
        self,
        *,
        info: ToolInfo,
        call: CallTool,
        redact: Callable[[str], str],
        media: McpMedia | None = None,
    ) -> None:
        self._info = info
        self._call = call
        self._redact = redact
        self._media = media
        self._spec = ToolSpec(
            name=info.full_name, description=info.description, input_schema=info.input_schema
        )

    @property
    def name(self) -> str:
        return self._info.full_name

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def summarize(self, tool_input: Mapping[str, Any]) -> str:
        """WIRE-PERM-003: names only; the arguments may hold anything."""
        return f"MCP tool {self._info.name} of server {self._info.server}"

    def execute(
        self, tool_input: FrozenDict, cancel: CancelScope, *, tool_use_id: str | None = None
    ) -> tuple[str, bool]:
        text, is_error, images = self.run(tool_input, cancel)
        if images and tool_use_id is not None and self._media is not None:
            text = output(text + self._media.put(tool_use_id, images), is_error=is_error).content
        elif images:
            text = output(text + NO_IMAGES_NOTE, is_error=is_error).content
        return text, is_error

    def start(self, arguments: Mapping[str, Any]) -> Future[Mapping[str, Any]]:
        """Start one call (bounded by the manager's call timeout); cancelling
        the future cancels it. The permission prompt tool's way in."""
        return self._call(self._info.server, self._info.name, thaw(arguments))

    def output(self, result: Mapping[str, Any]) -> tuple[str, bool]:
        """A ``CallToolResult``'s redacted text and error flag."""
        from agentx.messages.mcp.results import tool_output  # noqa: PLC0415 - as in run

        mapped = tool_output(result, self._redact)
        return mapped.text, mapped.is_error

    def run(
        self, tool_input: FrozenDict, cancel: CancelScope
    ) -> tuple[str, bool, tuple[ImagePart, ...]]:
        """The capped text, the error flag and the images for the provider.

        Raises :class:`Cancelled` when ``cancel`` fires during the call.
        """
        # Loaded with the manager's event loop, before any tool exists; the
        # result mapping with the first call (start-up, DEC-CLI-3).
        from agentx.mcp.client import McpCallError  # noqa: PLC0415
        from agentx.messages.mcp.results import tool_output  # noqa: PLC0415

        future = self._call(self._info.server, self._info.name, thaw(tool_input))
        cancel.on_cancel(lambda: _cancel(future))
        try:
            # Deadline enforced elsewhere: the call runs under the manager's
            # call timeout on the loop (McpConnections.call), and ``cancel``
            # cancels it.
            result = future.result()
        except CancelledError:
            raise Cancelled from None
        except McpCallError as exc:
            return output(str(exc), is_error=True).content, True, ()
        mapped = tool_output(result, self._redact)
        capped = output(mapped.text, is_error=mapped.is_error)
        return capped.content, capped.is_error, mapped.images


class McpMedia:
    """Images of MCP results on their way to the provider (never to stdout).

    ``execute`` files a result's images under its tool-use id; the turn engine
    takes them when it builds the tool-results message, where they follow the
    ``tool_result`` blocks as media blocks (the attachments projection). They
    are checked like attachments (magic bytes match the declared type, MOD-083)
    and stored in the content-addressed blob store, so a resumed session's
    transcript can reload them.
    """

    def __init__(self, store: Blobs, *, qualified: Callable[[], str | None]) -> None:
        self._store = store
        #: MOD-A14B: why images cannot be kept (None: they can), asked before
        #: the first is kept (:class:`agentx.media.deferred.RuntimeVerdict`).
        self._qualified = qualified
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[MediaBlock, ...]] = {}

    def put(self, tool_use_id: str, images: tuple[ImagePart, ...]) -> str:
        """File the images that pass; returns a note for those that did not."""
        kept: list[MediaBlock] = []
        notes = []
        if images and self._qualified() is not None:
            notes.append(f"\n[{len(images)} image(s) omitted: attachments are disabled]")
            images = ()
        for index, image in enumerate(images):
            # Pillow and the blob store load with the first image an MCP tool
            # returns, never for a result without one (start-up, DEC-CLI-3).
            from agentx.media.admission import check_magic  # noqa: PLC0415
            from agentx.media.blobs import StorageFull  # noqa: PLC0415

            if check_magic(image.mime_type, image.data[:16]) is not None:
                notes.append(f"\n[image {index + 1} omitted: its bytes are not {image.mime_type}]")
                continue
            try:
                stored = self._store.put_bytes(image.data)
            except StorageFull:
                notes.append(f"\n[image {index + 1} omitted: attachment storage is full]")
                continue
            kept.append(
                MediaBlock(
                    kind="image",
                    mime_type=image.mime_type,
                    name=f"{tool_use_id}-{index + 1}",
                    data=image.data,
                    sha256=stored.sha256,
                    size_bytes=stored.size_bytes,
                )
            )
        with self._lock:
            self._pending[tool_use_id] = tuple(kept)
        return "".join(notes)

    def take(self, tool_use_id: str) -> tuple[MediaBlock, ...]:
        with self._lock:
            return self._pending.pop(tool_use_id, ())


class McpToolSet:
    """The current MCP tools, replaced as a whole (read from any thread).

    DEC-SET-2: :meth:`wait_ready` holds a model request while a server is
    still in its first connection attempt, at most ``ready_timeout`` seconds
    per request (each attempt is bounded by the connect timeout too), and
    returns at once when the turn is cancelled.

    Calling the set gives the tools to offer: all of them, or, when their
    schemas are deferred (:func:`~agentx.messages.mcp.search.deferred`),
    ``ToolSearch`` and the tools it loaded (:meth:`load`; loaded for the rest
    of the session). :meth:`all` is every connected tool.
    """

    def __init__(
        self,
        ready_timeout: float = 0.0,
        *,
        search: SearchMode | None = None,
        context_window: int = 0,
    ) -> None:
        self._lock = threading.Lock()
        self._tools: tuple[McpTool, ...] = ()
        self._offered: tuple[ToolRunner, ...] = ()
        self._ready_timeout = ready_timeout
        self._ready = threading.Event()
        self._waiters: list[threading.Event] = []
        self._search = search
        self._context_window = context_window
        self._loaded: set[str] = set()

    def replace(self, tools: tuple[McpTool, ...], *, starting: bool = False) -> None:
        with self._lock:
            self._tools = tools
            self._offered = self._choose()
            if starting:
                self._ready.clear()
                return
            self._ready.set()
            waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            waiter.set()

    def wait_ready(self, cancel: CancelScope) -> None:
        """Return once no server is in its first attempt, the turn is
        cancelled, or ``ready_timeout`` passed (the request then goes with
        the tools connected so far)."""
        woken = threading.Event()
        with self._lock:
            if self._ready.is_set():
                return
            self._waiters.append(woken)
        cancel.on_cancel(woken.set)
        if not woken.wait(self._ready_timeout):
            logger.warning(
                "MCP servers still connecting after {} s; the request goes without their tools",
                self._ready_timeout,
            )
        with self._lock:
            if woken in self._waiters:
                self._waiters.remove(woken)

    def __call__(self) -> tuple[ToolRunner, ...]:
        with self._lock:
            return self._offered

    def all(self) -> tuple[McpTool, ...]:
        with self._lock:
            return self._tools

    def load(self, names: tuple[str, ...]) -> None:
        """``ToolSearch`` found these: offer them from the next request on."""
        with self._lock:
            self._loaded.update(names)
            self._offered = self._choose()

    def _choose(self) -> tuple[ToolRunner, ...]:
        """What to offer (lock held): every tool, unless deferred (DEC-SET-2)."""
        if self._search is None:
            return self._tools
        from agentx.messages.mcp.search import deferred, spec_chars  # noqa: PLC0415

        chars = sum(
            spec_chars(t.name, t.spec.description, t.spec.input_schema) for t in self._tools
        )
        if not deferred(chars, self._context_window, self._search):
            return self._tools
        from agentx.mcp.search import ToolSearchTool  # noqa: PLC0415

        waiting = tuple(t for t in self._tools if t.name not in self._loaded)
        loaded = tuple(t for t in self._tools if t.name in self._loaded)
        return (ToolSearchTool(waiting, self.load), *loaded) if waiting else loaded


def _cancel(future: Future[Mapping[str, Any]]) -> None:
    future.cancel()
