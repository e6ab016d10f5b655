"""End-to-end: the provider environment variables make the registry when
there is no auth.json (DEC-AUTH-4); the offline echo provider
answers only when nothing is configured, and then says so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agentx.config.env_registry import OFFLINE_NOTICE
from agentx.config.models import ALIAS_MODELS
from tests.e2e.agentx_process import (
    DUPLEX,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    openai_text_stream,
)

ANTHROPIC_KEY = "sk-ant-env-e2e-4c1d"
OPENAI_KEY = "sk-openai-env-e2e-77aa"


def _run(
    home: Path, env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[bytes], list[dict[str, Any]]]:
    proc = run_once((*DUPLEX, *args), encode(user("hi")), home=home, env=env)
    return proc, records_of(proc.stdout)


def _no_keys(proc: subprocess.CompletedProcess[bytes]) -> None:
    for key in (ANTHROPIC_KEY, OPENAI_KEY):
        assert key.encode() not in proc.stdout and key.encode() not in proc.stderr


def test_anthropic_variables_reach_a_real_model(home: Path) -> None:
    with ProviderServer([Reply(chunks=anthropic_text_stream("from claude"))]) as server:
        env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": server.url}
        proc, records = _run(home, env)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""  # configured: no offline notice, nothing on stderr
    _no_keys(proc)
    init = records[0]
    assert (init["provider"], init["provider_type"]) == ("anthropic", "anthropic")
    assert init["model"] == ALIAS_MODELS["sonnet"] and "provider_notice" not in init
    assert init["apiKeySource"] == "temporary"  # WIRE-016: transient process provenance
    assert next(r for r in records if is_result(r))["result"] == "from claude"
    (request,) = requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == ANTHROPIC_KEY
    assert request.body["model"] == ALIAS_MODELS["sonnet"]


def test_auth_token_is_a_bearer_and_model_alias_resolves(home: Path) -> None:
    with ProviderServer([Reply(chunks=anthropic_text_stream("ok"))]) as server:
        env = {"ANTHROPIC_AUTH_TOKEN": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": server.url}
        proc, records = _run(home, env, "--model", "haiku")
        (request,) = server.requests
    assert proc.returncode == 0, proc.stderr
    _no_keys(proc)
    assert request.headers["authorization"] == f"Bearer {ANTHROPIC_KEY}"
    assert "x-api-key" not in request.headers
    assert request.body["model"] == records[0]["model"] == ALIAS_MODELS["haiku"]


def test_openai_variables(home: Path) -> None:
    with ProviderServer([Reply(chunks=openai_text_stream("from openai"))]) as server:
        env = {"OPENAI_API_KEY": OPENAI_KEY, "OPENAI_BASE_URL": server.url + "/v1"}
        proc, records = _run(home, env, "--model", "my-local-model")
        (request,) = server.requests
    assert proc.returncode == 0, proc.stderr
    _no_keys(proc)
    assert records[0]["provider"] == "openai" and records[0]["model"] == "my-local-model"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert request.body["model"] == "my-local-model"


def test_both_families_anthropic_serves_unless_model_or_provider_picks(home: Path) -> None:
    replies = [
        Reply(chunks=anthropic_text_stream("a")),
        Reply(chunks=openai_text_stream("o")),
        Reply(chunks=openai_text_stream("o")),
    ]
    with ProviderServer(replies) as server:
        env = {
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
            "ANTHROPIC_BASE_URL": server.url,
            "OPENAI_API_KEY": OPENAI_KEY,
            "OPENAI_BASE_URL": server.url + "/v1",
        }
        chosen = [_run(home, env, *args)[1][0]["provider"] for args in ((), ("--model", "gpt-x"))]
        chosen.append(_run(home, env, "--provider", "openai")[1][0]["provider"])
        paths = [r.path for r in server.requests]
    assert chosen == ["anthropic", "openai", "openai"]
    assert paths == ["/v1/messages", "/v1/chat/completions", "/v1/chat/completions"]


def test_auth_json_wins_over_the_variables(home: Path) -> None:
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m"}])
    proc, records = _run(home, {"ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    assert proc.returncode == 0 and records[0]["provider"] == "s"
    assert records[0]["apiKeySource"] == "user"
    assert proc.stderr == b""


def test_the_echo_provider_says_so_only_when_nothing_is_configured(home: Path) -> None:
    proc, records = _run(home, {})
    assert proc.returncode == 0
    assert records[0]["provider"] == "local"
    assert records[0]["provider_notice"] == OFFLINE_NOTICE
    lines = proc.stderr.decode().splitlines()
    assert len(lines) == 1 and OFFLINE_NOTICE in lines[0]


def test_list_providers_shows_the_implicit_registry_without_secrets(home: Path) -> None:
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}
    proc = run_once(("--list-providers", "--output-format", "json"), b"", home=home, env=env)
    assert proc.returncode == 0, proc.stderr
    _no_keys(proc)
    document = json.loads(proc.stdout)
    assert [(p["id"], p["default"]) for p in document["providers"]] == [
        ("anthropic", True),
        ("openai", False),
    ]
    assert "environment variables" in document["providers"][0]["description"]
