"""End-to-end: the wire core over the real process (WIRE-001, WIRE-012/013; scenarios
1, 2, 14, 16, 17, 24)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)


def test_init_is_first_and_each_prompt_ends_in_one_result(home: Path) -> None:
    """DEC-CLI-3, DEC-TURN-1/2: init first; running, assistant, result, idle."""
    proc = run_once(DUPLEX, encode(user("one")) + encode(user("two")), home=home)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    assert records[0]["type"] == "system" and records[0]["subtype"] == "init"
    assert [r["type"] for r in records].count("system") >= 2
    results = [r for r in records if is_result(r)]
    assert [r["result"] for r in results] == ["one", "two"]
    assert records[-1]["subtype"] == "session_state_changed" and records[-1]["state"] == "idle"
    session = records[0]["session_id"]
    assert all(r["session_id"] == session for r in records)
    assert len({r["uuid"] for r in records}) == len(records)


def test_scenario_1_split_chunks_without_final_newline(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 1: three objects split across arbitrary chunks, no final newline."""
    stream = encode(user("alpha")) + encode(user("beta")) + encode(user("gamma"))[:-1]
    proc = AgentxProcess(home=home)
    processes.append(proc)
    for start in range(0, len(stream), 7):
        proc.send_bytes(stream[start : start + 7])
    proc.close_stdin()
    records = proc.rest()
    assert proc.wait() == 0
    assert [r["result"] for r in records if is_result(r)] == ["alpha", "beta", "gamma"]


def test_scenario_2_line_separators_stay_inside_one_record(home: Path) -> None:
    """Scenario 2: U+2028/U+2029 in assistant text: one physical line, exact text."""
    text = "before\u2028middle\u2029after"
    proc = run_once(DUPLEX, encode(user(text)), home=home)
    assert proc.returncode == 0
    assert "\u2028".encode() not in proc.stdout and "\u2029".encode() not in proc.stdout
    assert b"\\u2028" in proc.stdout and b"\\u2029" in proc.stdout
    assistant = [r for r in records_of(proc.stdout) if r["type"] == "assistant"]
    assert assistant[0]["message"]["content"][0]["text"] == text


def test_scenario_14_malformed_unterminated_tail_is_fatal(home: Path) -> None:
    """Scenario 14: diagnostic plus status 1; what came before is still answered."""
    stream = encode(user("kept")) + b'{"type":"control_response","response":{"subtype":"succ'
    proc = run_once(DUPLEX, stream, home=home)
    assert proc.returncode == 1
    stderr = proc.stderr.decode()
    assert "line 2" in stderr
    assert "succ" not in stderr  # the diagnostic never echoes record content
    assert [r["result"] for r in records_of(proc.stdout) if is_result(r)] == ["kept"]


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (b'{"type":"user","type":"user"}', "duplicate member"),
        (b'{"type":"keep_alive","n":NaN}', "line 1"),
        (b"[1,2]", "line 1"),
        (b"\xff\xfe{}", "line 1"),
    ],
    ids=["duplicate", "nan", "not-object", "bad-utf8"],
)
def test_fatal_lines_exit_1_with_a_diagnostic(home: Path, line: bytes, needle: str) -> None:
    """WIRE-001, DECISIONS section 1."""
    proc = run_once(DUPLEX, line + b"\n", home=home)
    assert proc.returncode == 1
    assert needle in proc.stderr.decode()
    assert b"Traceback" not in proc.stderr


def test_unknown_type_warns_and_is_ignored(home: Path) -> None:
    """WIRE-002."""
    proc = run_once(DUPLEX, b'{"type":"future_thing","x":1}\n' + encode(user("after")), home=home)
    assert proc.returncode == 0
    assert "unknown" in proc.stderr.decode()
    assert [r["result"] for r in records_of(proc.stdout) if is_result(r)] == ["after"]


def test_invalid_user_record_is_an_input_error_and_the_stream_goes_on(home: Path) -> None:
    """WIRE-021: a semantically invalid user record emits an input-error result."""
    bad = {**user("x"), "message": {"role": "assistant", "content": "x"}}
    proc = run_once(DUPLEX, encode(bad) + encode(user("fine")), home=home)
    assert proc.returncode == 0
    results = [r for r in records_of(proc.stdout) if is_result(r)]
    assert results[0]["subtype"] == "error_during_execution"
    assert results[0]["num_turns"] == 0
    assert results[0]["errors"][0].startswith("input_error: ")
    assert results[1]["result"] == "fine"


def _scripted(provider_id: str, **extra: object) -> dict[str, object]:
    return {"id": provider_id, "type": "scripted", "model": f"{provider_id}-model", **extra}


def test_scenario_16_unknown_price_is_null_and_declared_zero_is_zero(home: Path) -> None:
    """Scenario 16 / WIRE-012."""
    write_auth(
        home,
        [
            _scripted("unpriced", default=True),
            _scripted("free", pricing={"input_per_mtok": 0, "output_per_mtok": 0}),
            _scripted("priced", pricing={"input_per_mtok": 1000000, "output_per_mtok": 0}),
        ],
    )
    costs = {}
    for provider in ("unpriced", "free", "priced"):
        proc = run_once(["--provider", provider, *DUPLEX], encode(user("price me")), home=home)
        assert proc.returncode == 0, proc.stderr
        (result,) = [r for r in records_of(proc.stdout) if is_result(r)]
        model_cost = result["modelUsage"][f"{provider}-model"]["costUSD"]
        costs[provider] = (result["total_cost_usd"], model_cost)
    assert costs["unpriced"] == (None, None)
    assert costs["free"] == (0, 0)
    assert costs["free"][0] is not None
    assert costs["priced"][0] == costs["priced"][1] > 0


@pytest.mark.parametrize(
    "secret",
    ["echo-this-secret", '","', '"}\n'],
    ids=["literal-in-text", "field-separator", "suffix-and-newline"],
)
def test_scenario_17_credentials_never_reach_stdout(home: Path, secret: str) -> None:
    """Scenario 17: a credential anywhere in a frame writes nothing of it, and
    the process ends nonzero (2 at start-up when a public projection would
    carry it, WIRE-024; 3 when the encoder latches mid-session, WIRE-013)."""
    write_auth(home, [_scripted("p", api_key=secret)])
    proc = run_once(DUPLEX, encode(user("please echo-this-secret now")), home=home)
    assert proc.returncode in (2, 3)
    assert secret.encode() not in proc.stdout
    assert secret not in proc.stderr.decode()
    for line in proc.stdout.splitlines(keepends=True):
        json.loads(line)  # whatever was written is whole records


def test_scenario_17_latched_encoder_exits_3_after_the_safe_records(home: Path) -> None:
    write_auth(home, [_scripted("p", api_key="topsecret")])
    proc = run_once(DUPLEX, encode(user("harmless")) + encode(user("a topsecret")), home=home)
    assert proc.returncode == 3
    assert b"topsecret" not in proc.stdout
    results = [r for r in records_of(proc.stdout) if is_result(r)]
    assert [r["result"] for r in results] == ["harmless"]


def test_credential_free_profile_output_is_plain_json(home: Path) -> None:
    """WIRE-013 last sentence: no credential material, ordinary bytes."""
    proc = run_once(DUPLEX, encode(user('quote " slash / tab \t')), home=home)
    assert proc.returncode == 0
    assert b"\\/" not in proc.stdout
    for line in proc.stdout.splitlines(keepends=True):
        assert (
            line
            == json.dumps(json.loads(line), ensure_ascii=False, separators=(",", ":")).encode()
            + b"\n"
        )


def test_scenario_24_text_only_profile(home: Path) -> None:
    """Scenario 24 (text part): no input_capabilities; legacy forms unchanged."""
    write_auth(home, [_scripted("textonly", attachments=False)])
    legacy = [
        {"type": "user", "message": "bare string", "parent_tool_use_id": None},
        user("object with string"),
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "blocks "},
                    {"type": "input_text", "text": "joined"},
                ],
            },
            "parent_tool_use_id": None,
        },
    ]
    proc = run_once(DUPLEX, b"".join(encode(r) for r in legacy), home=home)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    assert "input_capabilities" not in records[0]
    results = [r["result"] for r in records if is_result(r)]
    assert results == ["bare string", "object with string", "blocks joined"]


def test_keep_alive_and_environment_updates_are_accepted(home: Path) -> None:
    stream = (
        b'{"type":"keep_alive"}\n'
        + b'{"type":"update_environment_variables","variables":{"A":"1"}}\n'
        + encode(user("still here"))
    )
    proc = run_once(DUPLEX, stream, home=home)
    assert proc.returncode == 0
    assert [r["result"] for r in records_of(proc.stdout) if is_result(r)] == ["still here"]


def test_invalid_environment_updates_are_ignored_and_produce_no_result(home: Path) -> None:
    """DEC-ENV-1: each invalid update gets one stderr line naming its line and
    nothing on stdout; results still pair one to one with prompts."""
    invalid = [
        {"variables": 3},
        {"variables": {"A": 1}},
        {"variables": {"A=B": "x"}},
        {"variables": {"A": "x\u0000y"}},
        {},
    ]
    stream = encode(user("first")) + b"".join(
        encode({"type": "update_environment_variables", **fields}) for fields in invalid
    )
    stream += encode({"type": "update_environment_variables", "variables": {"A": "1"}})
    stream += encode(user("second"))
    proc = run_once(DUPLEX, stream, home=home)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    assert [r["result"] for r in records if is_result(r)] == ["first", "second"]
    diagnostics = [line for line in proc.stderr.decode().splitlines() if "DEC-ENV-1" in line]
    assert len(diagnostics) == len(invalid)
    for number, line in enumerate(diagnostics, start=2):
        assert f"line {number}: update_environment_variables" in line


def test_broken_stdout_pipe_exits_3_without_hanging(home: Path) -> None:
    """WIRE-015: a broken pipe latches the writer; exit 3, no hang."""
    import subprocess

    from tests.e2e.agentx_process import agentx_command, base_env

    proc = subprocess.Popen(
        [*agentx_command(), *DUPLEX],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=base_env(home),
        cwd=home,
    )
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.readline()  # system/init arrived
    proc.stdout.close()
    try:
        proc.stdin.write(encode(user("into the void")) * 3)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert proc.wait(timeout=20) == 3


def test_partial_messages_stream_events_precede_the_assistant_record(home: Path) -> None:
    """--include-partial-messages: raw model stream events as stream_event records."""
    proc = run_once([*DUPLEX, "--include-partial-messages"], encode(user("two words")), home=home)
    assert proc.returncode == 0
    records = records_of(proc.stdout)
    kinds = [r["type"] for r in records]
    events = [r["event"] for r in records if r["type"] == "stream_event"]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    deltas = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert deltas == "two words"
    assert max(i for i, k in enumerate(kinds) if k == "stream_event") < kinds.index("assistant")


def test_replay_mode_echoes_user_records_with_is_replay(home: Path) -> None:
    record = user("echo me", uuid="6f1e7948-5c1f-4c1f-8e2c-88bc9839ec27")
    proc = run_once([*DUPLEX, "--replay-user-messages"], encode(record) + encode(record), home=home)
    assert proc.returncode == 0
    records = records_of(proc.stdout)
    replays = [r for r in records if r["type"] == "user"]
    assert len(replays) == 2  # DEC-DEDUP-1: the duplicate is acknowledged ...
    assert all(r["isReplay"] is True and r["uuid"] == record["uuid"] for r in replays)
    assert len([r for r in records if is_result(r)]) == 1  # ... but not run twice


def test_max_turns_ends_the_tool_loop(home: Path, tmp_path: Path) -> None:
    script = tmp_path / "loop.json"
    read = {"tool_use": {"name": "Read", "input": {"file_path": str(script)}}}
    script.write_text(json.dumps({"version": 1, "turns": [{"steps": [read]}] * 5}))
    write_auth(home, [_scripted("loop", script=str(script))])
    proc = run_once([*DUPLEX, "--max-turns", "2"], encode(user("go")), home=home)
    assert proc.returncode == 1  # DEC-CLI-6: the last turn ended in error
    (result,) = [r for r in records_of(proc.stdout) if is_result(r)]
    assert result["subtype"] == "error_max_turns" and result["num_turns"] == 2
