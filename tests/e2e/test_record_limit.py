"""End-to-end: every stdout record stays under the clients' 1 MiB line limit
(DEC-COMPAT-3) over the real process: a provider streaming a 1.2 MiB answer
over loopback HTTP, and the echo of a prompt of 1.5 MB on the scripted
provider. Every record is also validated against the published schema by
the harness; resume still sees the whole text."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentx.messages.record_limit import (
    MAX_LINE_BYTES,
    MAX_TOOL_INPUT_BYTES,
    PROMPT_TRUNCATED,
    RESULT_TRUNCATED,
    TOOL_INPUT_TOO_LARGE,
)
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    encode,
    is_result,
    records_of,
    run_once,
    scripted_session,
    user,
    write_auth,
    write_script,
)
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    openai_text_stream,
)

#: 19 deltas of 64 KiB: a 1.2 MiB answer.
DELTAS = tuple(chr(ord("a") + i) * 65_536 for i in range(19))
ANSWER = "".join(DELTAS)
STREAMS = {"anthropic": anthropic_text_stream, "openai": openai_text_stream}


def _lines_under_the_limit(stdout: bytes) -> list[Record]:
    lines = stdout.splitlines(keepends=True)
    assert lines and max(len(line) for line in lines) < MAX_LINE_BYTES
    return records_of(stdout)


def _assistants(records: list[Record]) -> list[Record]:
    return [r for r in records if r["type"] == "assistant"]


def _rebuilt(assistants: list[Record]) -> str:
    """The client's rebuild: the records of one message id, content concatenated."""
    (message_id,) = {r["message"]["id"] for r in assistants}
    assert message_id
    return "".join(
        block["text"] for r in assistants for block in r["message"]["content"] if "text" in block
    )


def _auth(home: Path, kind: str, url: str) -> None:
    write_auth(
        home,
        [
            {
                "id": "remote",
                "type": kind,
                "model": "model-x",
                "endpoint": url + ("/v1" if kind == "openai" else ""),
                "api_key": "sk-e2e-record-limit",
            }
        ],
    )


@pytest.mark.parametrize("kind", sorted(STREAMS))
def test_a_1_2_mib_streamed_answer_is_split_and_resume_sees_it_whole(
    home: Path, tmp_path: Path, kind: str
) -> None:
    replies = [Reply(chunks=STREAMS[kind](*DELTAS)), Reply(chunks=STREAMS[kind]("ok"))]
    with ProviderServer(replies) as server:
        _auth(home, kind, server.url)
        first = run_once(DUPLEX, encode(user("write a lot")), home=home, cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        records = _lines_under_the_limit(first.stdout)
        session = records[0]["session_id"]
        again = run_once(
            (*DUPLEX, "--resume", session), encode(user("again")), home=home, cwd=tmp_path
        )
        requests = list(server.requests)
    assert again.returncode == 0, again.stderr

    assistants = _assistants(records)
    assert len(assistants) == 2
    assert _rebuilt(assistants) == ANSWER
    assert len({r["uuid"] for r in assistants}) == 2
    (result,) = [r for r in records if is_result(r)]
    marker = RESULT_TRUNCATED.format(total=len(ANSWER))
    assert result["subtype"] == "success" and result["result"].endswith(marker)
    assert ANSWER.startswith(result["result"][: -len(marker)])
    # The transcript kept the whole answer: the resumed request carries it.
    assert ANSWER in json.dumps(requests[1].body)


def _echo_profile(home: Path) -> None:
    """The echo provider with a window big prompts fit in, so no automatic
    compaction summarizes them away."""
    write_auth(home, [{"id": "echo", "type": "scripted", "model": "m", "context_window": 10**7}])


def test_the_echo_of_a_1_5_mb_prompt_and_its_replay(home: Path, tmp_path: Path) -> None:
    prompt = "".join(f"{i:07d} ünïcödé \u2028 line\n" for i in range(60_000))
    assert len(prompt.encode()) > 1_500_000
    _echo_profile(home)
    proc = run_once(
        (*DUPLEX, "--replay-user-messages"),
        encode(user(prompt, uuid="22222222-2222-4222-8222-222222222222")),
        home=home,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    records = _lines_under_the_limit(proc.stdout)
    (echo,) = [r for r in records if r["type"] == "user" and r.get("isReplay")]
    (block,) = echo["message"]["content"]
    marker = PROMPT_TRUNCATED.format(total=len(prompt))
    assert block["text"].endswith(marker) and prompt.startswith(block["text"][: -len(marker)])
    assistants = _assistants(records)
    assert len(assistants) >= 2 and _rebuilt(assistants) == prompt
    (result,) = [r for r in records if is_result(r)]
    assert result["result"].endswith(RESULT_TRUNCATED.format(total=len(prompt)))


def _echo_assistant_lines(home: Path, tmp_path: Path, length: int) -> list[int]:
    proc = run_once(DUPLEX, encode(user("a" * length)), home=home, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines(keepends=True)
    assert max(len(line) for line in lines) < MAX_LINE_BYTES
    records = records_of(proc.stdout)
    assistants = _assistants(records)
    assert _rebuilt(assistants) == "a" * length
    return [len(line) for line, r in zip(lines, records, strict=True) if r["type"] == "assistant"]


def test_an_assistant_line_at_the_limit_stays_whole_and_one_past_it_splits(
    home: Path, tmp_path: Path
) -> None:
    """The echo provider's assistant line is its text plus a constant: the
    constant is measured, then a line of exactly 1 MiB - 1 bytes and one of
    exactly 1 MiB are asked for."""
    _echo_profile(home)
    probe = MAX_LINE_BYTES - 2_000
    (measured,) = _echo_assistant_lines(home, tmp_path, probe)
    frame = measured - probe
    assert _echo_assistant_lines(home, tmp_path, MAX_LINE_BYTES - 1 - frame) == [MAX_LINE_BYTES - 1]
    split = _echo_assistant_lines(home, tmp_path, MAX_LINE_BYTES - frame)
    assert len(split) == 2


def test_a_tool_result_of_megabytes_of_escapes_stays_under_the_limit(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Tool results are capped (256 KiB of encoded content): 3 MB of output
    made of characters the encoder escapes (quotes, U+2028) included."""
    command = "yes $'\\xe2\\x80\\xa8\"\\x01' | head -c 3000000"
    turns = [
        {"steps": [{"tool_use": {"name": "Bash", "input": {"command": command}}}]},
        {"steps": [{"text": "done"}]},
    ]
    proc = scripted_session(home, turns, processes, "--permission-mode", "bypassPermissions")
    proc.send(user("print a lot"))
    proc.until(is_result)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    lines = bytes(proc.raw).splitlines(keepends=True)
    assert max(len(line) for line in lines) < MAX_LINE_BYTES
    (result,) = [
        b
        for r in proc.seen
        if r["type"] == "user"
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert "[output truncated: " in result["content"]


def test_the_python_sdk_reads_a_split_answer(home: Path) -> None:
    """The stock claude-agent-sdk (default 1 MiB buffer) reads the split
    assistant records and the capped result without error."""
    sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")
    answer = "".join(f"{i:06d} ✓ sdk line\n" for i in range(90_000))
    assert len(answer.encode()) > 1_300_000
    write_script(home / "big.json", [{"steps": [{"text": answer}]}])
    provider = {"id": "s", "type": "scripted", "model": "m", "script": str(home / "big.json")}
    write_auth(home, [{**provider, "context_window": 10**7}])
    options = sdk.ClaudeAgentOptions(
        cli_path=str(Path(sys.executable).with_name("agentx")),
        cwd=str(home),
        env={"AGENTX_HOME": str(home)},
    )

    async def run() -> list[Any]:
        return [m async for m in sdk.query(prompt="a long answer", options=options)]

    messages = anyio.run(run)
    assistants = [m for m in messages if type(m).__name__ == "AssistantMessage"]
    assert len(assistants) >= 2
    assert "".join(b.text for m in assistants for b in m.content) == answer
    (result,) = [m for m in messages if type(m).__name__ == "ResultMessage"]
    assert result.subtype == "success"
    assert result.result.endswith(RESULT_TRUNCATED.format(total=len(answer)))


def test_a_tool_use_too_large_for_one_record_is_shown_empty_and_not_run(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """A tool input past MAX_TOOL_INPUT_BYTES fits neither its assistant block
    nor a can_use_tool request: stdout shows it as ``{}``, nobody is asked,
    the tool does not run; the transcript keeps the input whole."""
    big = "x" * MAX_TOOL_INPUT_BYTES
    write = {"tool_use": {"name": "Write", "input": {"file_path": "big.txt", "content": big}}}
    proc = scripted_session(home, [{"steps": [write]}, {"steps": [{"text": "ok"}]}], processes)
    proc.send(user("write it"))
    proc.until(is_result)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    assert max(len(line) for line in bytes(proc.raw).splitlines(keepends=True)) < MAX_LINE_BYTES
    assert not [r for r in proc.seen if r["type"] == "control_request"]
    (block,) = [
        b
        for r in _assistants(proc.seen)
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    ]
    assert block["input"] == {}
    (tool_result,) = [
        b
        for r in proc.seen
        if r["type"] == "user"
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert tool_result == {
        "type": "tool_result",
        "tool_use_id": block["id"],
        "content": TOOL_INPUT_TOO_LARGE,
        "is_error": True,
    }
    result = next(r for r in proc.seen if is_result(r))
    assert result["result"] == "ok"
    assert result["permission_denials"] == [
        {"tool_name": "Write", "tool_use_id": block["id"], "tool_input": {}}
    ]
    assert not (home.parent / "work" / "big.txt").exists()
    (transcript,) = (home / "sessions").glob("*/transcript.jsonl")
    assert big in transcript.read_text()
