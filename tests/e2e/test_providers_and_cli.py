"""End-to-end: provider selection, catalogs and discovery (WIRE-016, WIRE-023..026,
DEC-AUTH-4; scenarios 21, 25, 26, 27, 29) and the one-shot command line (DEC-CLI-1/2/4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.agentx_process import DUPLEX, control, encode, records_of, run_once, user, write_auth

SENTINELS = {
    "endpoint": "https://sentinel-endpoint.invalid",
    "deployment": "sentinel-deployment",
    "api_version": "sentinel-api-version",
    "api_key": "sentinel-api-key-0001",
}


def _registry(home: Path) -> Path:
    return write_auth(
        home,
        [
            {
                "id": "sol-east",
                "type": "azure_openai",
                "model": "gpt-5.6-sol",
                **SENTINELS,
                "headers": {"X-Extra": "sentinel-header"},
                "reasoning": {"efforts": ["low", "medium", "high"], "default": "high"},
            },
            {
                "id": "offline",
                "type": "scripted",
                "model": "echo-model",
                "reasoning": {"efforts": ["medium"], "default": "medium"},
            },
            {"id": "plain", "type": "scripted", "model": "plain-model"},
        ],
    )


def _secrets(path: Path) -> list[bytes]:
    """Every credential value, and the routing field names as JSON members."""
    return [v.encode() for v in (*SENTINELS.values(), "sentinel-header", str(path))] + [
        b"X-Extra",
        b'"endpoint"',
        b'"deployment"',
        b'"api_version"',
        b'"api_key"',
    ]


def test_scenarios_21_25_26_27_selected_nondefault_provider(home: Path) -> None:
    """init and initialize: exact selection, complete safe catalog, apiKeySource user."""
    path = _registry(home)
    stdin = encode(control("i", "initialize")) + encode(user("hi"))
    proc = run_once(["--provider", "offline", *DUPLEX], stdin, home=home)
    assert proc.returncode == 0, proc.stderr
    for secret in _secrets(path):
        assert secret not in proc.stdout
    records = records_of(proc.stdout)
    init = records[0]
    assert (init["provider"], init["provider_type"], init["model"]) == (
        "offline",
        "scripted",
        "echo-model",
    )
    assert init["reasoning_capabilities"] == {
        "supported": True,
        "efforts": ["medium"],
        "defaultEffort": "medium",
    }
    assert init["apiKeySource"] == "user"
    assert "providers" not in init
    response = next(r for r in records if r["type"] == "control_response")["response"]["response"]
    catalog = response["providers"]
    assert [p["id"] for p in catalog] == ["sol-east", "offline", "plain"]
    assert [p["value"] for p in catalog] == [p["id"] for p in catalog]
    assert [p["selected"] for p in catalog] == [False, True, False]
    assert [p["default"] for p in catalog] == [False, False, False]
    for p in catalog:
        assert p["supportedReasoningEfforts"] == p["reasoning"]["efforts"]
        assert p["supportsEffort"] == p["reasoning"]["supported"] == bool(p["reasoning"]["efforts"])
    (model,) = response["models"]
    assert model["value"] == "echo-model" and model["provider"] == "offline"
    assert response["account"] == {"apiKeySource": "user"}


def test_several_providers_without_default_need_a_selection(home: Path) -> None:
    _registry(home)
    proc = run_once(DUPLEX, b"", home=home)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert "--provider" in proc.stderr.decode()


def test_scenario_29_discovery_then_a_second_process(home: Path) -> None:
    path = _registry(home)
    proc = run_once(["--list-providers", "--output-format", "json"], b"", home=home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith(b"\n") and proc.stdout.count(b"\n") == 1
    for secret in _secrets(path):
        assert secret not in proc.stdout
    document = json.loads(proc.stdout)
    assert set(document) == {"version", "providers"} and document["version"] == 1
    assert all(p["selected"] is False for p in document["providers"])
    chosen = document["providers"][2]["value"]
    second = run_once(
        ["--provider", chosen, *DUPLEX], encode(control("i", "initialize")), home=home
    )
    response = records_of(second.stdout)[1]["response"]["response"]
    for discovered, live in zip(document["providers"], response["providers"], strict=True):
        assert {**discovered, "selected": live["selected"]} == live
    assert [p["selected"] for p in response["providers"]] == [False, False, True]


def test_scenario_29_unsafe_projection_writes_nothing(home: Path) -> None:
    write_auth(home, [{"id": "p", "type": "scripted", "model": "leaky", "api_key": "leaky"}])
    proc = run_once(["--output-format", "json", "--list-providers"], b"", home=home)
    assert proc.returncode != 0
    assert proc.stdout == b""


@pytest.mark.parametrize(
    "args",
    [
        ["--list-providers", "--help"],
        ["--list-providers", "prompt"],
        ["--list-providers", "--list-providers"],
    ],
    ids=["help", "prompt", "repeated"],
)
def test_discovery_grammar(home: Path, args: list[str]) -> None:
    proc = run_once(args, b"", home=home)
    assert proc.returncode == 2 and proc.stdout == b""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-p", "hello text"], b"hello text\n"),
        (["--print", "--", "after dashes"], b"after dashes\n"),
    ],
    ids=["text", "print-dashes"],
)
def test_one_shot_text(home: Path, args: list[str], expected: bytes) -> None:
    proc = run_once(args, b"", home=home)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


def test_one_shot_json_is_the_result_alone(home: Path) -> None:
    proc = run_once(["-p", "json please", "--output-format", "json"], b"", home=home)
    assert proc.returncode == 0
    (record,) = records_of(proc.stdout)
    assert record["type"] == "result" and record["result"] == "json please"


def test_text_input_reads_stdin_to_eof(home: Path) -> None:
    proc = run_once([], b"from stdin", home=home)
    assert proc.returncode == 0
    assert proc.stdout == b"from stdin\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus"],
        ["--provider", "a", "--provider", "b"],
        ["--max-turns", "0"],
        ["--output-format", "xml"],
    ],
    ids=["unknown", "repeated", "bad-int", "bad-choice"],
)
def test_usage_errors_exit_2_with_nothing_on_stdout(home: Path, args: list[str]) -> None:
    proc = run_once(args, b"", home=home)
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert b"usage:" in proc.stderr


def test_version(home: Path) -> None:
    proc = run_once(["--version"], b"", home=home)
    assert proc.returncode == 0 and proc.stdout.startswith(b"agentx ")
