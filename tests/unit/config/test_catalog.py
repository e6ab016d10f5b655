"""Public provider projections (WIRE-016, WIRE-023, WIRE-024; scenarios 21, 25, 26, 27)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.config.auth_json import parse_registry
from agentx.config.catalog import (
    DESCRIPTIONS,
    UNSAFE_CATALOG,
    account,
    assert_catalog_safe,
    init_provider_fields,
    models_projection,
    provider_descriptor,
    providers_catalog,
)
from agentx.config.registry import (
    BUILTIN_REGISTRY,
    EFFORTS,
    PROVIDER_TYPES,
    ProviderDescriptor,
    Registry,
    RegistryError,
    credential_literals,
    route_binding,
    routing_literals,
)
from agentx.messages.encode import encode_record

DESCRIPTOR_KEYS = {
    "value",
    "id",
    "providerType",
    "model",
    "displayName",
    "description",
    "default",
    "selected",
    "supportsEffort",
    "supportedReasoningEfforts",
    "defaultReasoningEffort",
    "reasoning",
}
ROUTING_NAMES = ("endpoint", "deployment", "api_version", "apiVersion", "api_key", "headers")


def registry_of(*providers: dict[str, Any]) -> Registry:
    data = json.dumps({"version": 2, "providers": list(providers)}).encode()
    return parse_registry(data, source="auth.json")


# Scenario 27: distinctive sentinels in every credential-bearing field of every provider.
SENTINEL_REGISTRY = registry_of(
    {
        "id": "sol-east",
        "type": "azure_openai",
        "model": "gpt-5.6-sol",
        "default": True,
        "endpoint": "https://sentinel-endpoint-a.example",
        "deployment": "SENTINEL-DEPLOYMENT-A",
        "api_version": "SENTINEL-APIVERSION-A",
        "api_key": "SENTINEL-KEY-A",
        "headers": {"X-Tenant": "SENTINEL-HEADER-A"},
        "reasoning": {"efforts": ["low", "medium", "high"], "default": "high"},
        "pricing": {"input_per_mtok": 1.25, "output_per_mtok": 10.0},
    },
    {
        "id": "claude",
        "type": "anthropic",
        "model": "claude-opus",
        "endpoint": "https://sentinel-endpoint-b.example",
        "api_key": "SENTINEL-KEY-B",
        "reasoning": {"efforts": ["high", "minimal"], "default": "minimal"},
    },
    {
        "id": "ollama",
        "type": "openai",
        "model": "qwen3",
        "endpoint": "http://127.0.0.1:11434/v1",
        "headers": {"Authorization": "Bearer SENTINEL-TOKEN-C"},
    },
    {"id": "offline", "type": "scripted", "model": "scripted-model", "attachments": False},
)


def initialize_payload(registry: Registry, selected: ProviderDescriptor) -> dict[str, Any]:
    """The provider-derived members of a successful initialize response."""
    return {
        "models": models_projection(selected),
        "providers": providers_catalog(registry, selected.id),
        "account": account(),
    }


def test_init_fields_for_a_selected_nondefault_provider() -> None:
    """Scenario 25: exact id, type, model and ordered reasoning; nothing else."""
    claude = SENTINEL_REGISTRY.providers[1]
    fields = init_provider_fields(claude)
    assert fields == {
        "provider": "claude",
        "provider_type": "anthropic",
        "model": "claude-opus",
        "reasoning_capabilities": {
            "supported": True,
            "efforts": ["high", "minimal"],
            "defaultEffort": "minimal",
        },
    }
    text = json.dumps(fields)
    for other in ("sol-east", "gpt-5.6-sol", "ollama", "offline", *ROUTING_NAMES, "SENTINEL"):
        assert other not in text


def test_catalog_is_complete_ordered_and_marks_one_selection() -> None:
    """Scenario 26: every provider once, in source order, one selected, default independent."""
    catalog = providers_catalog(SENTINEL_REGISTRY, "ollama")
    assert [element["id"] for element in catalog] == ["sol-east", "claude", "ollama", "offline"]
    assert all(element["value"] == element["id"] for element in catalog)
    assert [element["selected"] for element in catalog] == [False, False, True, False]
    assert [element["default"] for element in catalog] == [True, False, False, False]
    assert all(set(element) == DESCRIPTOR_KEYS for element in catalog)
    assert catalog[0] == {
        "value": "sol-east",
        "id": "sol-east",
        "providerType": "azure_openai",
        "model": "gpt-5.6-sol",
        "displayName": "sol-east (gpt-5.6-sol)",
        "description": "Deployment-backed model endpoint configured by AgentX-home auth.json",
        "default": True,
        "selected": False,
        "supportsEffort": True,
        "supportedReasoningEfforts": ["low", "medium", "high"],
        "defaultReasoningEffort": "high",
        "reasoning": {
            "supported": True,
            "efforts": ["low", "medium", "high"],
            "defaultEffort": "high",
        },
    }


@pytest.mark.parametrize("selected", ["sol-east", "claude", "ollama", "offline"])
def test_flat_and_nested_reasoning_agree(selected: str) -> None:
    for element in providers_catalog(SENTINEL_REGISTRY, selected):
        nested = element["reasoning"]
        assert element["supportsEffort"] == nested["supported"] == bool(nested["efforts"])
        assert element["supportedReasoningEfforts"] == nested["efforts"]
        assert element["defaultReasoningEffort"] == nested["defaultEffort"]


def test_models_projection_is_one_selected_logical_model() -> None:
    """Scenario 26: one compatibility element with the selected provider and exact efforts."""
    claude = SENTINEL_REGISTRY.providers[1]
    (model,) = models_projection(claude)
    assert model["value"] == model["displayName"] == "claude-opus"
    assert model["provider"] == "claude"
    assert model["providerType"] == "anthropic"
    assert model["supportsEffort"] is True
    assert model["supportedReasoningEfforts"] == ["high", "minimal"]
    assert model["defaultReasoningEffort"] == "minimal"
    assert model["reasoning"] == init_provider_fields(claude)["reasoning_capabilities"]
    assert "claude" in model["description"]


def test_two_providers_sharing_one_model_keep_one_models_element() -> None:
    registry = registry_of(
        {"id": "a", "type": "scripted", "model": "same"},
        {"id": "b", "type": "scripted", "model": "same", "default": True},
    )
    assert [m["provider"] for m in models_projection(registry.providers[0])] == ["a"]
    assert [e["selected"] for e in providers_catalog(registry, "a")] == [True, False]


@pytest.mark.parametrize("selected", [p.id for p in SENTINEL_REGISTRY.providers], ids=str)
def test_no_sentinel_routing_field_binding_or_path_is_projected(selected: str) -> None:
    """Scenario 27, both initialization forms: system/init fields and the initialize payload."""
    desc = SENTINEL_REGISTRY.get(selected)
    assert desc is not None
    frames = [
        encode_record(init_provider_fields(desc) | {"apiKeySource": account()["apiKeySource"]}),
        encode_record(initialize_payload(SENTINEL_REGISTRY, desc)),
    ]
    forbidden = [
        "SENTINEL",
        "sentinel",
        "127.0.0.1",
        "/auth.json",
        *(f'"{name}"' for name in ROUTING_NAMES),
        *(route_binding(p) for p in SENTINEL_REGISTRY.providers),
    ]
    for frame in frames:
        for needle in forbidden:
            assert needle.encode() not in frame
    payload = initialize_payload(SENTINEL_REGISTRY, desc)
    assert len(payload["providers"]) == len(SENTINEL_REGISTRY.providers)
    assert_catalog_safe(payload, credential_literals(SENTINEL_REGISTRY))


def test_account_is_user_and_names_no_source() -> None:
    """WIRE-016 / scenario 21."""
    assert account() == {"apiKeySource": "user"}


def test_no_efforts_project_unsupported_with_null_default() -> None:
    (offline,) = [p for p in SENTINEL_REGISTRY.providers if p.id == "offline"]
    assert init_provider_fields(offline)["reasoning_capabilities"] == {
        "supported": False,
        "efforts": [],
        "defaultEffort": None,
    }


def test_builtin_local_descriptor() -> None:
    (element,) = providers_catalog(BUILTIN_REGISTRY, "local")
    assert element["displayName"] == "local (local-echo)"
    assert element["default"] is True
    assert element["selected"] is True
    assert element["description"] == DESCRIPTIONS["scripted"]


def test_every_type_has_a_description_without_routing_words() -> None:
    assert set(DESCRIPTIONS) == set(PROVIDER_TYPES)
    for text in DESCRIPTIONS.values():
        assert "http" not in text
        assert "model endpoint" in text


def test_selection_outside_the_registry_is_refused() -> None:
    with pytest.raises(RegistryError):
        providers_catalog(SENTINEL_REGISTRY, "missing")


def test_discovery_catalog_selects_nothing() -> None:
    catalog = providers_catalog(SENTINEL_REGISTRY, None)
    assert not any(element["selected"] for element in catalog)


@given(
    efforts=st.lists(st.sampled_from(EFFORTS), unique=True, max_size=len(EFFORTS)),
    pick=st.integers(min_value=0),
    default=st.booleans(),
    selected=st.booleans(),
)
def test_projection_reasoning_is_the_declaration(
    efforts: list[str], pick: int, default: bool, selected: bool
) -> None:
    reasoning: dict[str, Any] = {"efforts": efforts}
    if efforts:
        reasoning["default"] = efforts[pick % len(efforts)]
    desc = registry_of(
        {"id": "p", "type": "scripted", "model": "m", "reasoning": reasoning}
    ).providers[0]
    element = provider_descriptor(desc, default=default, selected=selected)
    nested = element["reasoning"]
    assert nested == init_provider_fields(desc)["reasoning_capabilities"]
    assert nested["efforts"] == efforts
    assert nested["supported"] is bool(efforts)
    assert (nested["defaultEffort"] in efforts) is bool(efforts)
    assert (element["default"], element["selected"]) == (default, selected)
    assert element["supportedReasoningEfforts"] == nested["efforts"]
    assert element["defaultReasoningEffort"] == nested["defaultEffort"]


def colliding(**overrides: Any) -> Registry:
    entry: dict[str, Any] = {
        "id": "sol-east",
        "type": "azure_openai",
        "model": "gpt-5.6-sol",
        "endpoint": "https://resource.example",
        "deployment": "dep",
        "api_version": "2025-04-01-preview",
        "api_key": "k3y",
        "reasoning": {"efforts": ["low", "high"], "default": "high"},
    }
    entry.update(overrides)
    return registry_of(entry)


@pytest.mark.parametrize(
    "registry",
    [
        pytest.param(colliding(api_key="sol-east"), id="key-equals-id"),
        pytest.param(colliding(deployment="gpt-5.6-sol"), id="deployment-equals-model"),
        pytest.param(colliding(api_version="high"), id="api-version-equals-effort"),
        pytest.param(colliding(headers={"X": "Deployment-backed"}), id="header-in-description"),
        pytest.param(colliding(api_key='","'), id="key-equals-field-separator"),
        pytest.param(colliding(api_key="e"), id="one-character-key"),
        pytest.param(colliding(model="see https://resource.example"), id="model-holds-endpoint"),
    ],
)
def test_colliding_public_metadata_fails_before_encoding(registry: Registry) -> None:
    desc = registry.providers[0]
    payload = initialize_payload(registry, desc)
    with pytest.raises(RegistryError) as caught:
        # DEC-AUTH-3a: projections are checked against secrets and routing data.
        assert_catalog_safe(payload, credential_literals(registry) | routing_literals(registry))
    assert str(caught.value) == UNSAFE_CATALOG


def test_safe_catalog_passes_as_object_and_as_bytes() -> None:
    registry = colliding()
    payload = initialize_payload(registry, registry.providers[0])
    literals = credential_literals(registry) | routing_literals(registry)
    assert_catalog_safe(payload, literals)
    assert_catalog_safe(encode_record(payload), literals)


def test_escaped_spelling_in_final_bytes_is_caught() -> None:
    frame = b'{"model":"gpt\\u002d5"}\n'
    with pytest.raises(RegistryError):
        assert_catalog_safe(frame, {"gpt-5"})
    assert_catalog_safe(frame, {"gpt-6"})
