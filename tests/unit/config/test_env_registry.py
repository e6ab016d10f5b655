"""The implicit registry of the provider variables (DEC-AUTH-4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentx.config.env_registry import (
    ANTHROPIC_ENDPOINT,
    OPENAI_ENDPOINT,
    environment_registry,
    environment_secrets,
    is_offline,
    resolve_registry,
)
from agentx.config.models import ALIAS_MODELS
from agentx.config.registry import RegistryError, credential_literals

AZURE = {
    "AZURE_OPENAI_API_KEY": "az-key",
    "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
    "OPENAI_API_VERSION": "2025-04-01-preview",
    "AZURE_OPENAI_DEPLOYMENT": "dep",
}


def test_nothing_set_is_no_registry(tmp_path: Path) -> None:
    assert environment_registry({"ANTHROPIC_API_KEY": ""}) is None
    assert is_offline(resolve_registry(tmp_path, {}))


def test_anthropic_key() -> None:
    registry = environment_registry({"ANTHROPIC_API_KEY": "sk-a"})
    assert registry is not None
    (desc,) = registry.providers
    assert (desc.id, desc.type, desc.endpoint) == ("anthropic", "anthropic", ANTHROPIC_ENDPOINT)
    assert desc.model == ALIAS_MODELS["sonnet"] and desc.api_key == "sk-a"
    assert registry.effective_default() is desc and desc.from_environment


def test_anthropic_token_base_url_and_model() -> None:
    registry = environment_registry(
        {
            "ANTHROPIC_AUTH_TOKEN": "tok",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/x",
            "ANTHROPIC_MODEL": "opus",
        }
    )
    assert registry is not None
    (desc,) = registry.providers
    assert desc.api_key is None and dict(desc.headers) == {"Authorization": "Bearer tok"}
    assert desc.endpoint == "http://127.0.0.1:9/x" and desc.model == ALIAS_MODELS["opus"]
    assert "Bearer tok" in credential_literals(registry)


def test_both_families_anthropic_first_and_default() -> None:
    registry = environment_registry(
        {"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", **AZURE}
    )
    assert registry is not None
    assert [p.id for p in registry.providers] == ["anthropic", "openai", "azure-openai"]
    default = registry.effective_default()
    assert default is not None and default.id == "anthropic"
    openai = registry.get("openai")
    assert openai is not None and openai.endpoint == OPENAI_ENDPOINT
    azure = registry.get("azure-openai")
    assert azure is not None and (azure.deployment, azure.model) == ("dep", "dep")


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        pytest.param({"AZURE_OPENAI_API_KEY": "k"}, "AZURE_OPENAI_ENDPOINT", id="azure-partial"),
        pytest.param(
            {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "ftp://x"}, "OPENAI_BASE_URL", id="bad-url"
        ),
        pytest.param({"ANTHROPIC_API_KEY": "k\n"}, "ANTHROPIC_API_KEY", id="control-char"),
        pytest.param(
            {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "gpt-5"}, "ANTHROPIC_MODEL", id="model"
        ),
    ],
)
def test_unusable_variables_name_the_variable_not_the_value(
    environ: dict[str, str], named: str
) -> None:
    with pytest.raises(RegistryError) as caught:
        environment_registry(environ)
    assert named in str(caught.value)
    assert "k\n" not in str(caught.value) and "ftp://x" not in str(caught.value)


def test_auth_json_wins_but_the_variables_stay_secret(tmp_path: Path) -> None:
    (tmp_path / "auth.json").write_text(
        json.dumps({"version": 2, "providers": [{"id": "s", "type": "scripted", "model": "m"}]})
    )
    environ = {"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o", "OPENAI_MODEL": "m"}
    assert [p.id for p in resolve_registry(tmp_path, environ).providers] == ["s"]
    assert environment_secrets(environ) == {"sk-a", "sk-o"}
