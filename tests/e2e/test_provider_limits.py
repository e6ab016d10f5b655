"""End-to-end over loopback HTTP: the overall model-request deadline
(DEC-AUTH-2 ``timeout_ms``), unknown cost (WIRE-012), Anthropic's reasoning
effort (DEC-CLI-5) and catalog pricing (DEC-AUTH-2 ``"pricing": "catalog"``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from agentx.config.registry import MAX_TIMEOUT_MS
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
    openai_chunk,
    openai_text_stream,
    sse,
)

KEY = "sk-limits-sentinel-key"


def _entry(kind: str, url: str, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "remote",
        "type": kind,
        "model": "model-x",
        "endpoint": url if kind == "anthropic" else url + "/v1",
        "api_key": KEY,
    }
    return entry | extra


def _result(stdout: bytes) -> dict[str, Any]:
    (result,) = [r for r in records_of(stdout) if is_result(r)]
    return result


def _no_usage_stream(*texts: str) -> tuple[bytes, ...]:
    """A Chat Completions stream that never reports usage."""
    return (
        openai_chunk({"role": "assistant", "content": ""}),
        *(openai_chunk({"content": text}) for text in texts),
        openai_chunk({}, finish_reason="stop"),
        sse("[DONE]"),
    )


# --- timeout_ms ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_keepalive_only_provider_ends_the_turn_at_the_deadline_after_eof(
    home: Path, kind: str
) -> None:
    """One delta, then ``: keepalive`` comments forever: each resets the idle
    read timeout, the overall deadline still ends the turn, with stdin
    already closed (run_once sends the prompt and EOF)."""
    first = (
        openai_text_stream("partial")[:2]
        if kind == "openai"
        else anthropic_text_stream("partial")[:3]
    )
    with ProviderServer([Reply(chunks=first, then="keepalive")]) as server:
        write_auth(home, [_entry(kind, server.url, timeout_ms=1500)])
        began = time.monotonic()
        proc = run_once(DUPLEX, encode(user("never ends")), home=home, timeout=30)
        took = time.monotonic() - began
        assert server.hanging.is_set()
    assert proc.returncode == 1  # DEC-CLI-6: the last turn ended in error, proc.stderr
    result = _result(proc.stdout)
    assert result["subtype"] == "error_during_execution"
    assert result["errors"] == [
        "server_error: provider request exceeded its overall deadline (1500 ms)"
    ]
    assert 1.5 <= took < 15
    assert KEY.encode() not in proc.stdout and KEY.encode() not in proc.stderr


@pytest.mark.parametrize(
    ("timeout_ms", "accepted"),
    [
        pytest.param(1, True, id="min"),
        pytest.param(0, False, id="below-min"),
        pytest.param(MAX_TIMEOUT_MS, True, id="max"),
        pytest.param(MAX_TIMEOUT_MS + 1, False, id="one-past-max"),
        pytest.param(1.5, False, id="not-an-integer"),
        pytest.param(True, False, id="boolean"),
    ],
)
def test_timeout_ms_is_validated_at_its_limits(home: Path, timeout_ms: Any, accepted: bool) -> None:
    write_auth(home, [_entry("openai", "http://127.0.0.1:9", timeout_ms=timeout_ms)])
    proc = run_once(("--list-providers",), b"", home=home)
    if accepted:
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode == 2
        assert proc.stderr.decode().strip() == (
            "agentx: auth.json: providers[0].timeout_ms: "
            f"must be an integer from 1 to {MAX_TIMEOUT_MS}"
        )


# --- WIRE-012: unknown usage is unknown cost ------------------------------------


def _read_call(path: Path) -> tuple[bytes, ...]:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "Read", "arguments": json.dumps({"file_path": str(path)})},
    }
    return (
        openai_chunk({"role": "assistant", "tool_calls": [call]}),
        openai_chunk({}, finish_reason="tool_calls"),
        openai_chunk(usage={"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500}),
        sse("[DONE]"),
    )


@pytest.mark.parametrize(
    ("replies", "cost"),
    [
        pytest.param(("no-usage",), None, id="the-only-request-lacks-usage"),
        pytest.param(("tool", "no-usage"), None, id="second-of-two-lacks-usage"),
        pytest.param(
            ("tool", "usage"), (1000 * 1 + 500 * 2 + 11 * 1 + 7 * 2) / 1e6, id="both-report"
        ),
    ],
)
def test_a_request_without_usage_makes_the_cost_null(
    home: Path, tmp_path: Path, replies: tuple[str, ...], cost: float | None
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    streams = {
        "tool": _read_call(notes),
        "no-usage": _no_usage_stream("done"),
        "usage": openai_text_stream("done"),
    }
    pricing = {"input_per_mtok": 1, "output_per_mtok": 2}
    with ProviderServer([Reply(chunks=streams[name]) for name in replies]) as server:
        write_auth(home, [_entry("openai", server.url, pricing=pricing)])
        proc = run_once(DUPLEX, encode(user("read it")), home=home, cwd=tmp_path)
        assert len(server.requests) == len(replies)
    assert proc.returncode == 0, proc.stderr
    result = _result(proc.stdout)
    assert result["subtype"] == "success"
    if cost is None:
        assert result["total_cost_usd"] is None
    else:
        assert result["total_cost_usd"] == pytest.approx(cost, rel=1e-9)
    (usage,) = result["modelUsage"].values()
    assert usage["costUSD"] == result["total_cost_usd"]


# --- DEC-CLI-5: Anthropic effort ---------------------------------------------


def test_anthropic_effort_is_sent_as_output_config_effort(home: Path) -> None:
    """Each ``--effort`` gives exactly one difference in the Messages API body:
    ``output_config.effort`` (``minimal`` has no Anthropic level: ``low``); a
    profile without efforts sends no ``output_config`` at all."""
    efforts = ["minimal", "low", "medium", "high", "xhigh"]
    expected = {
        "minimal": "low",
        "low": "low",
        "medium": "medium",
        "high": "high",
        "xhigh": "xhigh",
    }
    reasoning = {"efforts": efforts, "default": "medium"}
    with ProviderServer([Reply(chunks=anthropic_text_stream("ok"))]) as server:
        write_auth(home, [_entry("anthropic", server.url)])
        plain = run_once(DUPLEX, encode(user("hi")), home=home)
        assert plain.returncode == 0, plain.stderr
        write_auth(home, [_entry("anthropic", server.url, reasoning=reasoning)])
        for effort in efforts:
            proc = run_once((*DUPLEX, "--effort", effort), encode(user("hi")), home=home)
            assert proc.returncode == 0, proc.stderr
        bodies = [request.body for request in server.requests]
    base = bodies[0]
    assert "output_config" not in base
    # The built-in system prompt (DEC-CLI-5) and the tools are the same in every body.
    assert {k: v for k, v in base.items() if k not in ("tools", "system")} == {
        "model": "model-x",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": True,
    }
    for effort, body in zip(efforts, bodies[1:], strict=True):
        assert body == base | {"output_config": {"effort": expected[effort]}}, effort


# --- DEC-AUTH-2: "pricing": "catalog" -----------------------------------------


@pytest.mark.parametrize(
    ("kind", "model", "cost"),
    [
        # claude-sonnet-4-5 list prices per million tokens: input 3, output 15,
        # cache write 3.75, cache read 0.30 (usage 25/15/3/5 in the stream).
        pytest.param(
            "anthropic",
            "claude-sonnet-4-5",
            (25 * 3 + 15 * 15 + 3 * 3.75 + 5 * 0.30) / 1e6,
            id="anthropic-known",
        ),
        # gpt-4o: input 2.5, output 10 (usage 11/7).
        pytest.param("openai", "gpt-4o", (11 * 2.5 + 7 * 10) / 1e6, id="openai-known"),
        pytest.param("openai", "my-local-llama", None, id="unknown-model"),
        # An exact provider: an OpenAI model is not priced under Anthropic.
        pytest.param("anthropic", "gpt-4o", None, id="model-of-another-provider"),
    ],
)
def test_catalog_pricing(home: Path, kind: str, model: str, cost: float | None) -> None:
    stream = anthropic_text_stream("ok") if kind == "anthropic" else openai_text_stream("ok")
    with ProviderServer([Reply(chunks=stream)]) as server:
        write_auth(home, [_entry(kind, server.url, model=model, pricing="catalog")])
        proc = run_once(DUPLEX, encode(user("hi")), home=home)
    assert proc.returncode == 0, proc.stderr
    result = _result(proc.stdout)
    (usage,) = result["modelUsage"].values()
    if cost is None:
        assert result["total_cost_usd"] is None and usage["costUSD"] is None
        assert b"the price catalog has no complete price for model" in proc.stderr
    else:
        assert result["total_cost_usd"] == pytest.approx(cost, rel=1e-9)
        assert usage["costUSD"] == result["total_cost_usd"]


@pytest.mark.parametrize("pricing", ["Catalog", "", "catalog "])
def test_pricing_strings_other_than_catalog_are_refused(home: Path, pricing: str) -> None:
    write_auth(home, [_entry("openai", "http://127.0.0.1:9", pricing=pricing)])
    proc = run_once(("--list-providers",), b"", home=home)
    assert proc.returncode == 2
    assert proc.stderr.decode().strip() == (
        'agentx: auth.json: providers[0].pricing: must be an object or the string "catalog"'
    )
