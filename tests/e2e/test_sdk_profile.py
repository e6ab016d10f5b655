"""The ``sdk`` control profile over pipes (DEC-PROFILE-2): how it is chosen,
an ``initialize`` field refused ends the session before any model request,
and the live ``set_permission_mode`` / ``set_model``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    control,
    encode,
    is_control_response,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream

KEY = "sk-sdk-profile-sentinel"


def _loopback(home: Path, url: str) -> None:
    write_auth(
        home,
        [{"id": "a", "type": "anthropic", "model": "model-x", "endpoint": url, "api_key": KEY}],
    )


@pytest.mark.parametrize(
    ("args", "env", "settings", "expected"),
    [
        pytest.param((), {}, None, "standalone", id="default"),
        pytest.param((), {"CLAUDE_CODE_ENTRYPOINT": "sdk-py"}, None, "sdk", id="python-sdk"),
        pytest.param((), {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"}, None, "sdk", id="ts-sdk"),
        pytest.param((), {"CLAUDE_CODE_ENTRYPOINT": "cli"}, None, "standalone", id="cli-entry"),
        pytest.param(("--control-profile", "sdk"), {}, None, "sdk", id="flag"),
        pytest.param((), {}, {"controlProfile": "sdk"}, "sdk", id="setting"),
        pytest.param(
            ("--control-profile", "standalone"),
            {"CLAUDE_CODE_ENTRYPOINT": "sdk-py"},
            {"controlProfile": "extended"},
            "standalone",
            id="flag-wins",
        ),
        pytest.param(
            (),
            {"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"},
            {"controlProfile": "extended"},
            "extended",
            id="setting-wins-over-env",
        ),
    ],
)
def test_profile_choice(
    home: Path,
    args: tuple[str, ...],
    env: dict[str, str],
    settings: dict[str, str] | None,
    expected: str,
) -> None:
    if settings is not None:
        (home / "settings.json").write_text(json.dumps(settings))
    proc = run_once((*DUPLEX, *args), encode(control("i", "initialize")), home=home, env=env)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    assert records[0]["subtype"] == "init" and records[0]["control_profile"] == expected
    response = next(r for r in records if r["type"] == "control_response")["response"]
    assert response["subtype"] == "success"
    assert response["response"]["control_profile"] == expected


def test_a_bad_control_profile_setting_exits_2(home: Path) -> None:
    (home / "settings.json").write_text(json.dumps({"controlProfile": "full"}))
    proc = run_once(DUPLEX, b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""
    assert "controlProfile must be one of standalone, extended, sdk" in proc.stderr.decode()


@pytest.mark.parametrize(
    "fields",
    [
        pytest.param(
            {"hooks": {"PreToolUse": [{"matcher": "(", "hookCallbackIds": ["h"]}]}},
            id="hooks-with-a-bad-matcher",
        ),
        pytest.param({"title": "a title"}, id="ts-title"),
        pytest.param({"hooks": None, "somethingNew": True}, id="unknown-field"),
    ],
)
def test_a_refused_initialize_field_ends_the_session_before_any_turn(
    home: Path, tmp_path: Path, fields: dict[str, object]
) -> None:
    """Item of DEC-PROFILE-2: the TypeScript SDK goes on after a refused
    initialize, so the prompt right behind it must never reach the model."""
    with ProviderServer([Reply(chunks=anthropic_text_stream("never"))]) as server:
        _loopback(home, server.url)
        stdin = encode(control("i", "initialize", **fields)) + encode(user("run it"))
        proc = run_once(
            DUPLEX, stdin, home=home, cwd=tmp_path, env={"CLAUDE_CODE_ENTRYPOINT": "sdk-ts"}
        )
        requests = list(server.requests)
    assert requests == []
    assert proc.returncode == 2
    records = records_of(proc.stdout)
    assert not any(is_result(r) for r in records)
    (response,) = [r["response"] for r in records if r["type"] == "control_response"]
    assert response["subtype"] == "error" and response["request_id"] == "i"
    refused = [name for name in fields if fields[name] is not None]
    assert all(name in response["error"] for name in refused)
    lines = [line for line in proc.stderr.decode().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].endswith("the session ends (status 2, DEC-PROFILE-2)")
    assert response["error"] in lines[0]


def test_standalone_initialize_with_a_field_is_still_the_spec_error(home: Path) -> None:
    stdin = encode(control("i", "initialize", agents={})) + encode(user("hello"))
    proc = run_once(DUPLEX, stdin, home=home)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    response = next(r for r in records if r["type"] == "control_response")["response"]
    assert response["subtype"] == "error"
    assert next(r for r in records if is_result(r))["result"] == "hello"


def test_sdk_set_permission_mode_is_live(home: Path, tmp_path: Path) -> None:
    """acceptEdits set live: the Write runs without a can_use_tool request."""
    work = tmp_path / "work"
    work.mkdir()
    script = home / "s.json"
    write = {"tool_use": {"name": "Write", "input": {"file_path": str(work / "w"), "content": "x"}}}
    script.write_text(json.dumps({"version": 1, "turns": [{"steps": [write]}]}))
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    proc = AgentxProcess((*DUPLEX, "--control-profile", "sdk"), home=home, cwd=work)
    try:
        proc.send(control("m", "set_permission_mode", mode="acceptEdits"))
        response = proc.until(is_control_response("m"))[-1]["response"]
        assert response["subtype"] == "success"
        proc.send(control("bad", "set_permission_mode", mode="yolo"))
        assert proc.until(is_control_response("bad"))[-1]["response"]["subtype"] == "error"
        proc.send(user("write"))
        result = proc.until(is_result)[-1]
        assert result["subtype"] == "success"
        assert (work / "w").read_text() == "x"
        assert not any(r.get("type") == "control_request" for r in proc.seen)
        proc.close_stdin()
        assert proc.wait() == 0
    finally:
        proc.kill()


@pytest.mark.parametrize(
    ("model", "ok"),
    [
        pytest.param("m", True, id="the-served-model"),
        pytest.param(None, True, id="default"),
        pytest.param("s", False, id="a-provider-id-is-no-model"),
        pytest.param("other", False, id="another-model"),
    ],
)
def test_sdk_set_model_stays_within_the_provider(home: Path, model: str | None, ok: bool) -> None:
    script = home / "s.json"
    script.write_text(json.dumps({"version": 1, "turns": [{"steps": [{"text": "hi"}]}]}))
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    stdin = encode(control("m", "set_model", model=model)) + encode(control("g", "get_settings"))
    proc = run_once((*DUPLEX, "--control-profile", "sdk"), stdin, home=home)
    assert proc.returncode == 0, proc.stderr
    responses = {
        r["response"]["request_id"]: r["response"]
        for r in records_of(proc.stdout)
        if r["type"] == "control_response"
    }
    assert (responses["m"]["subtype"] == "success") is ok
    if not ok:
        assert "--provider" in responses["m"]["error"]
    assert responses["g"]["response"]["applied"]["model"] == "m"


@pytest.mark.parametrize(
    ("fields", "args", "expected"),
    [
        pytest.param({"promptSuggestions": True}, (), ["what next?"], id="switched-on"),
        pytest.param({"promptSuggestions": False}, ("--prompt-suggestions",), [], id="off"),
        pytest.param({}, ("--prompt-suggestions",), ["what next?"], id="flag-alone"),
        pytest.param({}, (), [], id="neither"),
    ],
)
def test_initialize_prompt_suggestions_is_applied(
    home: Path, fields: dict[str, object], args: tuple[str, ...], expected: list[str]
) -> None:
    """DEC-PROFILE-2: ``promptSuggestions`` switches the prompt suggestions
    (the echo provider suggests the prompt again)."""
    stdin = encode(control("i", "initialize", **fields)) + encode(user("what next?"))
    proc = run_once((*DUPLEX, "--control-profile", "sdk", *args), stdin, home=home)
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    response = next(r for r in records if r["type"] == "control_response")["response"]
    assert response["subtype"] == "success"
    assert [r["suggestion"] for r in records if r["type"] == "prompt_suggestion"] == expected


def test_initialize_prompt_suggestions_must_be_a_boolean(home: Path) -> None:
    stdin = encode(control("i", "initialize", promptSuggestions="yes")) + encode(user("x"))
    proc = run_once((*DUPLEX, "--control-profile", "sdk"), stdin, home=home)
    assert proc.returncode == 2
    response = next(r for r in records_of(proc.stdout) if r["type"] == "control_response")
    assert response["response"]["error"] == (
        "initialize refused: promptSuggestions: must be true or false"
    )


def test_sdk_set_model_switches_the_next_request(home: Path) -> None:
    """DEC-PROFILE-2: after ``set_model`` the next request to the loopback
    model names the new model (an alias resolved within the provider); a model
    the provider does not serve is an error and the model stays; ``None``
    goes back to the session's own model."""
    replies = [Reply(chunks=anthropic_text_stream(text)) for text in ("one", "two", "three")]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "models": ["claude-opus-*", "model-y"],
                    "endpoint": server.url,
                    "api_key": KEY,
                }
            ],
        )
        proc = AgentxProcess((*DUPLEX, "--control-profile", "sdk"), home=home)
        try:
            proc.send(user("one"))
            assert proc.until(is_result)[-1]["result"] == "one"
            proc.send(control("m", "set_model", model="opus"))
            assert proc.until(is_control_response("m"))[-1]["response"]["subtype"] == "success"
            proc.send(control("bad", "set_model", model="gpt-5"))
            bad = proc.until(is_control_response("bad"))[-1]["response"]
            assert bad["subtype"] == "error" and "gpt-5" not in bad["error"]
            proc.send(user("two"))
            assistant = [r for r in proc.until(is_result) if r["type"] == "assistant"][-1]
            assert assistant["message"]["model"] == "claude-opus-4-7"
            proc.send(control("back", "set_model", model=None))
            assert proc.until(is_control_response("back"))[-1]["response"]["subtype"] == "success"
            proc.send(user("three"))
            proc.until(is_result)
            proc.close_stdin()
            assert proc.wait() == 0
        finally:
            proc.kill()
        requests = list(server.requests)
    assert [r.body["model"] for r in requests] == ["model-x", "claude-opus-4-7", "model-x"]
