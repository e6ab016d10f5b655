"""CallToolResult -> tool_result text and provider images (DEC-COMPAT-3, WIRE-022)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agentx.messages.mcp.results import MAX_IMAGE_BYTES, MAX_IMAGES, ImagePart, tool_output

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 8


def image(data: bytes = PNG, mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}


def keep(text: str) -> str:
    return text


@pytest.mark.parametrize(
    ("result", "text", "is_error"),
    [
        pytest.param({"content": [{"type": "text", "text": "5"}]}, "5", False, id="text"),
        pytest.param(
            {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            "a\nb",
            False,
            id="two-texts",
        ),
        pytest.param(
            {"content": [{"type": "text", "text": "boom"}], "isError": True},
            "boom",
            True,
            id="error",
        ),
        pytest.param(
            {"content": [], "structuredContent": {"b": 1, "a": 2}},
            '{"a": 2, "b": 1}',
            False,
            id="structured-only",
        ),
        pytest.param(
            {"content": [{"type": "text", "text": "t"}], "structuredContent": {"a": 1}},
            "t",
            False,
            id="text-wins-over-structured",
        ),
        pytest.param(
            {"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]},
            "[resource: file:///a]",
            False,
            id="resource-link",
        ),
        pytest.param(
            {"content": [{"type": "resource", "resource": {"uri": "u", "text": "inline"}}]},
            "inline",
            False,
            id="embedded-text",
        ),
        pytest.param(
            {"content": [{"type": "resource", "resource": {"uri": "u", "blob": "AAAA"}}]},
            "[resource omitted: u]",
            False,
            id="embedded-blob",
        ),
        pytest.param(
            {"content": [{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}]},
            "[audio content omitted]",
            False,
            id="audio",
        ),
        pytest.param(
            {"content": [image(mime="image/gif")]},
            "[image omitted: unsupported type image/gif]",
            False,
            id="gif",
        ),
        pytest.param(
            {"content": [{"type": "image", "data": "@@@", "mimeType": "image/png"}]},
            "[image omitted: invalid base64]",
            False,
            id="bad-base64",
        ),
        pytest.param({}, "", False, id="empty"),
        pytest.param({"content": "nope", "isError": "yes"}, "", False, id="malformed"),
    ],
)
def test_content_mapping(result: dict[str, Any], text: str, is_error: bool) -> None:
    out = tool_output(result, keep)
    assert (out.text, out.is_error) == (text, is_error)


def test_images_become_placeholders_and_parts() -> None:
    out = tool_output({"content": [{"type": "text", "text": "see"}, image()]}, keep)
    assert out.text == f"see\n[image: image/png, {len(PNG)} bytes]"
    assert out.images == (ImagePart(mime_type="image/png", data=PNG),)
    assert base64.b64encode(PNG).decode() not in out.text


def test_image_count_at_the_limit_and_one_past() -> None:
    out = tool_output({"content": [image()] * (MAX_IMAGES + 1)}, keep)
    assert len(out.images) == MAX_IMAGES
    assert out.text.splitlines()[-1] == f"[image omitted: more than {MAX_IMAGES} images]"


@pytest.mark.parametrize(
    ("size", "kept"), [(MAX_IMAGE_BYTES, True), (MAX_IMAGE_BYTES + 1, False)], ids=["at", "past"]
)
def test_image_size_at_the_limit_and_one_past(size: int, kept: bool) -> None:
    out = tool_output({"content": [image(PNG + b"\0" * (size - len(PNG)))]}, keep)
    assert bool(out.images) is kept
    if not kept:
        assert out.text == f"[image omitted: larger than {MAX_IMAGE_BYTES} bytes]"


def test_every_text_is_redacted() -> None:
    out = tool_output(
        {"content": [{"type": "text", "text": "token=s3cret"}], "structuredContent": None},
        lambda text: text.replace("s3cret", "[redacted]"),
    )
    assert out.text == "token=[redacted]"
