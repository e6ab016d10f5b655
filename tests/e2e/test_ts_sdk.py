"""Drop-in under the stock TypeScript Agent SDK (DEC-COMPAT-4, DEC-CLI-5,
DEC-EOF-1): ``tests/e2e/ts_sdk/drive.mjs`` runs ``@anthropic-ai/claude-agent-sdk``
(pinned in ``tests/e2e/ts_sdk/package.json``, installed by ``.ci/run`` with
``npm ci --omit=optional``) under node, with ``pathToClaudeCodeExecutable``
pointing at the real ``agentx``, and prints one JSON line per step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from agentx.config.env_registry import OFFLINE_NOTICE
from tests.e2e.agentx_process import agentx_command, log_lines, write_anthropic_auth
from tests.fakes.provider_server import ProviderServer, RecordedRequest, Reply

DRIVER_DIR = Path(__file__).with_name("ts_sdk")
PACKAGE = DRIVER_DIR / "node_modules" / "@anthropic-ai" / "claude-agent-sdk" / "package.json"
DEADLINE = 120.0
REFUSED = (
    "agentx: ERROR: initialize refused: agentProgressSummaries (agent progress summaries) "
    "is not supported by agentx; "
    "the session ends (status 2, DEC-PROFILE-2)"
)


def _pinned() -> str:
    manifest = json.loads((DRIVER_DIR / "package.json").read_text())
    return str(manifest["dependencies"]["@anthropic-ai/claude-agent-sdk"])


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the TypeScript Agent SDK test needs it")
    if not PACKAGE.exists():
        pytest.skip(
            "the TypeScript Agent SDK is not installed: "
            "run `npm ci --omit=optional` in tests/e2e/ts_sdk (.ci/run does)"
        )
    return node


class DriverRun(NamedTuple):
    """What a TS SDK driver run left: its JSON lines by step, the process,
    and the requests the loopback model received."""

    steps: dict[str, Any]
    done: subprocess.CompletedProcess[str]
    requests: list[RecordedRequest]


def run_driver(
    script: str,
    replies: list[Reply],
    home: Path,
    work: Path,
    *extra: str,
    api_key: str,
    timeout: float = 180,
) -> DriverRun:
    """Run ``ts_sdk/<script>`` (a program on the stock TypeScript SDK) with
    agentx, ``home`` and ``work`` (and ``extra``) as its arguments, against
    agentx on one loopback Anthropic profile answering ``replies``."""
    node = _node()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    with ProviderServer(replies) as server:
        write_anthropic_auth(home, server.url, api_key)
        done = subprocess.run(
            [node, script, agentx_command()[0], str(home), str(work), *extra],
            cwd=DRIVER_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        requests = list(server.requests)
    steps = {line["step"]: line for line in map(json.loads, done.stdout.splitlines())}
    return DriverRun(steps, done, requests)


def _scripted_home(home: Path, work: Path) -> None:
    def write(name: str) -> dict[str, Any]:
        return {
            "tool_use": {"name": "Write", "input": {"file_path": str(work / name), "content": "ts"}}
        }

    turns = [
        {"steps": [write("w.txt")]},
        {"steps": [{"text": "done"}]},
        {"steps": [write("never.txt")]},
    ]
    (home / "s.json").write_text(json.dumps({"version": 1, "turns": turns}))
    provider = {"id": "s", "type": "scripted", "model": "m", "script": str(home / "s.json")}
    (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [provider]}))


def test_the_stock_ts_sdk_drives_agentx(tmp_path: Path) -> None:
    node = _node()
    installed = json.loads(PACKAGE.read_text())["version"]
    assert installed == _pinned(), "tests/e2e/ts_sdk holds another SDK version: run npm ci"
    command = agentx_command()
    assert len(command) == 1, "the SDK spawns one executable: install agentx's console script"
    echo, scripted, work = (tmp_path / name for name in ("echo", "scripted", "work"))
    for folder in (echo, scripted, work):
        folder.mkdir()
    _scripted_home(scripted, work)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    done = subprocess.run(
        [node, "drive.mjs", command[0], str(echo), str(scripted), str(work)],
        cwd=DRIVER_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    steps = {line["step"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0 and "done" in steps, (steps.get("failed"), done.stderr[-2000:])

    one_shot = steps["one_shot"]
    assert one_shot["types"][0] == "system/init"
    assert "assistant" in one_shot["types"] and "result/success" in one_shot["types"]
    assert one_shot["result"] == "hello ts sdk"

    # DEC-PROFILE-2: a refused initialize field ends the session (status 2, one
    # stderr line); query() fails and no turn ran without what was refused.
    refused = steps["refused_field"]
    assert refused["error"] is not None and "code 2" in refused["error"], refused
    assert not any(t.startswith(("assistant", "result")) for t in refused["types"]), refused
    # (The SDK passes --verbose, which today also turns on DEBUG lines.)
    errors = [line for line in log_lines("\n".join(refused["stderr"])) if "agentx: ERROR" in line]
    assert errors == [REFUSED], refused

    # The default initialize ([""] systemPrompt) succeeds, so these answer.
    control = steps["control"]
    assert {"commands", "models", "account"} <= set(control["init_keys"])
    assert control["commands"] == ["compact", "context", "cost", "clear", "help"]
    assert control["models"] == ["m"]
    assert control["account"] == {"apiKeySource": "user"}

    assert steps["first_turn"] == {"step": "first_turn", "result": "done", "subtype": "success"}
    assert (work / "w.txt").read_text() == "ts"
    interrupted = steps["interrupted_turn"]
    assert interrupted["subtype"] == "error_during_execution" and interrupted["is_error"] is True
    assert not (work / "never.txt").exists()
    # DEC-CLI-6: the SDK raises its result error for the interrupted last turn.
    assert "error result" in steps["permissions"]["ending"]
    asked = steps["permissions"]["asked"]
    assert [(a["toolName"], Path(a["file"]).name) for a in asked] == [
        ("Write", "w.txt"),
        ("Write", "never.txt"),
    ]
    assert all(a["toolUseID"].startswith("toolu_") for a in asked)
    # Nothing is warned about across all sessions but the offline provider's
    # notice of the echo session (DEC-AUTH-4).
    warned = [line for line in log_lines(done.stderr) if "WARNING" in line]
    assert all(OFFLINE_NOTICE in line for line in warned), done.stderr[-2000:]


def test_ts_sdk_callback_hooks(tmp_path: Path) -> None:
    """SDK callback hooks under the TypeScript SDK (DEC-PROFILE-2, DECISIONS
    section 3): each callback ran with its input, and each answer had its
    effect: the denied tool did not run, both contexts reached the model's
    requests, the Stop block made the turn go on; ``includeHookEvents``
    brings the hook records."""
    from tests.fakes.provider_server import (
        ProviderServer,
        Reply,
        anthropic_text_stream,
        anthropic_tool_use,
    )

    node = _node()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    replies = [
        Reply(chunks=anthropic_tool_use("Bash", {"command": "touch denied"}, "toolu_a")),
        Reply(chunks=anthropic_tool_use("Bash", {"command": "touch allowed"}, "toolu_b")),
        Reply(chunks=anthropic_text_stream("first")),
        Reply(chunks=anthropic_text_stream("second")),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    with ProviderServer(replies) as server:
        provider = {
            "id": "a",
            "type": "anthropic",
            "model": "claude-test",
            "endpoint": server.url,
            "api_key": "sk-ts-hooks-sentinel",
        }
        (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [provider]}))
        done = subprocess.run(
            [node, "hooks.mjs", agentx_command()[0], str(home), str(work)],
            cwd=DRIVER_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
            check=False,
        )
        requests = [json.dumps(r.body) for r in server.requests]
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    seen = report["seen"]
    events = [s["event"] for s in seen]
    assert events == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionDenied",
        "PostToolBatch",
        "PreToolUse",
        "PostToolUse",
        "PostToolBatch",
        "Stop",
        "Stop",
    ]
    pre = [s for s in seen if s["event"] == "PreToolUse"]
    assert [p["input"]["tool_input"] for p in pre] == [
        {"command": "touch denied"},
        {"command": "touch allowed"},
    ]
    assert [p["toolUseID"] for p in pre] == ["toolu_a", "toolu_b"]
    assert pre[0]["input"]["cwd"] == str(work)
    assert {"session_id", "transcript_path", "permission_mode"} <= set(pre[0]["input"])
    assert not (work / "denied").exists() and (work / "allowed").exists()
    assert len(requests) == 4
    assert "TS-PROMPT-CONTEXT" in requests[0]
    assert "ts says deny" in requests[1]
    assert "TS-POST-CONTEXT" in requests[2]
    assert "TS-REPLACED-OUTPUT" in requests[2]  # PostToolUse's updatedToolOutput
    assert "TS-BATCH-CONTEXT" in requests[1] and "TS-BATCH-CONTEXT" in requests[2]
    (denied,) = [s["input"] for s in seen if s["event"] == "PermissionDenied"]
    assert (denied["tool_use_id"], denied["reason"]) == ("toolu_a", "ts says deny")
    assert report["informational"] == [["warning", "TS-DENIAL-SEEN"]]
    assert "TS-KEEP-GOING" in requests[3]
    assert report["result"] == {"subtype": "success", "result": "second", "num_turns": 4}
    assert ["hook_started", "PreToolUse"] in report["hookRecords"]
    assert ["hook_response", "Stop"] in report["hookRecords"]


def test_ts_sdk_output_format(tmp_path: Path) -> None:
    """The TS SDK's ``outputFormat`` (sent as ``initialize`` ``jsonSchema``,
    DEC-PROFILE-2, DEC-CLI-5): an invalid StructuredOutput call is answered,
    the valid one is the result's ``structured_output``."""
    node = _node()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()

    def call(value: dict[str, Any]) -> dict[str, Any]:
        return {"steps": [{"tool_use": {"name": "StructuredOutput", "input": value}}]}

    turns = [call({"name": 1}), call({"name": "Ada"}), {"steps": [{"text": "ok"}]}]
    (home / "s.json").write_text(json.dumps({"version": 1, "turns": turns}))
    provider = {"id": "s", "type": "scripted", "model": "m", "script": str(home / "s.json")}
    (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [provider]}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    done = subprocess.run(
        [node, "structured.mjs", agentx_command()[0], str(home), str(work)],
        cwd=DRIVER_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report == {"subtype": "success", "structured_output": {"name": "Ada"}}
