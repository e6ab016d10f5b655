"""The overall deadline of one model request, from auth.json to the built
client (DECISIONS section 4, DEC-AUTH-2 ``timeout_ms``, default 600000 ms)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentx.config.auth_json import parse_registry
from agentx.config.registry import DEFAULT_TIMEOUT_MS
from agentx.providers.anthropic import AnthropicClient
from agentx.providers.build import build_client
from agentx.providers.openai import OpenAIClient

ENTRIES: dict[str, dict[str, Any]] = {
    "openai": {"endpoint": "https://api.example.test/v1"},
    "azure_openai": {
        "endpoint": "https://example-resource.openai.azure.test",
        "deployment": "gpt-dep",
        "api_version": "2025-04-01-preview",
    },
    "anthropic": {"endpoint": "https://api.anthropic.example.test"},
}


def client_for(kind: str, **members: Any) -> OpenAIClient | AnthropicClient:
    entry = {"id": "p1", "type": kind, "model": "m1", "api_key": "k-1", **ENTRIES[kind], **members}
    data = json.dumps({"version": 2, "providers": [entry]}).encode()
    (desc,) = parse_registry(data, source="auth.json").providers
    if "timeout_ms" not in members:
        assert desc.timeout_ms == 600_000 == DEFAULT_TIMEOUT_MS
    client = build_client(desc)
    assert isinstance(client, OpenAIClient | AnthropicClient)
    return client


@pytest.mark.parametrize("kind", sorted(ENTRIES))
def test_a_provider_without_timeout_ms_gets_a_600_s_deadline(kind: str) -> None:
    client = client_for(kind)
    try:
        assert client.deadline == 600.0
    finally:
        client.close()


@pytest.mark.parametrize("kind", sorted(ENTRIES))
def test_timeout_ms_reaches_the_built_client(kind: str) -> None:
    """The configured value, not the client's own default, is what bounds a request."""
    client = client_for(kind, timeout_ms=1234)
    try:
        assert client.deadline == 1.234
    finally:
        client.close()
