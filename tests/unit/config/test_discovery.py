"""Prelaunch discovery, ``agentx --list-providers`` (WIRE-026; scenario 29)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentx.config.auth_json import load_registry
from agentx.config.catalog import providers_catalog
from agentx.config.discovery import (
    EXIT_OK,
    EXIT_OUTPUT_FAILED,
    EXIT_USAGE_OR_REGISTRY,
    USAGE,
    UsageError,
    parse_list_providers_args,
    run_list_providers,
)

DESCRIPTOR_KEYS = {
    "value",
    "id",
    "providerType",
    "model",
    "displayName",
    "description",
    "default",
    "selected",
    "supportsEffort",
    "supportedReasoningEfforts",
    "defaultReasoningEffort",
    "reasoning",
}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["--list-providers"], "text", id="selector-only"),
        pytest.param(["--list-providers", "--output-format", "json"], "json", id="json-after"),
        pytest.param(["--output-format", "json", "--list-providers"], "json", id="json-before"),
        pytest.param(["--list-providers", "--output-format=json"], "json", id="equals-form"),
        pytest.param(["--output-format=text", "--list-providers"], "text", id="text-equals-before"),
        pytest.param(["--list-providers", "--output-format", "text"], "text", id="text-explicit"),
        pytest.param(["--list-providers", "--"], "text", id="final-terminator"),
        pytest.param(["--output-format", "json", "--list-providers", "--"], "json", id="all-three"),
    ],
)
def test_grammar_accepts(args: list[str], expected: str) -> None:
    assert parse_list_providers_args(args) == expected


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        pytest.param([], "--list-providers is required", id="empty"),
        pytest.param(["--output-format", "json"], "--list-providers is required", id="no-selector"),
        pytest.param(["--list-providers", "--list-providers"], "given twice", id="selector-twice"),
        pytest.param(
            ["--list-providers", "--output-format", "json", "--output-format=json"],
            "given twice",
            id="format-twice",
        ),
        pytest.param(
            ["--list-providers", "--output-format", "stream-json"], "text or json", id="stream-json"
        ),
        pytest.param(["--list-providers", "--output-format="], "text or json", id="empty-value"),
        pytest.param(["--list-providers", "--output-format"], "needs a value", id="missing-value"),
        pytest.param(
            ["--list-providers", "--output-format", "--"], "text or json", id="terminator-as-value"
        ),
        pytest.param(["--list-providers", "--help"], "--help is not accepted", id="help"),
        pytest.param(["--version", "--list-providers"], "--version is not accepted", id="version"),
        pytest.param(["--list-providers", "-p", "hi"], "-p is not accepted", id="print"),
        pytest.param(["--list-providers", "SECRET prompt"], "unexpected argument 2", id="prompt"),
        pytest.param(["--list-providers", "--", "x"], "-- must be the last", id="after-terminator"),
        pytest.param(["--", "--list-providers"], "-- must be the last", id="terminator-first"),
        pytest.param(["--list-providers", "--", "--"], "-- must be the last", id="two-terminators"),
        pytest.param(["--list-providers=yes"], "is not accepted", id="selector-with-value"),
        pytest.param(["--list-providers", "--provider", "a"], "--provider is not", id="provider"),
        pytest.param(["--list-providers", "--output-format", "JSON"], "text or json", id="case"),
    ],
)
def test_grammar_rejects(args: list[str], problem: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_list_providers_args(args)
    assert problem in str(caught.value)
    assert "SECRET" not in str(caught.value)


# --- running discovery against real auth.json files ------------------------------


def provider(provider_id: str, **members: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": provider_id,
        "type": "openai",
        "model": f"model-{provider_id}",
        "endpoint": f"https://{provider_id}.sentinel-route.example/v1",
        "api_key": f"SENTINEL-KEY-{provider_id}",
        "headers": {"X-Org": f"SENTINEL-HEADER-{provider_id}"},
    }
    entry.update(members)
    return entry


def home_with(tmp_path: Path, *providers: dict[str, Any]) -> dict[str, str]:
    body = {"version": 2, "providers": list(providers)}
    (tmp_path / "auth.json").write_text(json.dumps(body), encoding="utf-8")
    return {"AGENTX_HOME": str(tmp_path)}


class Stdout:
    """Collects what discovery hands to its writer."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def __call__(self, data: bytes) -> None:
        self.writes.append(data)


THREE = (
    provider("zeta", reasoning={"efforts": ["low", "high"], "default": "low"}),
    provider("alpha"),
    provider(
        "mid",
        type="azure_openai",
        deployment="SENTINEL-DEPLOYMENT",
        api_version="SENTINEL-APIVERSION",
        reasoning={"efforts": ["minimal", "medium", "xhigh"], "default": "xhigh"},
    ),
)


def run_json(env: dict[str, str]) -> tuple[int, Stdout]:
    stdout = Stdout()
    status = run_list_providers(
        ["--list-providers", "--output-format", "json"], env=env, write=stdout
    )
    return status, stdout


def test_multi_provider_registry_without_default(tmp_path: Path) -> None:
    """Scenario 29: one version-1 document, file order, all selected:false, no default."""
    status, stdout = run_json(home_with(tmp_path, *THREE))
    assert status == EXIT_OK
    (document,) = stdout.writes
    assert document.endswith(b"\n")
    assert document.count(b"\n") == 1
    parsed = json.loads(document)
    assert set(parsed) == {"version", "providers"}
    assert parsed["version"] == 1
    assert type(parsed["version"]) is int
    assert [p["id"] for p in parsed["providers"]] == ["zeta", "alpha", "mid"]
    assert all(set(p) == DESCRIPTOR_KEYS for p in parsed["providers"])
    assert not any(p["selected"] for p in parsed["providers"])
    assert not any(p["default"] for p in parsed["providers"])
    assert b"SENTINEL" not in document
    assert b"sentinel" not in document
    assert b'"type"' not in document  # no init record or other event
    assert str(tmp_path).encode() not in document


@pytest.mark.parametrize(
    ("providers", "defaults"),
    [
        pytest.param((provider("solo"),), [True], id="singleton-is-default"),
        pytest.param(
            (provider("a"), provider("b", default=True), provider("c")),
            [False, True, False],
            id="declared-default",
        ),
    ],
)
def test_effective_default_is_reported(
    tmp_path: Path, providers: tuple[dict[str, Any], ...], defaults: list[bool]
) -> None:
    status, stdout = run_json(home_with(tmp_path, *providers))
    assert status == EXIT_OK
    listed = json.loads(stdout.writes[0])["providers"]
    assert [p["default"] for p in listed] == defaults
    assert not any(p["selected"] for p in listed)


@pytest.mark.parametrize("chosen", ["zeta", "alpha", "mid"])
def test_discovery_matches_the_initialize_catalog_but_for_selection(
    tmp_path: Path, chosen: str
) -> None:
    """Scenario 29: a process started with a returned id sees the same descriptors."""
    env = home_with(tmp_path, *THREE)
    _, stdout = run_json(env)
    discovered = json.loads(stdout.writes[0])["providers"]
    initialize = providers_catalog(load_registry(tmp_path), chosen)
    assert [p["value"] for p in discovered] == [p["id"] for p in initialize]
    for listed, selected in zip(discovered, initialize, strict=True):
        assert listed | {"selected": False} == selected | {"selected": False}
        assert selected["selected"] is (selected["id"] == chosen)


def test_without_auth_json_the_builtin_provider_is_listed(tmp_path: Path) -> None:
    status, stdout = run_json({"AGENTX_HOME": str(tmp_path)})
    assert status == EXIT_OK
    (local,) = json.loads(stdout.writes[0])["providers"]
    assert (local["id"], local["model"], local["default"]) == ("local", "local-echo", True)


def test_text_table(tmp_path: Path) -> None:
    stdout = Stdout()
    env = home_with(tmp_path, *THREE)
    assert run_list_providers(["--list-providers"], env=env, write=stdout) == EXIT_OK
    assert stdout.writes == [
        b"ID     TYPE          MODEL        DEFAULT  EFFORTS\n"
        b"zeta   openai        model-zeta   no       low* high\n"
        b"alpha  openai        model-alpha  no       -\n"
        b"mid    azure_openai  model-mid    no       minimal medium xhigh*\n"
    ]


UNSAFE = [
    pytest.param({"api_key": "alpha"}, "json", id="key-equals-id"),
    pytest.param({"api_key": "model-alpha"}, "json", id="key-equals-model"),
    pytest.param({"headers": {"X": "openai"}}, "json", id="header-equals-type"),
    pytest.param({"api_key": '{"version":1'}, "json", id="key-equals-document-prefix"),
    pytest.param({"api_key": "}]}"}, "json", id="key-equals-document-suffix"),
    pytest.param({"api_key": '":false,"'}, "json", id="key-spans-fields"),
    pytest.param({"api_key": "EFFORTS"}, "text", id="key-equals-table-header"),
    pytest.param({"api_key": "no  "}, "text", id="key-spans-table-cells"),
    pytest.param({"endpoint": "http://h", "api_key": "h"}, "json", id="one-letter-key"),
]


@pytest.mark.parametrize(("members", "output"), UNSAFE)
def test_unsafe_projection_writes_nothing(
    tmp_path: Path, members: dict[str, Any], output: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scenario 29: any collision with the credential union leaves stdout empty."""
    env = home_with(tmp_path, provider("zeta"), provider("alpha", **members), provider("mid"))
    stdout = Stdout()
    args = ["--list-providers", f"--output-format={output}"]
    assert run_list_providers(args, env=env, write=stdout) == EXIT_USAGE_OR_REGISTRY
    assert stdout.writes == []
    error = capsys.readouterr().err
    assert error.startswith("agentx: ")
    assert "SENTINEL" not in error
    assert str(tmp_path) not in error


def test_text_and_json_are_each_checked_as_final_bytes(tmp_path: Path) -> None:
    """A literal only the text table spells blocks text output, not JSON."""
    env = home_with(tmp_path, provider("alpha", api_key="EFFORTS"))
    status, stdout = run_json(env)
    assert status == EXIT_OK
    assert len(stdout.writes) == 1


def test_registry_error_writes_nothing_and_names_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = home_with(tmp_path, provider("a", api_key=["SENTINEL-LIST"]))
    status, stdout = run_json(env)
    assert status == EXIT_USAGE_OR_REGISTRY
    assert stdout.writes == []
    error = capsys.readouterr().err
    assert error == "agentx: auth.json: providers[0].api_key: must be a string\n"


def test_usage_error_writes_nothing_and_prints_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stdout = Stdout()
    env = home_with(tmp_path, provider("a"))
    status = run_list_providers(["--list-providers", "my prompt"], env=env, write=stdout)
    assert status == EXIT_USAGE_OR_REGISTRY
    assert stdout.writes == []
    assert capsys.readouterr().err == f"agentx: unexpected argument 2\n{USAGE}\n"


def test_writer_failure_exits_nonzero_without_retry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real pipe whose reader is gone: one attempt, exit 3, a fixed diagnostic."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    attempts: list[bytes] = []

    def write(data: bytes) -> None:
        attempts.append(data)
        os.write(write_end, data)

    try:
        status = run_list_providers(
            ["--list-providers"], env=home_with(tmp_path, provider("a")), write=write
        )
    finally:
        os.close(write_end)
    assert status == EXIT_OUTPUT_FAILED
    assert len(attempts) == 1
    assert capsys.readouterr().err == "agentx: writing the provider list to stdout failed\n"


def test_writer_error_is_never_formatted(tmp_path: Path) -> None:
    class Hostile(Exception):
        def __str__(self) -> str:
            raise AssertionError("formatted")

    def write(_data: bytes) -> None:
        raise Hostile

    status = run_list_providers(
        ["--list-providers"], env=home_with(tmp_path, provider("a")), write=write
    )
    assert status == EXIT_OUTPUT_FAILED


HEAVY = ("pykka", "PIL", "pypdf", "httpx")
PROGRAM = f"""
import os, sys
from agentx.config.discovery import run_list_providers
status = run_list_providers(sys.argv[1:], env=os.environ, write=sys.stdout.buffer.write)
sys.stdout.flush()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {set(HEAVY)!r})
sys.stderr.write(repr(heavy))
sys.exit(status)
"""


def test_discovery_in_a_real_process_imports_no_runtime_stack(tmp_path: Path) -> None:
    env = dict(os.environ) | home_with(tmp_path, *THREE)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, "--output-format=json", "--list-providers", "--"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr == b"[]"
    assert json.loads(done.stdout)["version"] == 1
    assert done.stdout.endswith(b"}\n")
