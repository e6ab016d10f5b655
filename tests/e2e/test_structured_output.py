"""End-to-end: structured output (DEC-CLI-5 ``--json-schema``, the SDKs'
``output_format``; spec "Success result"/"Error result", DEC-CLI-6).

The scripted model calls ``StructuredOutput``; the host validates each call
with the schema, answers an invalid one with the reason, reminds a model that
ends without a call, and ends the turn ``success`` with ``structured_output``
or, past the retries, ``error_max_structured_output_retries``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.structured_output import MAX_RETRIES, REMINDER
from tests.e2e.agentx_process import (
    DUPLEX,
    control,
    encode,
    records_of,
    run_once,
    user,
    write_auth,
    write_script,
)

PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
    "additionalProperties": False,
}
NEVER = {"type": "object", "not": {}}


def _call(value: dict[str, Any]) -> dict[str, Any]:
    return {"steps": [{"tool_use": {"name": "StructuredOutput", "input": value}}]}


def _run(
    home: Path, turns: list[dict[str, Any]], schema: object, *extra: str, prompt: str = "go"
) -> tuple[int, list[dict[str, Any]]]:
    script = write_script(home / f"script{len(list(home.iterdir()))}.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    proc = run_once(
        [*DUPLEX, "--json-schema", json.dumps(schema), *extra], encode(user(prompt)), home=home
    )
    assert proc.stderr == b"" or b"ERROR" not in proc.stderr, proc.stderr
    return proc.returncode, records_of(proc.stdout)


def _result(records: list[dict[str, Any]]) -> dict[str, Any]:
    return [r for r in records if r["type"] == "result"][-1]


def _tool_results(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        block
        for r in records
        if r["type"] == "user"
        for block in r["message"]["content"]
        if block.get("type") == "tool_result"
    ]


def test_an_invalid_call_is_answered_and_a_valid_one_is_the_payload(home: Path) -> None:
    status, records = _run(
        home,
        [_call({"name": 7}), _call({"name": "Ada", "age": 36}), {"steps": [{"text": "done"}]}],
        PERSON,
    )
    init = records[0]
    assert init["subtype"] == "init"
    first, second = _tool_results(records)
    assert first["is_error"] and "at name: 7 is not of type 'string'" in first["content"]
    assert not second["is_error"]
    result = _result(records)
    assert status == 0
    assert result["subtype"] == "success" and not result["is_error"]
    assert result["structured_output"] == {"name": "Ada", "age": 36}
    assert result["num_turns"] == 3 and result["result"] == "done"
    # The tool needs no permission: no can_use_tool request was written.
    assert not [r for r in records if r["type"] == "control_request"]


def test_a_schema_nothing_satisfies_ends_in_the_retries_error(home: Path) -> None:
    """Hostile: every call fails; the sixth failure (MAX_RETRIES + 1) ends the
    turn, never a success without the payload; no seventh model call."""
    calls = [_call({"name": f"try {i}"}) for i in range(MAX_RETRIES + 3)]
    status, records = _run(home, calls, NEVER)
    result = _result(records)
    assert result["subtype"] == "error_max_structured_output_retries" and result["is_error"]
    assert "structured_output" not in result and "result" not in result
    assert result["errors"] == [
        f"Failed to provide valid structured output after {MAX_RETRIES + 1} attempts"
    ]
    assert result["num_turns"] == MAX_RETRIES + 1
    assert len(_tool_results(records)) == MAX_RETRIES + 1
    assert status == 1  # DEC-CLI-6: the last turn ended in error


def test_a_one_shot_run_prints_the_payload_or_exits_1(home: Path) -> None:
    """DEC-CLI-6: ``-p --output-format json`` carries ``structured_output``;
    exhausted retries are an error result, so the run exits 1."""
    script = write_script(home / "ok.json", [_call({"name": "Ada"}), {"steps": [{"text": "ok"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    args = ["-p", "x", "--output-format", "json", "--json-schema"]
    proc = run_once([*args, json.dumps(PERSON)], b"", home=home)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["structured_output"] == {"name": "Ada"}
    failed = run_once([*args, json.dumps(NEVER)], b"", home=home)
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["subtype"] == "error_max_structured_output_retries"


def test_a_model_that_never_calls_is_reminded_then_fails(home: Path) -> None:
    """With no script turns the scripted model echoes the latest user text:
    its second answer is the reminder, which therefore reached the model."""
    _, records = _run(home, [], PERSON, prompt="tell me")
    texts = [
        block["text"]
        for r in records
        if r["type"] == "assistant"
        for block in r["message"]["content"]
        if block["type"] == "text"
    ]
    assert texts[0] == "tell me" and texts[1:] == [REMINDER] * MAX_RETRIES
    result = _result(records)
    assert result["subtype"] == "error_max_structured_output_retries"
    assert result["num_turns"] == MAX_RETRIES + 1


def test_the_last_retry_still_succeeds(home: Path) -> None:
    """At the limit: MAX_RETRIES failures, then a valid call, is a success."""
    turns = [*(_call({}) for _ in range(MAX_RETRIES)), _call({"name": "Ada"})]
    status, records = _run(home, [*turns, {"steps": [{"text": "ok"}]}], PERSON)
    result = _result(records)
    assert status == 0 and result["subtype"] == "success"
    assert result["structured_output"] == {"name": "Ada"}


def test_the_retry_count_does_not_carry_across_a_resume(home: Path) -> None:
    _, records = _run(home, [_call({}) for _ in range(MAX_RETRIES + 1)], PERSON)
    assert _result(records)["subtype"] == "error_max_structured_output_retries"
    session = _result(records)["session_id"]
    # The resumed process may again fail MAX_RETRIES times and still succeed.
    turns = [*(_call({}) for _ in range(MAX_RETRIES)), _call({"name": "Bo"})]
    status, records = _run(home, [*turns, {"steps": [{"text": "ok"}]}], PERSON, "--resume", session)
    assert status == 0 and _result(records)["subtype"] == "success"
    assert _result(records)["structured_output"] == {"name": "Bo"}


def test_every_turn_of_a_session_needs_its_own_call(home: Path) -> None:
    script = write_script(
        home / "turns.json",
        [_call({"name": "one"}), {"steps": [{"text": "a"}]}, {"steps": [{"text": "b"}]}],
    )
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    stdin = encode(user("first")) + encode(user("second"))
    proc = run_once([*DUPLEX, "--json-schema", json.dumps(PERSON)], stdin, home=home)
    results = [r for r in records_of(proc.stdout) if r["type"] == "result"]
    assert results[0]["structured_output"] == {"name": "one"}
    # The second turn's answers never call the tool: reminded, then it fails.
    assert results[1]["subtype"] == "error_max_structured_output_retries"


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ("not json", "--json-schema: "),
        ('{"type": "array"}', "must describe an object"),
        ('{"type": "object", "required": 3}', "is not valid"),
        ("[1]", "must be a JSON object"),
        ('{"a": 1, "a": 2}', "--json-schema: "),
    ],
)
def test_an_unusable_schema_exits_2_with_one_line(home: Path, schema: str, says: str) -> None:
    proc = run_once(["-p", "x", "--json-schema", schema], b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) <= 2 and says in lines[0], lines


def test_the_python_sdk_output_format_gets_structured_output(home: Path) -> None:
    """The stock Python SDK's ``output_format`` (it passes ``--json-schema``)."""
    sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")
    import sys

    import anyio

    script = write_script(home / "sdk.json", [_call({"name": 1}), _call({"name": "Ada"})])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    options = sdk.ClaudeAgentOptions(
        cli_path=str(Path(sys.executable).with_name("agentx")),
        cwd=str(home),
        env={"AGENTX_HOME": str(home)},
        output_format={"type": "json_schema", "schema": PERSON},
    )

    async def run() -> list[Any]:
        return [m async for m in sdk.query(prompt="who", options=options)]

    messages = anyio.run(run)
    result = [m for m in messages if type(m).__name__ == "ResultMessage"][-1]
    assert result.subtype == "success" and result.structured_output == {"name": "Ada"}


def test_the_sdk_profile_takes_the_schema_from_initialize(home: Path) -> None:
    """The TS SDK sends ``jsonSchema`` in ``initialize`` (DEC-PROFILE-2)."""
    script = write_script(home / "init.json", [_call({"name": "Ada"}), {"steps": [{"text": "ok"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    stdin = encode(control("i", "initialize", jsonSchema=PERSON)) + encode(user("who"))
    proc = run_once(DUPLEX, stdin, home=home, env={"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"})
    records = records_of(proc.stdout)
    (response,) = [r["response"] for r in records if r["type"] == "control_response"]
    assert response["subtype"] == "success"
    assert _result(records)["structured_output"] == {"name": "Ada"}


def test_an_unusable_initialize_schema_is_refused(home: Path) -> None:
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m"}])
    fields = {"jsonSchema": {"type": "array"}}
    stdin = encode(control("i", "initialize", **fields)) + encode(user("who"))
    proc = run_once(DUPLEX, stdin, home=home, env={"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"})
    assert proc.returncode == 2
    records = records_of(proc.stdout)
    assert not [r for r in records if r["type"] == "result"]
    (response,) = [r["response"] for r in records if r["type"] == "control_response"]
    assert response["subtype"] == "error"
    assert "jsonSchema: " in response["error"] and "must describe an object" in response["error"]


def test_a_catastrophic_pattern_fails_one_attempt_and_the_host_goes_on(home: Path) -> None:
    """DECISIONS section 8: ``(a|aa)+$`` on a long run of ``a`` ending in
    ``!`` would backtrack in ``re`` for ages holding the interpreter lock;
    its matches are bounded, so the call is a failed attempt and the next,
    valid one is the payload."""
    schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "pattern": "^(a|aa)+$"}},
        "required": ["word"],
    }
    status, records = _run(
        home,
        [_call({"word": "a" * 80 + "!"}), _call({"word": "aaaa"}), {"steps": [{"text": "ok"}]}],
        schema,
    )
    first, second = _tool_results(records)
    assert first["is_error"] and "took too long" in first["content"]
    assert not second["is_error"]
    result = _result(records)
    assert result["subtype"] == "success" and result["structured_output"] == {"word": "aaaa"}
    assert status == 0
