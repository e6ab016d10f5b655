"""The conversation projected onto Chat Completions messages (DECISIONS 7 projection).

The system prompt is the first ``system`` message. An assistant message keeps
its text and its tool uses as ``tool_calls`` (arguments as a JSON string); a
user message's tool results come first as ``tool`` messages (they answer the
previous assistant turn), then its text, images (``image_url`` data URLs)
and PDFs (``file`` parts), inside the request body only (WIRE-022).
"""

from __future__ import annotations

import base64
from typing import Any

from agentx.providers.base import (
    MediaBlock,
    Message,
    ModelRequest,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentx.providers.http import json_body


def chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """Project the conversation onto Chat Completions messages."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": request.system})
    for message in request.messages:
        if message.role == "assistant":
            messages.append(_assistant_message(message))
        else:
            messages.extend(_user_messages(message))
    return messages


def _assistant_message(message: Message) -> dict[str, Any]:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case TextBlock(text=text):
                texts.append(text)
            case ThinkingBlock() | RedactedThinkingBlock():
                continue  # signed Anthropic thinking: no Chat Completions form
            case ToolUseBlock(id=call_id, name=name, input=arguments):
                calls.append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json_body(arguments).decode()},
                    }
                )
            case _:
                raise ValueError(f"{type(block).__name__} cannot appear in an assistant message")
    projected: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
    if calls:
        projected["tool_calls"] = calls
    return projected


def _user_messages(message: Message) -> list[dict[str, Any]]:
    """Tool results first (they answer the previous assistant turn), then the rest."""
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in message.content:
        match block:
            case ToolResultBlock(tool_use_id=call_id, content=content, is_error=is_error):
                results.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": f"Error: {content}" if is_error else content,
                    }
                )
            case TextBlock(text=text):
                parts.append({"type": "text", "text": text})
            case MediaBlock():
                parts.append(_media_part(block))
            case _:
                raise ValueError(f"{type(block).__name__} cannot appear in a user message")
    if len(parts) == 1 and parts[0]["type"] == "text":
        return [*results, {"role": "user", "content": parts[0]["text"]}]
    return [*results, {"role": "user", "content": parts}] if parts else results


def _media_part(block: MediaBlock) -> dict[str, Any]:
    url = f"data:{block.mime_type};base64,{base64.b64encode(block.data).decode('ascii')}"
    if block.kind == "image":
        return {"type": "image_url", "image_url": {"url": url}}
    return {"type": "file", "file": {"filename": block.name, "file_data": url}}
