"""End-to-end: nothing the output guard refused is persisted (DEC-AUTH-6).

A tool result carrying a configured credential latches the guard (exit 3,
WIRE-013). That turn must reach neither ``transcript.jsonl`` nor the
internal-event log, so ``--resume`` can never feed it back: a resumed session
against a loopback provider never sends the refused content to it, while the
turn before it is still prior context.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.agentx_process import DUPLEX, encode, records_of, run_once, user, write_auth
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    openai_chunk,
    openai_text_stream,
    sse,
)

KEY = "sk-persist-sentinel-0451"


def _read_call(path: str) -> tuple[bytes, ...]:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "Read", "arguments": json.dumps({"file_path": path})},
    }
    return (
        openai_chunk({"role": "assistant", "tool_calls": [call]}),
        openai_chunk({}, finish_reason="tool_calls"),
        sse("[DONE]"),
    )


def test_a_latched_turn_is_never_persisted_nor_sent_again_on_resume(
    home: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    secret = work / "secret.txt"
    secret.write_text(f"token = {KEY}\n")
    replies = [
        Reply(chunks=openai_text_stream("hello back")),
        Reply(chunks=_read_call(str(secret))),
        Reply(chunks=openai_text_stream("read it")),
    ]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "remote",
                    "type": "openai",
                    "model": "m",
                    "endpoint": server.url + "/v1",
                    "api_key": KEY,
                }
            ],
        )
        prompts = encode(user("first prompt")) + encode(user("read the secret file"))
        latched = run_once(DUPLEX, prompts, home=home, cwd=work)
        assert latched.returncode == 3, latched.stderr
        assert KEY.encode() not in latched.stdout
        session_id = records_of(latched.stdout)[0]["session_id"]
        before = len(server.requests)

        resumed = run_once(
            [*DUPLEX, "--resume", session_id], encode(user("what did we do?")), home=home, cwd=work
        )
        assert resumed.returncode == 0, resumed.stderr
        sent = [json.dumps(r.body) for r in server.requests[before:]]
    assert sent, "the resumed session asked the provider"
    assert all(KEY not in body for body in sent)
    assert all("read the secret file" not in body for body in sent)
    assert "first prompt" in sent[0] and "hello back" in sent[0]
    directory = home / "sessions" / session_id
    for name in ("transcript.jsonl", "events.jsonl"):
        if (directory / name).exists():
            assert KEY.encode() not in (directory / name).read_bytes(), name
    assert "read the secret file" not in (directory / "transcript.jsonl").read_text()
