"""End-to-end: the real HTTP provider clients against a loopback server that
speaks each provider's streaming format (DEC-AUTH-2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    AgentxProcess,
    control,
    encode,
    is_result,
    is_state,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
    openai_chunk,
    openai_text_stream,
    sse,
)

KEY = "sk-e2e-sentinel-key"
DUPLEX = ("--input-format", "stream-json", "--output-format", "stream-json")


def _openai_tool_call(path: str) -> tuple[bytes, ...]:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "Read", "arguments": json.dumps({"file_path": path})},
    }
    return (
        openai_chunk({"role": "assistant", "tool_calls": [call]}),
        openai_chunk({}, finish_reason="tool_calls"),
        # Usage reported: a request without it would make the cost null (WIRE-012).
        openai_chunk(usage={"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}),
        sse("[DONE]"),
    )


def _anthropic_tool_call(path: str) -> tuple[bytes, ...]:
    return anthropic_tool_use("Read", {"file_path": path})


PROVIDERS: dict[str, dict[str, Any]] = {
    "openai": {"tool": _openai_tool_call, "text": openai_text_stream, "suffix": "/v1"},
    "azure_openai": {"tool": _openai_tool_call, "text": openai_text_stream, "suffix": ""},
    "anthropic": {"tool": _anthropic_tool_call, "text": anthropic_text_stream, "suffix": ""},
}


def _auth(home: Path, kind: str, url: str) -> None:
    entry: dict[str, Any] = {
        "id": "remote",
        "type": kind,
        "model": "model-x",
        "endpoint": url + PROVIDERS[kind]["suffix"],
        "api_key": KEY,
        "pricing": {"input_per_mtok": 1, "output_per_mtok": 2},
    }
    if kind == "azure_openai":
        entry |= {"deployment": "dep-x", "api_version": "2025-04-01-preview"}
    write_auth(home, [entry])


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_model_reads_a_file_then_answers(home: Path, tmp_path: Path, kind: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("the secret word is parsnip\n")
    spec = PROVIDERS[kind]
    replies = [
        Reply(chunks=spec["tool"](str(work / "notes.txt"))),
        Reply(chunks=spec["text"]("parsnip!")),
    ]
    with ProviderServer(replies) as server:
        _auth(home, kind, server.url)
        proc = run_once(DUPLEX, encode(user("what is the word?")), home=home, cwd=work)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    assert KEY.encode() not in proc.stdout and KEY not in proc.stderr.decode()
    records = records_of(proc.stdout)
    tool_results = [
        b
        for r in records
        if r["type"] == "user"
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert len(tool_results) == 1 and "parsnip" in tool_results[0]["content"]
    result = next(r for r in records if is_result(r))
    assert result["subtype"] == "success" and result["result"] == "parsnip!"
    assert result["num_turns"] == 2
    assert result["total_cost_usd"] is not None and result["total_cost_usd"] > 0
    assert len(requests) == 2
    assert "parsnip" in json.dumps(requests[1].body)  # the tool result went back to the model


def test_retry_is_visible_on_stderr_only_and_never_carries_the_key(home: Path) -> None:
    replies = [
        Reply(status=500, chunks=(b"busy",)),
        Reply(chunks=openai_text_stream("after retry")),
    ]
    with ProviderServer(replies) as server:
        _auth(home, "openai", server.url)
        proc = run_once(DUPLEX, encode(user("hi")), home=home)
    assert proc.returncode == 0
    stderr = proc.stderr.decode()
    assert "WARN" in stderr.upper() and KEY not in stderr and "127.0.0.1" not in stderr
    assert "retry" in stderr
    assert not [r for r in records_of(proc.stdout) if r.get("subtype") == "api_retry"]
    assert next(r for r in records_of(proc.stdout) if is_result(r))["result"] == "after retry"


def test_exhausted_rate_limit_is_an_error_result(home: Path) -> None:
    with ProviderServer(
        [Reply(status=429, headers=(("retry-after", "0"),), chunks=(b"{}",))]
    ) as server:
        _auth(home, "openai", server.url)
        proc = run_once(DUPLEX, encode(user("hi")), home=home)
    records = records_of(proc.stdout)
    assistant = next(r for r in records if r["type"] == "assistant")
    assert assistant["error"] == "rate_limit"
    assert next(r for r in records if is_result(r))["subtype"] == "error_during_execution"


def test_a_lone_surrogate_from_the_provider_is_an_error_result_not_lost_records(
    home: Path,
) -> None:
    """Strict JSON accepts ``"\\ud800"`` but no stdout record can carry it: the
    provider error keeps the assistant and result records (WIRE-013)."""
    chunks = (*openai_text_stream("ok ")[:2], openai_chunk({"content": "\ud800"}))
    with ProviderServer([Reply(chunks=chunks)]) as server:
        _auth(home, "openai", server.url)
        proc = run_once((*DUPLEX, "--include-partial-messages"), encode(user("hi")), home=home)
    assert proc.returncode == 1  # DEC-CLI-6: the last turn ended in error
    assert b"record dropped" not in proc.stderr
    records = records_of(proc.stdout)
    assert len([r for r in records if r["type"] == "stream_event"]) == 2  # the refused one is not
    assistant = next(r for r in records if r["type"] == "assistant")
    assert assistant["error"] == "unknown"
    result = next(r for r in records if is_result(r))
    assert result["subtype"] == "error_during_execution"


def test_interrupt_mid_stream_is_cancelled_not_provider_error(
    home: Path, processes: list[AgentxProcess]
) -> None:
    with ProviderServer([Reply(chunks=openai_text_stream("partial")[:2], then="hang")]) as server:
        _auth(home, "openai", server.url)
        proc = AgentxProcess(home=home)
        processes.append(proc)
        proc.send(user("stream forever"))
        proc.until(is_state("running"))
        assert server.hanging.wait(10)
        proc.send(control("stop", "interrupt"))
        result = proc.until(is_result)[-1]
        assert result["subtype"] == "error_during_execution"
        assert result["stop_reason"] == "cancelled"
        proc.close_stdin()
        proc.rest()
        assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error


def test_prior_context_seeds_history_without_running_anything(home: Path, tmp_path: Path) -> None:
    """WIRE-017 (spec "Input records"): replayed assistant and isReplay user records are prior
    context: the model sees them, no historical tool call runs, no turn starts."""
    marker = tmp_path / "must-not-exist.txt"
    prior_user = {
        "type": "user",
        "uuid": "5f1e7948-5c1f-4c1f-8e2c-88bc9839ec27",
        "session_id": "old",
        "isReplay": True,
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": "earlier question"},
    }
    prior_assistant = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "earlier answer"},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Write",
                    "input": {"file_path": str(marker), "content": "x"},
                },
            ],
        },
        "parent_tool_use_id": None,
        "session_id": "old",
    }
    with ProviderServer([Reply(chunks=openai_text_stream("now"))]) as server:
        _auth(home, "openai", server.url)
        stdin = encode(prior_user) + encode(prior_assistant) + encode(user("new question"))
        proc = run_once(DUPLEX, stdin, home=home, cwd=tmp_path)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    results = [r for r in records_of(proc.stdout) if is_result(r)]
    assert [r["result"] for r in results] == ["now"]
    assert len(requests) == 1
    messages = requests[0].body["messages"]
    texts = [m.get("content") for m in messages]
    assert texts[-3:] == ["earlier question", "earlier answer", "new question"]
    assert not marker.exists()
