"""An MCP ``CallToolResult`` as a tool result (DEC-COMPAT-3, WIRE-022).

Sans-IO. :func:`tool_output` turns the result's JSON (``content`` blocks,
``structuredContent``, ``isError``) into the ``tool_result`` text and the
image parts that go to the provider only: an image becomes a short
placeholder line in the text (never base64 on stdout, whose lines stay under
1 MiB) and an :class:`ImagePart` with the decoded bytes. Every server text
passes through ``redact`` (the server's own header and env values, and the
rest of the credential union) before it can reach a record.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from msgspec import Struct

from agentx.messages.frozen import repr_without

#: Images a result may carry to the provider (the attachment types, MOD-083), and bounds.
IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg"})
MAX_IMAGES: Final = 4
MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024


class ImagePart(Struct, frozen=True, kw_only=True):
    """An image for the provider (the attachments-style media path)."""

    mime_type: str
    data: bytes

    def __repr__(self) -> str:
        return repr_without(self, frozenset({"data"}))


class McpToolOutput(Struct, frozen=True, kw_only=True):
    """The text for ``tool_result`` (capped by the caller) and the provider images."""

    text: str
    is_error: bool
    images: tuple[ImagePart, ...] = ()


def tool_output(result: Mapping[str, Any], redact: Callable[[str], str]) -> McpToolOutput:
    """Map one ``CallToolResult`` (wire JSON) to :class:`McpToolOutput`."""
    lines: list[str] = []
    images: list[ImagePart] = []
    content = result.get("content")
    for block in content if isinstance(content, list | tuple) else ():
        if isinstance(block, Mapping):
            lines.append(_block_text(block, images))
    structured = result.get("structuredContent")
    if not lines and structured is not None:
        lines.append(json.dumps(structured, ensure_ascii=False, sort_keys=True))
    return McpToolOutput(
        text=redact("\n".join(lines)),
        is_error=result.get("isError") is True,
        images=tuple(images),
    )


def _block_text(block: Mapping[str, Any], images: list[ImagePart]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "image":
        return _image(block, images)
    if kind == "resource_link":
        return f"[resource: {block.get('uri', '')}]"
    if kind == "resource":
        resource = block.get("resource")
        if isinstance(resource, Mapping) and isinstance(resource.get("text"), str):
            return str(resource["text"])
        uri = resource.get("uri", "") if isinstance(resource, Mapping) else ""
        return f"[resource omitted: {uri}]"
    return f"[{kind if isinstance(kind, str) else 'unknown'} content omitted]"


def _image(block: Mapping[str, Any], images: list[ImagePart]) -> str:
    mime = block.get("mimeType")
    data = block.get("data")
    if mime not in IMAGE_TYPES or not isinstance(data, str):
        return f"[image omitted: unsupported type {mime if isinstance(mime, str) else ''}]"
    if len(images) == MAX_IMAGES:
        return f"[image omitted: more than {MAX_IMAGES} images]"
    if len(data) > (MAX_IMAGE_BYTES + 2) // 3 * 4:
        return f"[image omitted: larger than {MAX_IMAGE_BYTES} bytes]"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "[image omitted: invalid base64]"
    if len(raw) > MAX_IMAGE_BYTES:
        return f"[image omitted: larger than {MAX_IMAGE_BYTES} bytes]"
    images.append(ImagePart(mime_type=str(mime), data=raw))
    return f"[image: {mime}, {len(raw)} bytes]"
