"""McpTool and McpMedia: the turn engine's view of an MCP tool (DEC-SET-2, WIRE-022).

The call is an injected function returning a real future, as the manager's
event loop does; images go through the real blob store."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from agentx.mcp.client import McpCallError
from agentx.mcp.tools import NO_IMAGES_NOTE, McpMedia, McpTool, McpToolSet
from agentx.media.blobs import BlobStore
from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.status import accept_tools
from agentx.providers.base import Cancelled
from agentx.tools.base import MAX_OUTPUT_BYTES, encoded_size
from agentx.turns.cancel import CancelScope

PNG = b"\x89PNG\r\n\x1a\n" + b"\1" * 24
JPEG = b"\xff\xd8\xff" + b"\2" * 24
(INFO,) = accept_tools(
    "pics",
    [{"name": "draw", "description": "Draw.", "inputSchema": {"type": "object"}}],
    lambda text: text,
)


def answering(result: Mapping[str, Any] | BaseException) -> Any:
    calls: list[tuple[str, str, Mapping[str, Any]]] = []

    def call(server: str, tool: str, arguments: Mapping[str, Any]) -> Future[Mapping[str, Any]]:
        calls.append((server, tool, arguments))
        future: Future[Mapping[str, Any]] = Future()
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)
        return future

    call.calls = calls  # type: ignore[attr-defined]
    return call


def image(data: bytes, mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}


def tool(result: Mapping[str, Any] | BaseException, media: McpMedia | None = None) -> McpTool:
    return McpTool(info=INFO, call=answering(result), redact=lambda t: t, media=media)


def test_spec_summary_and_arguments() -> None:
    call = answering({"content": [{"type": "text", "text": "ok"}]})
    mcp = McpTool(info=INFO, call=call, redact=lambda t: t)
    assert mcp.name == "mcp__pics__draw"
    assert mcp.spec.description == "Draw."
    assert mcp.summarize({"secret": "x"}) == "MCP tool draw of server pics"
    assert mcp.execute(FrozenDict(n=(1, 2)), CancelScope(), tool_use_id="t1") == ("ok", False)
    assert call.calls == [("pics", "draw", {"n": [1, 2]})]


def test_images_are_filed_for_the_provider(tmp_path: Path) -> None:
    media = McpMedia(BlobStore(tmp_path / "blobs"), qualified=lambda: None)
    text, is_error = tool({"content": [image(PNG)]}, media).execute(
        FrozenDict(), CancelScope(), tool_use_id="toolu_1"
    )
    assert (text, is_error) == (f"[image: image/png, {len(PNG)} bytes]", False)
    (block,) = media.take("toolu_1")
    assert block.data == PNG and block.sha256 == hashlib.sha256(PNG).hexdigest()
    assert (block.kind, block.mime_type, block.name) == ("image", "image/png", "toolu_1-1")
    assert media.take("toolu_1") == ()


def test_an_image_whose_bytes_lie_about_its_type_is_dropped(tmp_path: Path) -> None:
    media = McpMedia(BlobStore(tmp_path / "blobs"), qualified=lambda: None)
    text, _ = tool({"content": [image(JPEG, "image/png")]}, media).execute(
        FrozenDict(), CancelScope(), tool_use_id="toolu_2"
    )
    assert text.endswith("\n[image 1 omitted: its bytes are not image/png]")
    assert media.take("toolu_2") == ()


def test_without_a_media_ledger_images_are_noted_not_sent() -> None:
    text, _ = tool({"content": [image(PNG)]}).execute(FrozenDict(), CancelScope(), tool_use_id="t")
    assert text == f"[image: image/png, {len(PNG)} bytes]{NO_IMAGES_NOTE}"


def test_a_failed_call_is_an_error_result() -> None:
    out = tool(McpCallError("MCP server pics is not connected")).execute(
        FrozenDict(), CancelScope()
    )
    assert out == ("MCP server pics is not connected", True)


def test_a_cancelled_call_raises_cancelled() -> None:
    pending: Future[Mapping[str, Any]] = Future()
    mcp = McpTool(info=INFO, call=lambda *_: pending, redact=lambda t: t)
    scope = CancelScope()
    scope.cancel()
    with pytest.raises(Cancelled):
        mcp.execute(FrozenDict(), scope)
    assert pending.cancelled()


@pytest.mark.parametrize(
    ("size", "truncated"),
    [(MAX_OUTPUT_BYTES, False), (MAX_OUTPUT_BYTES + 1, True)],
    ids=["at-limit", "one-past"],
)
def test_text_is_capped(size: int, truncated: bool) -> None:
    text, _ = tool({"content": [{"type": "text", "text": "y" * size}]}).execute(
        FrozenDict(), CancelScope()
    )
    assert encoded_size(text) <= MAX_OUTPUT_BYTES
    assert ("[output truncated" in text) is truncated


def test_tool_set_replaces_as_a_whole() -> None:
    tools = McpToolSet()
    assert tools() == ()
    one = tool({})
    tools.replace((one,))
    assert tools() == (one,)


def test_images_are_omitted_when_the_runtime_failed_its_check(tmp_path: Path) -> None:
    """MOD-A14B: the verdict is asked before the first image is kept; a
    failing runtime keeps none and says so in the tool result."""
    asked: list[str] = []

    def failing() -> str:
        asked.append("asked")
        return "pypdf does not import: ImportError"

    media = McpMedia(BlobStore(tmp_path / "blobs"), qualified=failing)
    text, is_error = tool({"content": [image(PNG), image(PNG)]}, media).execute(
        FrozenDict(), CancelScope(), tool_use_id="toolu_3"
    )
    assert not is_error
    assert text.endswith("\n[2 image(s) omitted: attachments are disabled]")
    assert media.take("toolu_3") == ()
    assert asked == ["asked"]
    assert not (tmp_path / "blobs").exists() or not any((tmp_path / "blobs").rglob("blob_*"))
