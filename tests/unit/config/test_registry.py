"""The strict auth.json registry (DEC-HOME-1, DEC-AUTH-1..5, DEC-CLI-5)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.config.auth_json import MAX_AUTH_JSON_BYTES, load_registry, parse_registry
from agentx.config.home import agentx_home
from agentx.config.registry import (
    BUILTIN_REGISTRY,
    ProviderDescriptor,
    Registry,
    RegistryError,
    check_effort,
    credential_literals,
    route_binding,
    routing_literals,
    select_provider,
)
from agentx.messages.pricing import Pricing

# Distinctive sentinels (scenario 27): none may ever appear in a diagnostic.
KEY = "SENTINEL-KEY-7f3a"
HEADER = "SENTINEL-HEADER-91c2"
ENDPOINT = "https://sentinel-endpoint-44b1.example"
DEPLOYMENT = "SENTINEL-DEPLOYMENT-0d9e"
API_VERSION = "SENTINEL-APIVERSION-5e6f"
SENTINELS = (KEY, HEADER, ENDPOINT, DEPLOYMENT, API_VERSION, "sentinel")


def azure(**members: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "sol-east",
        "type": "azure_openai",
        "model": "gpt-5.6-sol",
        "default": True,
        "endpoint": ENDPOINT,
        "deployment": DEPLOYMENT,
        "api_version": API_VERSION,
        "api_key": KEY,
        "headers": {"X-Extra": HEADER},
        "reasoning": {"efforts": ["low", "medium", "high"], "default": "high"},
        "pricing": {"input_per_mtok": 1.25, "output_per_mtok": 10.0},
    }
    entry.update(members)
    return entry


def openai(**members: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "vllm",
        "type": "openai",
        "model": "qwen3",
        "endpoint": "http://127.0.0.1:8000/v1",
    }
    entry.update(members)
    return entry


def scripted(**members: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": "script", "type": "scripted", "model": "scripted-model"}
    entry.update(members)
    return entry


def document(*providers: dict[str, Any], **top: Any) -> bytes:
    body: dict[str, Any] = {"version": 2, "providers": list(providers)}
    body.update(top)
    return json.dumps(body).encode()


def without(entry: dict[str, Any], name: str) -> dict[str, Any]:
    trimmed = copy.deepcopy(entry)
    del trimmed[name]
    return trimmed


def parse(data: bytes) -> Registry:
    return parse_registry(data, source="auth.json")


# --- accepted documents ----------------------------------------------------------


def test_full_azure_entry_parses_every_field() -> None:
    (provider,) = parse(document(azure())).providers
    assert provider == ProviderDescriptor(
        id="sol-east",
        type="azure_openai",
        model="gpt-5.6-sol",
        declared_default=True,
        endpoint=ENDPOINT,
        deployment=DEPLOYMENT,
        api_version=API_VERSION,
        api_key=KEY,
        headers=provider.headers,
        efforts=("low", "medium", "high"),
        default_effort="high",
        pricing=Pricing(input_per_mtok=1.25, output_per_mtok=10.0),
        attachments=True,
        script=None,
    )
    assert dict(provider.headers) == {"X-Extra": HEADER}
    with pytest.raises(TypeError):
        provider.headers["X-Extra"] = "changed"


@pytest.mark.parametrize(
    ("entry", "check"),
    [
        pytest.param(
            openai(), lambda p: p.endpoint == "http://127.0.0.1:8000/v1", id="openai-minimal"
        ),
        pytest.param(
            openai(type="anthropic", endpoint="https://api.anthropic.com"),
            lambda p: p.type == "anthropic" and p.api_key is None,
            id="anthropic-without-key",
        ),
        pytest.param(
            scripted(), lambda p: p.endpoint is None and p.script is None, id="scripted-echo"
        ),
        pytest.param(
            scripted(script="turns.json"), lambda p: p.script == "turns.json", id="scripted-script"
        ),
        pytest.param(
            scripted(endpoint=ENDPOINT, api_key=KEY),
            lambda p: p.endpoint == ENDPOINT and p.api_key == KEY,
            id="scripted-may-carry-credentials",
        ),
        pytest.param(
            openai(), lambda p: p.efforts == () and p.default_effort is None, id="no-reasoning"
        ),
        pytest.param(
            openai(reasoning={"efforts": []}),
            lambda p: p.efforts == () and p.default_effort is None,
            id="empty-efforts",
        ),
        pytest.param(
            openai(reasoning={"efforts": ["xhigh", "minimal"], "default": "minimal"}),
            lambda p: p.efforts == ("xhigh", "minimal") and p.default_effort == "minimal",
            id="efforts-keep-declared-order",
        ),
        pytest.param(openai(), lambda p: p.pricing is None, id="pricing-absent-is-unknown"),
        pytest.param(
            openai(pricing={"input_per_mtok": 0, "output_per_mtok": 0}),
            lambda p: p.pricing == Pricing(input_per_mtok=0.0, output_per_mtok=0.0),
            id="pricing-known-zero",
        ),
        pytest.param(
            openai(attachments=False), lambda p: p.attachments is False, id="attachments-off"
        ),
        pytest.param(openai(), lambda p: p.attachments is True, id="attachments-default-true"),
        pytest.param(openai(), lambda p: p.context_window == 200_000, id="context-window-default"),
        pytest.param(
            openai(context_window=1), lambda p: p.context_window == 1, id="context-window-minimum"
        ),
        pytest.param(openai(id="a" * 64), lambda p: len(p.id) == 64, id="id-64-chars"),
        pytest.param(openai(id="0.a_b-c"), lambda p: p.id == "0.a_b-c", id="id-punctuation"),
        pytest.param(
            openai(model="modèle-ü"), lambda p: p.model == "modèle-ü", id="model-non-ascii"
        ),
    ],
)
def test_accepted_entries(entry: dict[str, Any], check: Any) -> None:
    (provider,) = parse(document(entry)).providers
    assert check(provider)


def test_escape_spelled_member_names_decode_to_known_members() -> None:
    data = b'{"version":2,"providers":[{"\\u0069d":"a","type":"scripted","model":"m"}]}'
    assert parse(data).providers[0].id == "a"


def test_case_differing_members_are_distinct_and_unknown() -> None:
    data = document(scripted(ID="x"))
    with pytest.raises(RegistryError) as caught:
        parse(data)
    assert caught.value.path == "providers[0][member 4]"


# --- rejected documents: every DEC-AUTH rule ---------------------------------------

DUP_KEY = (
    b'{"version":2,"providers":[{"id":"a","type":"openai","model":"m",'
    b'"endpoint":"http://h","api_key":"SENTINEL-KEY-1","\\u0061pi_key":"SENTINEL-KEY-2"}]}'
)
DUP_HEADER = (
    b'{"version":2,"providers":[{"id":"a","type":"openai","model":"m","endpoint":"http://h",'
    b'"headers":{"X-A":"SENTINEL-1","X-A":"SENTINEL-2"}}]}'
)
DUP_TOP = b'{"version":2,"version":2,"providers":[]}'
DUP_IN_UNKNOWN = (
    b'{"version":2,"providers":[{"id":"a","type":"scripted","model":"m","x":{"k":1,"k":2}}]}'
)

REJECTED = [
    # (id, data, path, problem fragment)
    ("dup-escape-equivalent", DUP_KEY, "providers[0].api_key", "duplicate member"),
    ("dup-header", DUP_HEADER, "providers[0].headers[member 2]", "duplicate member"),
    ("dup-top-level", DUP_TOP, "version", "duplicate member"),
    ("dup-anywhere", DUP_IN_UNKNOWN, "providers[0][member 4][member 2]", "duplicate member"),
    ("not-utf8", b'{"version":2,"providers":[{"id":"\xff"}]}', "", "not UTF-8"),
    ("bom", b"\xef\xbb\xbf" + document(scripted()), "", "not valid JSON"),
    ("not-json", b'{"version":2,', "", "not valid JSON"),
    ("trailing-garbage", document(scripted()) + b"x", "", "not valid JSON"),
    ("nan", b'{"version":2,"providers":[],"x":NaN}', "", "not finite"),
    (
        "overflow",
        document(openai(pricing={"input_per_mtok": 1, "output_per_mtok": 1})).replace(
            b'"output_per_mtok": 1', b'"output_per_mtok": 1e400'
        ),
        "",
        "not finite",
    ),
    ("huge-int", b'{"version":' + b"9" * 5000 + b"}", "", "too long"),
    ("deep", b"[" * 100_000 + b"]" * 100_000, "", "nesting too deep"),
    (
        "lone-surrogate",
        b'{"version":2,"providers":[{"id":"\\ud800"}]}',
        "providers[0].id",
        "surrogate",
    ),
    ("top-not-object", b"[]", "", "must be an object"),
    ("unknown-top", document(scripted(), extra=1), "member 3", "unknown member"),
    ("missing-version", b'{"providers":[]}', "version", "missing required"),
    ("version-1", document(scripted(), version=1), "version", "integer 2"),
    ("version-3", document(scripted(), version=3), "version", "integer 2"),
    ("version-float", document(scripted(), version=2.0), "version", "integer 2"),
    ("version-string", document(scripted(), version="2"), "version", "integer 2"),
    ("version-bool", document(scripted(), version=True), "version", "integer 2"),
    ("providers-object", document(providers={}), "providers", "array"),
    ("providers-empty", document(), "providers", "at least one"),
    ("provider-not-object", document("x"), "providers[0]", "object"),  # type: ignore[arg-type]
    ("missing-type", document(without(openai(), "type")), "providers[0].type", "missing"),
    ("unknown-type", document(openai(type="bedrock")), "providers[0].type", "one of"),
    ("type-not-string", document(openai(type=1)), "providers[0].type", "string"),
    ("unknown-member", document(openai(timeout=3)), "providers[0][member 5]", "unknown member"),
    (
        "unknown-member-odd-name",
        document(openai(**{"a b": 1})),
        "providers[0][member 5]",
        "unknown",
    ),
    ("missing-id", document(without(openai(), "id")), "providers[0].id", "missing"),
    ("id-empty", document(openai(id="")), "providers[0].id", "empty"),
    ("id-65-chars", document(openai(id="a" * 65)), "providers[0].id", "must match"),
    ("id-uppercase", document(openai(id="Vllm")), "providers[0].id", "must match"),
    ("id-leading-dot", document(openai(id=".vllm")), "providers[0].id", "must match"),
    ("id-trailing-newline", document(openai(id="vllm\n")), "providers[0].id", "control"),
    ("id-slash", document(openai(id="a/b")), "providers[0].id", "must match"),
    ("id-number", document(openai(id=1)), "providers[0].id", "string"),
    ("duplicate-id", document(openai(), openai()), "providers[1].id", "duplicate provider id"),
    ("missing-model", document(without(openai(), "model")), "providers[0].model", "missing"),
    ("model-empty", document(openai(model="")), "providers[0].model", "empty"),
    ("model-control", document(openai(model="a\tb")), "providers[0].model", "control"),
    ("default-string", document(openai(default="true")), "providers[0].default", "boolean"),
    (
        "two-defaults",
        document(openai(default=True), openai(id="b", default=True)),
        "providers[1].default",
        "second provider",
    ),
    (
        "missing-endpoint",
        document(without(openai(), "endpoint")),
        "providers[0].endpoint",
        "missing",
    ),
    (
        "endpoint-not-url",
        document(openai(endpoint="sentinel.example")),
        "providers[0].endpoint",
        "URL",
    ),
    ("endpoint-ftp", document(openai(endpoint="ftp://sentinel")), "providers[0].endpoint", "URL"),
    ("endpoint-no-host", document(openai(endpoint="https://")), "providers[0].endpoint", "URL"),
    (
        "endpoint-bad-port",
        document(openai(endpoint="http://h:99999")),
        "providers[0].endpoint",
        "URL",
    ),
    ("endpoint-bad-ipv6", document(openai(endpoint="http://[::1")), "providers[0].endpoint", "URL"),
    ("endpoint-space", document(openai(endpoint="http://h/a b")), "providers[0].endpoint", "URL"),
    (
        "azure-missing-deployment",
        document(without(azure(), "deployment")),
        "providers[0].deployment",
        "missing",
    ),
    (
        "azure-missing-api-version",
        document(without(azure(), "api_version")),
        "providers[0].api_version",
        "missing",
    ),
    (
        "deployment-on-openai",
        document(openai(deployment=DEPLOYMENT)),
        "providers[0].deployment",
        "only accepted for type azure_openai",
    ),
    (
        "api-version-on-anthropic",
        document(openai(type="anthropic", api_version=API_VERSION)),
        "providers[0].api_version",
        "only accepted for type azure_openai",
    ),
    (
        "script-on-openai",
        document(openai(script="s.json")),
        "providers[0].script",
        "only accepted for type scripted",
    ),
    (
        "deployment-on-scripted",
        document(scripted(deployment=DEPLOYMENT)),
        "providers[0].deployment",
        "only accepted",
    ),
    ("script-empty", document(scripted(script="")), "providers[0].script", "empty"),
    ("api-key-number", document(openai(api_key=12345)), "providers[0].api_key", "string"),
    ("api-key-empty", document(openai(api_key="")), "providers[0].api_key", "empty"),
    ("api-key-crlf", document(openai(api_key=KEY + "\r\n")), "providers[0].api_key", "control"),
    ("headers-array", document(openai(headers=[HEADER])), "providers[0].headers", "object"),
    (
        "header-value-number",
        document(openai(headers={"X-A": 1})),
        "providers[0].headers[member 1]",
        "string",
    ),
    (
        "header-value-newline",
        document(openai(headers={"X-A": HEADER + "\n"})),
        "providers[0].headers[member 1]",
        "control",
    ),
    (
        "header-name-space",
        document(openai(headers={"X A": HEADER})),
        "providers[0].headers[member 1]",
        "header name",
    ),
    (
        "header-name-case-dup",
        document(openai(headers={"X-A": HEADER, "x-a": KEY})),
        "providers[0].headers[member 2]",
        "case-insensitive",
    ),
    ("reasoning-array", document(openai(reasoning=["low"])), "providers[0].reasoning", "object"),
    (
        "reasoning-unknown",
        document(openai(reasoning={"efforts": [], "budget": 1})),
        "providers[0].reasoning[member 2]",
        "unknown",
    ),
    (
        "reasoning-no-efforts",
        document(openai(reasoning={"default": "low"})),
        "providers[0].reasoning.efforts",
        "missing",
    ),
    (
        "efforts-string",
        document(openai(reasoning={"efforts": "low"})),
        "providers[0].reasoning.efforts",
        "array",
    ),
    (
        "effort-unknown",
        document(openai(reasoning={"efforts": ["low", "huge"], "default": "low"})),
        "providers[0].reasoning.efforts[1]",
        "one of",
    ),
    (
        "effort-number",
        document(openai(reasoning={"efforts": [1]})),
        "providers[0].reasoning.efforts[0]",
        "string",
    ),
    (
        "effort-duplicate",
        document(openai(reasoning={"efforts": ["low", "low"], "default": "low"})),
        "providers[0].reasoning.efforts[1]",
        "duplicate effort",
    ),
    (
        "effort-default-missing",
        document(openai(reasoning={"efforts": ["low"]})),
        "providers[0].reasoning.default",
        "required",
    ),
    (
        "effort-default-not-member",
        document(openai(reasoning={"efforts": ["low"], "default": "high"})),
        "providers[0].reasoning.default",
        "declared efforts",
    ),
    (
        "effort-default-with-none",
        document(openai(reasoning={"efforts": [], "default": "low"})),
        "providers[0].reasoning.default",
        "declared efforts",
    ),
    (
        "effort-default-unknown",
        document(openai(reasoning={"efforts": ["low"], "default": "max"})),
        "providers[0].reasoning.default",
        "declared efforts",
    ),
    (
        "effort-default-null",
        document(openai(reasoning={"efforts": ["low"], "default": None})),
        "providers[0].reasoning.default",
        "string",
    ),
    ("pricing-array", document(openai(pricing=[1, 2])), "providers[0].pricing", "object"),
    (
        "pricing-missing-output",
        document(openai(pricing={"input_per_mtok": 1})),
        "providers[0].pricing.output_per_mtok",
        "missing",
    ),
    (
        "pricing-unknown",
        document(openai(pricing={"input_per_mtok": 1, "output_per_mtok": 1, "cache": 1})),
        "providers[0].pricing[member 3]",
        "unknown",
    ),
    (
        "pricing-negative",
        document(openai(pricing={"input_per_mtok": -0.01, "output_per_mtok": 1})),
        "providers[0].pricing.input_per_mtok",
        "negative",
    ),
    (
        "pricing-string",
        document(openai(pricing={"input_per_mtok": "1", "output_per_mtok": 1})),
        "providers[0].pricing.input_per_mtok",
        "number",
    ),
    (
        "pricing-bool",
        document(openai(pricing={"input_per_mtok": 1, "output_per_mtok": False})),
        "providers[0].pricing.output_per_mtok",
        "number",
    ),
    (
        "attachments-string",
        document(openai(attachments="false")),
        "providers[0].attachments",
        "boolean",
    ),
    ("attachments-null", document(openai(attachments=None)), "providers[0].attachments", "boolean"),
    (
        "context-window-zero",
        document(openai(context_window=0)),
        "providers[0].context_window",
        "positive integer",
    ),
    (
        "context-window-bool",
        document(openai(context_window=True)),
        "providers[0].context_window",
        "positive integer",
    ),
    (
        "context-window-float",
        document(openai(context_window=1000.0)),
        "providers[0].context_window",
        "positive integer",
    ),
]


@pytest.mark.parametrize(
    ("data", "path", "problem"),
    [pytest.param(data, path, problem, id=name) for name, data, path, problem in REJECTED],
)
def test_rejected_documents_name_path_and_problem_but_no_value(
    data: bytes, path: str, problem: str
) -> None:
    with pytest.raises(RegistryError) as caught:
        parse(data)
    error = caught.value
    assert error.path == path
    assert problem in error.problem
    message = str(error)
    assert message.startswith("auth.json: ")
    assert (f"auth.json: {path}: " if path else "auth.json: ") in message
    for sentinel in SENTINELS:
        assert sentinel.lower() not in message.lower()


# A mistyped member or header name can be a key: a diagnostic names its
# position, never the name, wherever it sits and whatever is wrong with it.
SECRET_NAME = "sk-proj-SENTINEL-NAME-2b8d"
SECRET_NAME_ROWS = [
    ("top-level-unknown", {"version": 2, "providers": [scripted()], SECRET_NAME: 1}, "member 3"),
    ("provider-unknown", document(openai(**{SECRET_NAME: "x"})), "providers[0][member 5]"),
    (
        "unknown-in-second-provider",
        document(scripted(), openai(**{SECRET_NAME: True})),
        "providers[1][member 5]",
    ),
    (
        "reasoning-unknown",
        document(openai(reasoning={"efforts": [], SECRET_NAME: 1})),
        "providers[0].reasoning[member 2]",
    ),
    (
        "pricing-unknown",
        document(openai(pricing={SECRET_NAME: 1, "input_per_mtok": 1, "output_per_mtok": 1})),
        "providers[0].pricing[member 1]",
    ),
    (
        "header-value-not-string",
        document(openai(headers={SECRET_NAME: 1})),
        "providers[0].headers[member 1]",
    ),
    (
        "header-name-not-a-token",
        document(openai(headers={"Bearer " + SECRET_NAME: HEADER})),
        "providers[0].headers[member 1]",
    ),
    (
        "duplicate-unknown",
        b'{"version":2,"providers":[],"'
        + SECRET_NAME.encode()
        + b'":1,"'
        + SECRET_NAME.encode()
        + b'":2}',
        "member 4",
    ),
    (
        "nested-in-unknown",
        document(openai(**{SECRET_NAME: {"k": "\ud800"}})),
        "providers[0][member 5][member 1]",
    ),
]


@pytest.mark.parametrize(
    ("data", "path"),
    [pytest.param(data, path, id=name) for name, data, path in SECRET_NAME_ROWS],
)
def test_diagnostics_never_name_an_unknown_member_or_header(data: Any, path: str) -> None:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    with pytest.raises(RegistryError) as caught:
        parse(raw)
    assert caught.value.path == path
    assert "SENTINEL" not in str(caught.value) and "sk-proj" not in str(caught.value)


@given(st.binary(max_size=200))
def test_arbitrary_bytes_only_ever_raise_registry_error(data: bytes) -> None:
    with contextlib.suppress(RegistryError):
        parse(data)


# Every generated string value is marked, so an echo of any value is detectable.
MARKED_TEXT = st.text(max_size=6).map(lambda text: f"VAL<{text}>")
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | MARKED_TEXT,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    member=st.sampled_from(
        ["id", "model", "endpoint", "api_key", "headers", "reasoning", "pricing"]
    ),
    value=JSON_VALUES,
)
def test_any_value_in_any_member_is_accepted_or_refused_without_echo(
    member: str, value: Any
) -> None:
    try:
        parse(document(openai(**{member: value})))
    except RegistryError as error:
        assert "VAL<" not in str(error)


# --- selection, effort, literals, binding ----------------------------------------


TWO = parse(document(openai(id="a", model="ma"), openai(id="b", model="mb", default=True)))
NO_DEFAULT = parse(document(openai(id="a"), openai(id="b")))
SINGLE = parse(document(openai(id="only")))


@pytest.mark.parametrize(
    ("registry", "requested", "expected"),
    [
        pytest.param(TWO, "a", "a", id="explicit-nondefault"),
        pytest.param(TWO, None, "b", id="declared-default"),
        pytest.param(SINGLE, None, "only", id="singleton-is-default"),
        pytest.param(NO_DEFAULT, "b", "b", id="explicit-without-default"),
        pytest.param(BUILTIN_REGISTRY, None, "local", id="builtin"),
    ],
)
def test_select_provider(registry: Registry, requested: str | None, expected: str) -> None:
    assert select_provider(registry, requested).id == expected


@pytest.mark.parametrize(
    ("registry", "requested", "problem"),
    [
        pytest.param(
            NO_DEFAULT,
            None,
            "several providers and no default: pass --provider ID",
            id="no-default",
        ),
        pytest.param(TWO, "zz-sentinel", "--provider: no provider with that id", id="unknown-id"),
    ],
)
def test_select_provider_errors(registry: Registry, requested: str | None, problem: str) -> None:
    with pytest.raises(RegistryError) as caught:
        select_provider(registry, requested)
    assert problem in str(caught.value)
    assert "sentinel" not in str(caught.value)


def test_effective_default() -> None:
    assert TWO.effective_default() is TWO.providers[1]
    assert SINGLE.effective_default() is SINGLE.providers[0]
    assert NO_DEFAULT.effective_default() is None


REASONING = parse(document(azure())).providers[0]
FLAT = parse(document(openai())).providers[0]


@pytest.mark.parametrize(
    ("desc", "effort", "expected"),
    [
        pytest.param(REASONING, None, "high", id="declared-default"),
        pytest.param(REASONING, "low", "low", id="declared-effort"),
        pytest.param(FLAT, None, None, id="no-efforts-no-flag"),
    ],
)
def test_effort_accepted(
    desc: ProviderDescriptor, effort: str | None, expected: str | None
) -> None:
    assert check_effort(desc, effort) == expected


@pytest.mark.parametrize(
    ("desc", "effort", "problem"),
    [
        pytest.param(REASONING, "xhigh", "one of low, medium, high", id="undeclared-effort"),
        pytest.param(REASONING, "max", "one of low, medium, high", id="undeclared-max"),
        pytest.param(REASONING, "huge", "one of low, medium, high", id="unknown-effort"),
        pytest.param(FLAT, "low", "declares no reasoning efforts", id="no-efforts"),
    ],
)
def test_effort_refused(desc: ProviderDescriptor, effort: str, problem: str) -> None:
    with pytest.raises(RegistryError) as caught:
        check_effort(desc, effort)
    assert problem in str(caught.value)


def test_credential_literals_are_the_secrets_of_every_provider(tmp_path: Path) -> None:
    """DEC-AUTH-3: secret values only; DEC-AUTH-3a: routing data is its own set."""
    second = openai(api_key="KEY-2", headers={"A": "H-1", "B": "H-2"})
    (tmp_path / "auth.json").write_bytes(document(azure(), second))
    registry = load_registry(tmp_path)
    assert credential_literals(registry) == {KEY, HEADER, "KEY-2", "H-1", "H-2"}
    assert routing_literals(registry) == {
        ENDPOINT,
        DEPLOYMENT,
        API_VERSION,
        "http://127.0.0.1:8000/v1",
        str((tmp_path / "auth.json").absolute()),
    }


@pytest.mark.parametrize(
    ("endpoint", "secrets"),
    [
        pytest.param("https://h.example/v1", set(), id="plain"),
        pytest.param("https://tok3n@h.example", {"tok3n"}, id="user-token"),
        pytest.param("https://u:p%40ss@h.example", {"u", "p%40ss", "p@ss"}, id="user-password"),
        pytest.param(
            "https://h.example/v1?key=s%2Bk&code=c0de",
            {"s%2Bk", "s+k", "c0de"},
            id="query-values",
        ),
        pytest.param("https://h.example/v1?flag", set(), id="query-without-value"),
    ],
)
def test_endpoint_secrets_are_user_info_and_query_values(endpoint: str, secrets: set[str]) -> None:
    """DEC-AUTH-3: a password, token or query value in an endpoint is a secret."""
    registry = parse(document(openai(endpoint=endpoint)))
    assert credential_literals(registry) == secrets


def test_public_protocol_header_values_are_not_secrets() -> None:
    """DEC-AUTH-3: anthropic-version, anthropic-beta, user-agent, accept and
    content-type carry protocol values, every other header a secret."""
    headers = {
        "Anthropic-Version": "2023-06-01",
        "anthropic-beta": "b-1",
        "User-Agent": "ua",
        "Accept": "a",
        "content-type": "c",
        "X-Org": "org-secret",
    }
    registry = parse(document(openai(headers=headers)))
    assert credential_literals(registry) == {"org-secret"}


def test_builtin_registry_has_no_credential_material() -> None:
    assert credential_literals(BUILTIN_REGISTRY) == frozenset()


def test_repr_never_shows_credentials(tmp_path: Path) -> None:
    (tmp_path / "auth.json").write_bytes(document(azure()))
    registry = load_registry(tmp_path)
    shown = repr(registry)
    assert "sol-east" in shown
    for literal in credential_literals(registry) | routing_literals(registry):
        assert literal not in shown


ROUTE_FIELDS = frozenset({"endpoint", "deployment", "api_version", "api_key", "headers"})


@pytest.mark.parametrize(
    ("name", "shown"),
    [pytest.param(name, name not in ROUTE_FIELDS, id=name) for name in ProviderDescriptor._fields],
)
def test_descriptor_repr_shows_exactly_the_public_fields(name: str, shown: bool) -> None:
    """A NamedTuple's own repr would show every field; the registry's hides the route."""
    desc = parse(document(azure())).providers[0]
    text = repr(desc)
    assert (f"{name}={getattr(desc, name)!r}" in text) is shown
    assert (re.search(rf"[(, ]{name}=", text) is not None) is shown


def binding(**members: Any) -> str:
    return route_binding(parse(document(azure(**members))).providers[0])


def test_route_binding_is_sha256_hex_and_stable() -> None:
    value = binding()
    assert len(value) == 64
    assert int(value, 16) >= 0
    assert value == binding(api_key="other-key", model="other-model", headers={})


@pytest.mark.parametrize(
    "members",
    [
        pytest.param({"endpoint": "https://other.example"}, id="endpoint"),
        pytest.param({"deployment": "other"}, id="deployment"),
        pytest.param({"api_version": "2024-01-01"}, id="api_version"),
    ],
)
def test_route_binding_changes_with_each_routing_field(members: dict[str, Any]) -> None:
    assert binding(**members) != binding()


def test_route_binding_field_boundaries_are_unambiguous() -> None:
    assert binding(deployment="ab", api_version="c") != binding(deployment="a", api_version="bc")
    scripted_plain = route_binding(parse(document(scripted())).providers[0])
    openai_desc = parse(document(openai())).providers[0]
    assert scripted_plain != route_binding(openai_desc)


# --- files and home --------------------------------------------------------------


def test_absent_auth_json_is_the_builtin_local_registry(tmp_path: Path) -> None:
    registry = load_registry(tmp_path)
    assert registry is BUILTIN_REGISTRY
    (local,) = registry.providers
    assert (local.id, local.type, local.model, local.script) == (
        "local",
        "scripted",
        "local-echo",
        None,
    )
    assert registry.effective_default() is local
    assert registry.source_path is None


def test_loaded_registry_records_path_and_resolves_scripts(tmp_path: Path) -> None:
    (tmp_path / "auth.json").write_bytes(
        document(scripted(script="turns.json"), scripted(id="abs", script="/srv/t.json"))
    )
    registry = load_registry(tmp_path)
    assert registry.source_path == (tmp_path / "auth.json").absolute()
    assert registry.providers[0].script == str(tmp_path.absolute() / "turns.json")
    assert registry.providers[1].script == "/srv/t.json"


@pytest.mark.parametrize(
    ("extra", "accepted"),
    [pytest.param(0, True, id="at-limit"), pytest.param(1, False, id="one-past")],
)
def test_auth_json_size_limit(tmp_path: Path, extra: int, accepted: bool) -> None:
    body = document(scripted())
    (tmp_path / "auth.json").write_bytes(body + b" " * (MAX_AUTH_JSON_BYTES - len(body) + extra))
    if accepted:
        assert load_registry(tmp_path).providers[0].id == "script"
    else:
        with pytest.raises(RegistryError, match="larger than"):
            load_registry(tmp_path)


def test_unreadable_shapes_fail_without_hanging(tmp_path: Path) -> None:
    (tmp_path / "auth.json").mkdir()
    with pytest.raises(RegistryError) as caught:
        load_registry(tmp_path)
    assert str(tmp_path) not in str(caught.value)

    fifo_home = tmp_path / "fifo"
    fifo_home.mkdir()
    os.mkfifo(fifo_home / "auth.json")
    with pytest.raises(RegistryError, match="not a regular file"):
        load_registry(fifo_home)

    dangling = tmp_path / "dangling"
    dangling.mkdir()
    (dangling / "auth.json").symlink_to(tmp_path / "missing.json")
    with pytest.raises(RegistryError, match="dangling"):
        load_registry(dangling)


def test_load_errors_carry_the_label_not_the_path(tmp_path: Path) -> None:
    (tmp_path / "auth.json").write_bytes(document(openai(api_key=KEY + "\x00")))
    with pytest.raises(RegistryError) as caught:
        load_registry(tmp_path)
    assert str(caught.value) == (
        "auth.json: providers[0].api_key: must not contain control characters"
    )


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({"AGENTX_HOME": "/opt/ax", "HOME": "/home/u"}, Path("/opt/ax"), id="explicit"),
        pytest.param({"HOME": "/home/u"}, Path("/home/u/.agentx"), id="home-default"),
        pytest.param(
            {"AGENTX_HOME": "", "HOME": "/home/u"}, Path("/home/u/.agentx"), id="empty-is-unset"
        ),
        pytest.param({"AGENTX_HOME": "rel/dir"}, Path("rel/dir"), id="relative-kept"),
        pytest.param({}, Path.home() / ".agentx", id="no-env"),
    ],
)
def test_agentx_home(env: dict[str, str], expected: Path) -> None:
    assert agentx_home(env) == expected


@pytest.mark.parametrize("data", [b"", b"abc", b"x" * 100_000])
def test_the_binding_digest_is_sha256_with_or_without_the_builtin(
    data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DEC-AUTH-5: stored bindings stay comparable: the built-in SHA-256 that
    spares the start OpenSSL gives hashlib's digest, and without a built-in
    hashlib itself is used."""
    import hashlib
    import importlib

    from agentx.config import registry as module

    expected = hashlib.sha256(data).hexdigest()
    assert module._sha256_hex(data) == expected

    def missing(name: str) -> object:
        raise ImportError(name)

    monkeypatch.setattr(importlib, "import_module", missing)
    assert module._sha256_hex(data) == expected
