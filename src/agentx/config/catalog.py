"""Public provider projections, built only from registry descriptors.

- WIRE-023: :func:`init_provider_fields`, the selected provider in ``system/init``.
- WIRE-024: :func:`provider_descriptor` and :func:`providers_catalog` (the
  complete, ordered, credential-free catalog), :func:`models_projection` (the
  one-element compatibility ``models`` array) and :func:`assert_catalog_safe`.
- WIRE-016: :func:`account`.

Each projection copies only public fields (id, type, model, efforts, the
effective default and the selection). Endpoint, deployment, api_version,
api_key, headers, the route binding and the auth.json path never enter one;
:func:`assert_catalog_safe` then proves that no public value collides with the
credential union before anything is encoded.

A provider without efforts projects ``supported: false``, ``efforts: []`` and
``defaultEffort: null``: nothing can be a member of an empty array, so the
rule "defaultEffort is a member of efforts" (WIRE-023) holds whenever there is
a default, and ``null`` keeps the closed shape complete.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentx.config.registry import ProviderDescriptor, ProviderType, Registry, RegistryError
from agentx.messages.encode import encode_record
from agentx.messages.guard import CredentialValidator

#: The ``description`` of a catalog element, per provider type (WIRE-024: the
#: phrase "model endpoint" names the profile's role, never a URL).
DESCRIPTIONS: Mapping[ProviderType, str] = {
    "azure_openai": "Deployment-backed model endpoint configured by AgentX-home auth.json",
    "openai": "OpenAI-compatible model endpoint configured by AgentX-home auth.json",
    "anthropic": "Anthropic Messages API model endpoint configured by AgentX-home auth.json",
    "scripted": "Offline scripted model endpoint (no network access)",
}

#: DEC-AUTH-4: the ``description`` of a profile made from environment variables.
ENVIRONMENT_DESCRIPTION = "{kind} model endpoint configured by environment variables"
_KINDS: Mapping[ProviderType, str] = {
    "azure_openai": "Deployment-backed",
    "openai": "OpenAI-compatible",
    "anthropic": "Anthropic Messages API",
    "scripted": "Offline scripted",
}

#: WIRE-016: the standalone AgentX-home auth.json profile is file-backed.
API_KEY_SOURCE = "user"

UNSAFE_CATALOG = "public provider metadata collides with credential material (WIRE-024)"


def reasoning_capabilities(desc: ProviderDescriptor) -> dict[str, Any]:
    """The nested reasoning declaration (WIRE-023), in declared order."""
    return {
        "supported": bool(desc.efforts),
        "efforts": list(desc.efforts),
        "defaultEffort": desc.default_effort,
    }


def _flat_effort_fields(desc: ProviderDescriptor) -> dict[str, Any]:
    """The flat effort fields; they agree with the nested object by construction (WIRE-024)."""
    return {
        "supportsEffort": bool(desc.efforts),
        "supportedReasoningEfforts": list(desc.efforts),
        "defaultReasoningEffort": desc.default_effort,
        "reasoning": reasoning_capabilities(desc),
    }


def init_provider_fields(desc: ProviderDescriptor) -> dict[str, Any]:
    """The selected-provider members of ``system/init`` (WIRE-023)."""
    return {
        "provider": desc.id,
        "provider_type": desc.type,
        "model": desc.model,
        "reasoning_capabilities": reasoning_capabilities(desc),
    }


def provider_descriptor(
    desc: ProviderDescriptor, *, default: bool, selected: bool
) -> dict[str, Any]:
    """One element of the closed public catalog shape (WIRE-024)."""
    return {
        "value": desc.id,
        "id": desc.id,
        "providerType": desc.type,
        "model": desc.model,
        "displayName": f"{desc.id} ({desc.model})",
        "description": (
            ENVIRONMENT_DESCRIPTION.format(kind=_KINDS[desc.type])
            if desc.from_environment
            else DESCRIPTIONS[desc.type]
        ),
        "default": default,
        "selected": selected,
        **_flat_effort_fields(desc),
    }


def providers_catalog(registry: Registry, selected_id: str | None) -> list[dict[str, Any]]:
    """Every provider once, in auth.json order (WIRE-024, WIRE-026).

    ``default`` is the effective resolution (a singleton is the default even
    without the flag). ``selected_id`` marks exactly one element; None marks
    none, as prelaunch discovery requires (WIRE-026).
    """
    if selected_id is not None and registry.get(selected_id) is None:
        raise RegistryError("the selected provider is not in the registry")
    default = registry.effective_default()
    return [
        provider_descriptor(desc, default=desc is default, selected=desc.id == selected_id)
        for desc in registry.providers
    ]


def models_projection(desc: ProviderDescriptor) -> list[dict[str, Any]]:
    """The one-element ``models`` compatibility array for the selected logical model (WIRE-024)."""
    return [
        {
            "value": desc.model,
            "displayName": desc.model,
            "description": f"Process-fixed model of provider {desc.id}; restart with --provider",
            "provider": desc.id,
            "providerType": desc.type,
            **_flat_effort_fields(desc),
        }
    ]


#: WIRE-016: a key from the process environment is transient provenance.
TEMPORARY_KEY_SOURCE = "temporary"


def account(desc: ProviderDescriptor | None = None) -> dict[str, str]:
    """The initialize response's ``account`` (WIRE-016): never a path, field
    name or value. A profile made from environment variables (DEC-AUTH-4) is
    ``temporary``; auth.json and the built-in registry are ``user``."""
    temporary = desc is not None and desc.from_environment
    return {"apiKeySource": TEMPORARY_KEY_SOURCE if temporary else API_KEY_SOURCE}


#: DEC-AUTH-3: a credential this short is called too short rather than contained.
SHORT_CREDENTIAL = 8


def assert_catalog_safe(
    projection: bytes | Mapping[str, Any],
    literals: Iterable[str],
    members: Mapping[str, str] | None = None,
) -> None:
    """Fail before encoding when a public projection would disclose a credential (WIRE-024).

    ``projection`` is final bytes, or a JSON object (e.g. the initialize
    response payload holding ``providers``, ``models`` and ``account``) checked
    in its wire encoding. The check is the output guard's (WIRE-013): every
    spelling of every literal, across field boundaries and inside escaped
    strings. The error is credential-free: with ``members`` (literal -> the
    member it came from, public names only) it names the member and the cause,
    too short or contained in a public value (DEC-AUTH-3).
    """
    frame = projection if isinstance(projection, bytes) else encode_record(projection)
    literals = tuple(literals)
    if CredentialValidator(literals).check(frame):
        return
    for literal in sorted(literals, key=len):
        member = (members or {}).get(literal)
        if member is None or CredentialValidator((literal,)).check(frame):
            continue
        if len(literal) < SHORT_CREDENTIAL:
            cause = (
                f"it is too short ({len(literal)} characters) and occurs in the public "
                "provider metadata (id, model, description)"
            )
        else:
            cause = (
                "it is contained in a public value of the provider metadata "
                "(id, model, description)"
            )
        raise RegistryError(f"{member}: {cause}; set the real value, or rename the public one")
    raise RegistryError(UNSAFE_CATALOG)
