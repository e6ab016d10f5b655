"""``--await-initialize`` over the real process (DEC-PROFILE-2, DECISIONS
section 8): a prompt that arrives before ``initialize`` runs only after it,
with its fields applied; an input that ends with a prompt held ends the
session with one line and status 2, before any model request."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    control,
    encode,
    is_control_response,
    is_result,
    log_lines,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream

KEY = "sk-await-initialize-1f0a"
AWAIT = (*DUPLEX, "--await-initialize")


def _loopback(home: Path, url: str) -> None:
    write_auth(
        home,
        [{"id": "a", "type": "anthropic", "model": "model-x", "endpoint": url, "api_key": KEY}],
    )


@pytest.mark.parametrize("profile", ["sdk", "standalone"])
def test_a_prompt_before_initialize_runs_after_it(home: Path, profile: str) -> None:
    with ProviderServer([Reply(chunks=anthropic_text_stream("answer"))]) as server:
        _loopback(home, server.url)
        proc = AgentxProcess((*AWAIT, "--control-profile", profile), home=home)
        try:
            proc.send(user("early"))
            # A round trip behind the prompt: the reader has routed it.
            proc.send(control("s", "mcp_status"))
            proc.until(is_control_response("s"))
            fields = {"promptSuggestions": False} if profile == "sdk" else {}
            proc.send(control("i", "initialize", **fields))
            seen = proc.until(is_result)
            proc.close_stdin()
            assert proc.wait() == 0, proc.stderr()
        finally:
            proc.kill()
        requests = list(server.requests)
    kinds = ["init" if is_control_response("i")(r) else r["type"] for r in seen]
    assert kinds.index("init") < kinds.index("assistant")
    assert seen[-1]["result"] == "answer"
    assert len(requests) == 1 and "early" in str(requests[0].body["messages"])


def test_end_of_input_with_a_held_prompt_ends_with_status_2(home: Path) -> None:
    with ProviderServer([Reply(chunks=anthropic_text_stream("never"))]) as server:
        _loopback(home, server.url)
        proc = run_once(AWAIT, encode(user("held")), home=home)
        requests = list(server.requests)
    assert proc.returncode == 2
    assert requests == []
    assert not any(is_result(r) for r in records_of(proc.stdout))
    lines = log_lines(proc.stderr)
    assert lines == [
        "agentx: ERROR: --await-initialize: the input ended before an initialize request "
        "(1 held prompt not run); the session ends (status 2)"
    ]


def test_end_of_input_with_nothing_held_is_a_normal_end(home: Path) -> None:
    with ProviderServer([]) as server:
        _loopback(home, server.url)
        proc = run_once(AWAIT, b"", home=home)
    assert proc.returncode == 0 and log_lines(proc.stderr) == []


def test_await_initialize_needs_stream_json_input(home: Path) -> None:
    proc = run_once(("-p", "hi", "--await-initialize"), b"", home=home)
    assert proc.returncode == 2
    assert b"--await-initialize requires --input-format stream-json" in proc.stderr
