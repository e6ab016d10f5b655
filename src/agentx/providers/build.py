"""The provider client for a frozen selection (DEC-AUTH-2, DEC-SCRIPT-1).

The HTTP clients are imported only for their own type, so a scripted
session loads no HTTP stack.
"""

from __future__ import annotations

from pathlib import Path

from agentx.config.registry import ProviderDescriptor
from agentx.providers.base import ProviderClient, RequestOptions
from agentx.providers.scripted import ScriptedClient, load_script_document


def build_client(desc: ProviderDescriptor, options: RequestOptions | None = None) -> ProviderClient:
    """The provider client for the frozen selection; ``options`` (DEC-CLI-5)
    reach the Anthropic client (other types take none, checked at start)."""
    if desc.type == "scripted":
        if desc.script is None:
            return ScriptedClient(model=desc.model)
        script = load_script_document(Path(desc.script))
        return ScriptedClient(model=desc.model, turns=script.turns, suggestions=script.suggestions)
    assert desc.endpoint is not None  # DEC-AUTH-2: required for HTTP providers
    api_key = desc.api_key or ""
    if desc.type == "anthropic":
        from agentx.providers.anthropic import AnthropicClient  # noqa: PLC0415

        return AnthropicClient(
            desc.endpoint,
            api_key,
            desc.headers,
            desc.model,
            deadline=desc.timeout_ms / 1000,
            options=options,
            provider_id=desc.id,
        )
    from agentx.providers.openai import AzureRoute, OpenAIClient  # noqa: PLC0415

    azure = None
    if desc.type == "azure_openai":
        assert desc.deployment is not None and desc.api_version is not None
        azure = AzureRoute(deployment=desc.deployment, api_version=desc.api_version)
    return OpenAIClient(
        desc.endpoint,
        api_key,
        desc.headers,
        desc.model,
        azure=azure,
        deadline=desc.timeout_ms / 1000,
        provider_id=desc.id,
    )
