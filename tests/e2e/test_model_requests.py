"""End-to-end: what the model receives for --model, --fallback-model,
--effort, --thinking, --max-thinking-tokens, --task-budget and --betas, and
the records a fallback writes (DEC-CLI-5; spec "System and lifecycle events")."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentx.config.models import ALIAS_MODELS
from tests.e2e.agentx_process import DUPLEX, encode, is_result, records_of, run_once, user
from tests.fakes.provider_server import (
    ProviderServer,
    RecordedRequest,
    Reply,
    anthropic_text_stream,
    json_reply,
    openai_text_stream,
)

KEY = "sk-ant-model-requests-5b2e"
OVERLOADED = json_reply(
    529,
    {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
    headers=(("retry-after", "0"),),
)


def _anthropic(
    home: Path, replies: list[Reply], *args: str
) -> tuple[subprocess.CompletedProcess[bytes], list[dict[str, Any]], list[RecordedRequest]]:
    with ProviderServer(replies) as server:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
        proc = run_once((*DUPLEX, *args), encode(user("hi")), home=home, env=env)
        requests = list(server.requests)
    assert KEY.encode() not in proc.stdout and KEY.encode() not in proc.stderr
    return proc, records_of(proc.stdout) if proc.returncode != 2 else [], requests


@pytest.mark.parametrize(
    ("args", "thinking", "max_tokens"),
    [
        pytest.param((), None, 8192, id="none"),
        pytest.param(("--thinking", "adaptive"), {"type": "adaptive"}, 8192, id="adaptive"),
        pytest.param(("--thinking", "disabled"), {"type": "disabled"}, 8192, id="disabled"),
        pytest.param(
            ("--max-thinking-tokens", "2048"),
            {"type": "enabled", "budget_tokens": 2048},
            8192 + 2048,
            id="budget",
        ),
        pytest.param(
            ("--thinking", "enabled", "--thinking-display", "summarized"),
            {"type": "enabled", "budget_tokens": 10000, "display": "summarized"},
            8192 + 10000,
            id="enabled-default-budget",
        ),
        pytest.param(
            ("--thinking", "adaptive", "--max-thinking-tokens", "4096"),
            {"type": "adaptive"},
            8192,
            id="thinking-wins",
        ),
        pytest.param(("--max-thinking-tokens", "0"), {"type": "disabled"}, 8192, id="zero"),
    ],
)
def test_thinking_reaches_the_messages_api(
    home: Path, args: tuple[str, ...], thinking: dict[str, Any] | None, max_tokens: int
) -> None:
    proc, _, (request,) = _anthropic(home, [Reply(chunks=anthropic_text_stream("ok"))], *args)
    assert proc.returncode == 0, proc.stderr
    assert request.body.get("thinking") == thinking
    assert request.body["max_tokens"] == max_tokens


def test_effort_task_budget_and_betas(home: Path) -> None:
    proc, records, (request,) = _anthropic(
        home,
        [Reply(chunks=anthropic_text_stream("ok"))],
        "--effort",
        "max",
        "--task-budget",
        "50000",
        "--betas",
        "beta-one,beta-two",
        "--model",
        "opus",
    )
    assert proc.returncode == 0, proc.stderr
    assert request.body["model"] == records[0]["model"] == ALIAS_MODELS["opus"]
    assert request.body["output_config"] == {
        "effort": "max",
        "task_budget": {"type": "tokens", "total": 50000},
    }
    assert request.headers["anthropic-beta"] == "beta-one,beta-two,task-budgets-2026-03-13"


def test_a_thinking_budget_below_the_api_floor_is_refused(home: Path) -> None:
    proc, _, requests = _anthropic(home, [], "--max-thinking-tokens", "1023")
    assert proc.returncode == 2 and proc.stdout == b"" and not requests
    assert b"--max-thinking-tokens must be at least 1024" in proc.stderr


def test_openai_takes_effort_and_refuses_a_thinking_budget(home: Path) -> None:
    with ProviderServer([Reply(chunks=openai_text_stream("ok"))]) as server:
        env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.url + "/v1"}
        refused = run_once(
            (*DUPLEX, "--max-thinking-tokens", "2048"), encode(user("hi")), home=home, env=env
        )
        done = run_once(
            (*DUPLEX, "--effort", "high", "--thinking", "adaptive"),
            encode(user("hi")),
            home=home,
            env=env,
        )
        (request,) = server.requests
    assert refused.returncode == 2 and refused.stdout == b""
    assert refused.stderr.decode().startswith("agentx: --thinking: the selected provider")
    assert done.returncode == 0, done.stderr
    assert request.body["reasoning_effort"] == "high" and "thinking" not in request.body


@pytest.mark.parametrize("profile", ["sdk", "standalone"])
def test_overload_falls_back_to_the_fallback_model(home: Path, profile: str) -> None:
    replies = [OVERLOADED, OVERLOADED, OVERLOADED, Reply(chunks=anthropic_text_stream("saved"))]
    proc, records, requests = _anthropic(
        home,
        replies,
        "--model",
        "opus",
        "--fallback-model",
        "sonnet",
        "--control-profile",
        profile,
    )
    assert proc.returncode == 0, proc.stderr
    assert records[0]["fallback_model"] == ALIAS_MODELS["sonnet"]
    assert [r.body["model"] for r in requests] == [ALIAS_MODELS["opus"]] * 3 + [
        ALIAS_MODELS["sonnet"]
    ]
    retries = [r for r in records if r.get("subtype") == "api_retry"]
    fallbacks = [r for r in records if r.get("subtype") == "model_fallback"]
    if profile == "sdk":
        assert [(r["attempt"], r["max_retries"], r["error_status"]) for r in retries] == [
            (1, 2, 529),
            (2, 2, 529),
        ]
        assert all(r["error"] == "server_error" and r["retry_delay_ms"] == 0 for r in retries)
        assert [(f["from_model"], f["to_model"]) for f in fallbacks] == [
            (ALIAS_MODELS["opus"], ALIAS_MODELS["sonnet"])
        ]
    else:  # spec "System and lifecycle events": stderr only
        assert not retries and not fallbacks
    assert "fallback model" in proc.stderr.decode()
    assistant = next(r for r in records if r["type"] == "assistant")
    assert assistant["message"]["model"] == ALIAS_MODELS["sonnet"]
    assert next(r for r in records if is_result(r))["result"] == "saved"


def test_without_a_fallback_the_overload_is_an_error_result(home: Path) -> None:
    _proc, records, requests = _anthropic(home, [OVERLOADED], "--control-profile", "sdk")
    assert len(requests) == 3
    assert next(r for r in records if is_result(r))["subtype"] == "error_during_execution"
    assert not [r for r in records if r.get("subtype") == "model_fallback"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        pytest.param(("--fallback-model", "sonnet"), "must differ", id="same-model"),
        pytest.param(("--fallback-model", "gpt-5"), "never switches provider", id="other-provider"),
    ],
)
def test_bad_fallback_models_are_refused(home: Path, args: tuple[str, ...], problem: str) -> None:
    proc, _, requests = _anthropic(home, [], *args)
    assert proc.returncode == 2 and proc.stdout == b"" and not requests
    assert problem in proc.stderr.decode()
