"""``--model``: which profile serves it, and as which id (DEC-CLI-5, DEC-AUTH-2)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentx.config.auth_json import parse_registry
from agentx.config.models import ALIAS_MODELS, select_for_model, serves, validate_model
from agentx.config.registry import Registry, RegistryError


def registry(*entries: dict[str, Any]) -> Registry:
    data = json.dumps({"version": 2, "providers": list(entries)}).encode()
    return parse_registry(data, source="auth.json")


ANTHROPIC = {
    "id": "claude",
    "type": "anthropic",
    "model": "claude-opus-4-5",
    "endpoint": "https://a.example",
    "models": ["claude-sonnet-*"],
}
OPENAI = {"id": "oai", "type": "openai", "model": "gpt-5", "endpoint": "https://o.example"}
ANY = {**OPENAI, "id": "vllm", "model": "qwen3", "models": "any"}


@pytest.mark.parametrize(
    ("entries", "provider", "requested", "chosen", "model"),
    [
        pytest.param((ANTHROPIC,), None, None, "claude", "claude-opus-4-5", id="no-flag"),
        pytest.param((ANTHROPIC,), None, "default", "claude", "claude-opus-4-5", id="default"),
        pytest.param((ANTHROPIC,), None, "opus", "claude", "claude-opus-4-5", id="alias-own"),
        pytest.param(
            (ANTHROPIC,), None, "sonnet", "claude", ALIAS_MODELS["sonnet"], id="alias-listed"
        ),
        pytest.param(
            (ANTHROPIC,), None, "claude-sonnet-4-9", "claude", "claude-sonnet-4-9", id="pattern"
        ),
        pytest.param(
            (ANTHROPIC, OPENAI), None, "gpt-5", "oai", "gpt-5", id="second-serves-its-model"
        ),
        pytest.param((OPENAI, ANY), None, "llama", "vllm", "llama", id="any"),
        pytest.param((OPENAI, ANY), "vllm", "qwen3", "vllm", "qwen3", id="with-provider"),
        pytest.param(
            ({**OPENAI, "default": True}, ANY), None, "gpt-5", "oai", "gpt-5", id="default-first"
        ),
    ],
)
def test_model_selects_the_profile(
    entries: tuple[dict[str, Any], ...],
    provider: str | None,
    requested: str | None,
    chosen: str,
    model: str,
) -> None:
    desc = select_for_model(registry(*entries), provider, requested, {})
    assert (desc.id, desc.model) == (chosen, model)


@pytest.mark.parametrize(
    ("entries", "provider", "requested", "problem"),
    [
        pytest.param((ANTHROPIC,), None, "haiku", "no configured provider", id="alias-unserved"),
        pytest.param((OPENAI,), None, "sonnet", "no configured provider", id="alias-not-anthropic"),
        pytest.param((OPENAI,), None, "gpt-4", "no configured provider", id="unserved"),
        pytest.param((OPENAI, ANY), "oai", "llama", "--provider", id="provider-does-not-serve"),
    ],
)
def test_unserved_models_are_refused_without_echoing_them(
    entries: tuple[dict[str, Any], ...], provider: str | None, requested: str, problem: str
) -> None:
    with pytest.raises(RegistryError) as caught:
        select_for_model(registry(*entries), provider, requested, {})
    assert problem in str(caught.value) and requested not in str(caught.value)


def test_alias_follows_the_environment_override() -> None:
    environ = {"ANTHROPIC_DEFAULT_HAIKU_MODEL": "claude-sonnet-haiku-x"}
    desc = select_for_model(registry(ANTHROPIC), None, "haiku", environ)
    assert desc.model == "claude-sonnet-haiku-x"


def test_validate_model_within_the_selected_provider() -> None:
    desc = registry(ANTHROPIC).providers[0]
    assert validate_model(desc, "claude-sonnet-4-6", {}) == "claude-sonnet-4-6"
    assert serves(desc, "claude-opus-4-5") and not serves(desc, "gpt-5")
    with pytest.raises(RegistryError):
        validate_model(desc, "gpt-5", {})


@pytest.mark.parametrize(
    ("models", "problem"),
    [
        pytest.param("all", "must be an array", id="other-string"),
        pytest.param(["a", "a"], "duplicate model", id="duplicate"),
        pytest.param([""], "must not be empty", id="empty"),
        pytest.param([1], "must be a string", id="number"),
    ],
)
def test_models_member_is_checked(models: Any, problem: str) -> None:
    with pytest.raises(RegistryError) as caught:
        registry({**OPENAI, "models": models})
    assert problem in str(caught.value) and "providers[0].models" in str(caught.value)
