"""Drop-in under Anthropic's claude-agent-sdk (DEC-CLI-5,
DEC-COMPAT-1..3, DEC-EOF-1): the stock Python SDK, pinned in the dev extras,
drives the real ``agentx`` through its ``cli_path`` option."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.agentx_process import log_lines

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")

AGENTX = str(Path(sys.executable).with_name("agentx"))


def _options(home: Path, cwd: Path, **extra: Any) -> Any:
    return sdk.ClaudeAgentOptions(
        cli_path=AGENTX, cwd=str(cwd), env={"AGENTX_HOME": str(home)}, **extra
    )


def _script(home: Path, turns: list[dict[str, Any]]) -> None:
    (home / "s.json").write_text(json.dumps({"version": 1, "turns": turns}))
    provider = {"id": "s", "type": "scripted", "model": "m", "script": str(home / "s.json")}
    (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [provider]}))


def test_one_shot_query(home: Path) -> None:
    async def run() -> list[Any]:
        return [m async for m in sdk.query(prompt="hello sdk", options=_options(home, home))]

    messages = anyio.run(run)
    kinds = [type(m).__name__ for m in messages]
    assert kinds[0] == "SystemMessage" and messages[0].subtype == "init"
    assert "AssistantMessage" in kinds
    result = messages[kinds.index("ResultMessage")]
    assert result.subtype == "success" and result.result == "hello sdk"


def test_client_permissions_errors_and_interrupt(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    write = {
        "tool_use": {"name": "Write", "input": {"file_path": str(work / "w.txt"), "content": "sdk"}}
    }
    slow = {
        "tool_use": {
            "name": "Write",
            "input": {"file_path": str(work / "never.txt"), "content": "x"},
        }
    }
    _script(home, [{"steps": [write]}, {"steps": [{"text": "done"}]}, {"steps": [slow]}])
    asked: list[str] = []
    hold = anyio.Event()
    second_asked = anyio.Event()

    async def can_use_tool(tool: str, tool_input: dict[str, Any], context: Any) -> Any:
        asked.append(tool)
        if len(asked) == 2:  # the second prompt waits until interrupted
            second_asked.set()
            await hold.wait()
        return sdk.PermissionResultAllow()

    async def run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with sdk.ClaudeSDKClient(
            options=_options(home, work, can_use_tool=can_use_tool)
        ) as client:
            await client.query("write it")
            seen["first"] = [m async for m in client.receive_response()]
            # DEC-PROFILE-2: the SDK starts agentx in the sdk profile, where the
            # permission mode is live and set_model stays within the provider.
            for name, call in (
                ("mode", lambda: client.set_permission_mode("default")),
                ("model", lambda: client.set_model("other")),
            ):
                try:
                    await call()
                except Exception as exc:  # the SDK raises the correlated error
                    seen[name] = str(exc)
            await client.query("write again")
            with anyio.fail_after(20):
                await second_asked.wait()
            await client.interrupt()
            hold.set()
            seen["second"] = [m async for m in client.receive_response()]
        return seen

    seen = anyio.run(run)
    first = seen["first"][-1]
    assert type(first).__name__ == "ResultMessage" and first.result == "done"
    assert (work / "w.txt").read_text() == "sdk"
    assert "mode" not in seen
    assert "--provider" in seen["model"]
    second = seen["second"][-1]
    assert type(second).__name__ == "ResultMessage" and second.subtype == "error_during_execution"
    assert not (work / "never.txt").exists()
    assert asked == ["Write", "Write"]


README = Path(__file__).parents[2] / "README.md"
TOO_OLD = "is too old to report its version"


def _readme_program() -> str:
    """The README's Agent SDK example: the one Python block that sets ``cli_path``."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (program,) = [b for b in blocks if "cli_path" in b]
    return program


@pytest.mark.parametrize("skip_check", [True, False], ids=["skip-version-check", "default"])
def test_readme_sdk_program_runs_against_agentx(
    home: Path, tmp_path: Path, skip_check: bool
) -> None:
    """The README's program, exactly as printed, against the real agentx on the
    built-in offline provider; ``CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK=1`` is what
    silences the SDK's version warning (agentx reports no Claude Code version)."""
    program = _readme_program()
    assert len([line for line in program.splitlines() if line.strip()]) <= 10
    script = tmp_path / "hello_sdk.py"
    script.write_text(program)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    env["AGENTX_HOME"] = str(home)
    env["PATH"] = f"{Path(AGENTX).parent}{os.pathsep}{env.get('PATH', '')}"
    if skip_check:
        env["CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK"] = "1"
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "What is 2 + 2?\n"  # the offline provider echoes the prompt
    assert (TOO_OLD in done.stderr) is not skip_check, done.stderr


def test_the_sdk_starts_the_sdk_profile(home: Path) -> None:
    """DEC-PROFILE-2: the SDK sets CLAUDE_CODE_ENTRYPOINT=sdk-py."""

    async def run() -> list[Any]:
        return [m async for m in sdk.query(prompt="hello", options=_options(home, home))]

    init = anyio.run(run)[0]
    assert init.subtype == "init" and init.data["control_profile"] == "sdk"


def test_a_refused_initialize_field_ends_the_session(home: Path) -> None:
    """DEC-PROFILE-2: a field agentx cannot apply (a system prompt snapshot)
    is a correlated error naming it; the session ends with status 2 and one
    stderr line, and no turn runs."""
    stderr: list[str] = []
    preset = {"type": "preset", "preset": "claude_code", "snapshot": True}

    async def run() -> tuple[list[Any], str]:
        seen: list[Any] = []
        try:
            async for message in sdk.query(
                prompt="never",
                options=_options(home, home, system_prompt=preset, stderr=stderr.append),
            ):
                seen.append(message)
        except Exception as exc:  # the SDK raises the initialize error
            return seen, str(exc)
        return seen, ""

    seen, error = anyio.run(run)
    assert "systemPromptSnapshot" in error, error
    assert not any(type(m).__name__ in ("AssistantMessage", "ResultMessage") for m in seen)
    errors = [line for line in log_lines("\n".join(stderr)) if "agentx: ERROR" in line]
    assert errors == [
        "agentx: ERROR: initialize refused: systemPromptSnapshot (a system prompt snapshot) "
        "is not supported by agentx; the session ends (status 2, DEC-PROFILE-2)"
    ], stderr


def test_model_fallback_and_thinking_from_the_sdk_options(home: Path) -> None:
    """DEC-CLI-5 under the stock SDK: ``model``/``fallback_model`` aliases,
    ``max_thinking_tokens`` and ``effort`` reach the Messages API; overload
    retries arrive as ``api_retry`` system messages, then ``model_fallback``,
    and the thinking block comes back with its signature."""
    from tests.fakes.provider_server import (
        ProviderServer,
        Reply,
        anthropic_text_stream,
        anthropic_with_thinking,
        json_reply,
    )

    overloaded = json_reply(
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
        headers=(("retry-after", "0"),),
    )
    answer = anthropic_with_thinking(("let me ", "think"), "sig-sdk", anthropic_text_stream("ok"))
    key = "sk-ant-sdk-e2e-91fe"
    with ProviderServer([overloaded, overloaded, overloaded, Reply(chunks=answer)]) as server:
        options = sdk.ClaudeAgentOptions(
            cli_path=AGENTX,
            cwd=str(home),
            env={
                "AGENTX_HOME": str(home),
                "ANTHROPIC_API_KEY": key,
                "ANTHROPIC_BASE_URL": server.url,
            },
            model="opus",
            fallback_model="sonnet",
            max_thinking_tokens=2048,
            effort="high",
        )

        async def run() -> list[Any]:
            return [m async for m in sdk.query(prompt="think", options=options)]

        messages = anyio.run(run)
        bodies = [r.body for r in server.requests]
    from agentx.config.models import ALIAS_MODELS

    assert [b["model"] for b in bodies] == [ALIAS_MODELS["opus"]] * 3 + [ALIAS_MODELS["sonnet"]]
    assert all(b["thinking"] == {"type": "enabled", "budget_tokens": 2048} for b in bodies)
    assert all(b["output_config"] == {"effort": "high"} for b in bodies)
    system = [m for m in messages if type(m).__name__ == "SystemMessage"]
    assert (
        system[0].subtype == "init" and system[0].data["fallback_model"] == ALIAS_MODELS["sonnet"]
    )
    retrying = [m.subtype for m in system if m.subtype in ("api_retry", "model_fallback")]
    assert retrying == ["api_retry", "api_retry", "model_fallback"]
    thinking = [
        block
        for m in messages
        if type(m).__name__ == "AssistantMessage"
        for block in m.content
        if type(block).__name__ == "ThinkingBlock"
    ]
    assert [(b.thinking, b.signature) for b in thinking] == [("let me think", "sig-sdk")]
    (result,) = [m for m in messages if type(m).__name__ == "ResultMessage"]
    assert result.result == "ok"


#: Records what it was spawned with (argv, the SDK's variables, stdin), then
#: runs the real agentx with the same argv on the same stdin.
RECORDING_CLI = """#!/bin/sh
printf '%s\\n' "$@" > "$RECORD_DIR/argv"
for name in CLAUDE_CODE_ENTRYPOINT CLAUDE_AGENT_SDK_VERSION CLAUDE_CODE_SDK_READS_SESSION_STATE; do
    printenv "$name" | sed "s/^/$name=/" >> "$RECORD_DIR/env"
done
tee "$RECORD_DIR/stdin" | "$AGENTX" "$@"
"""


def _startup_bench() -> Any:
    path = Path(__file__).resolve().parents[2] / "bench" / "startup_bench.py"
    spec = importlib.util.spec_from_file_location("startup_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("startup_bench", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_startup_bench_spawns_agentx_as_a_default_query_does(
    home: Path, tmp_path: Path
) -> None:
    """bench/startup_bench.py's sdk-py figures (DEC-PROFILE-2, DEC-CLI-3) stand
    for the SDK only if its client is the SDK's: the argv, the variables the
    SDK adds and the ``initialize`` and prompt lines of a default ``query()``
    (the request id's random part aside)."""
    record = tmp_path / "record"
    record.mkdir()
    cli = tmp_path / "recording-agentx"
    cli.write_text(RECORDING_CLI, encoding="utf-8")
    cli.chmod(0o755)
    options = sdk.ClaudeAgentOptions(
        cli_path=str(cli),
        cwd=str(home),
        env={"AGENTX_HOME": str(home), "RECORD_DIR": str(record), "AGENTX": AGENTX},
    )

    async def run() -> list[Any]:
        return [m async for m in sdk.query(prompt="hello", options=options)]

    messages = anyio.run(run)
    assert [m.result for m in messages if type(m).__name__ == "ResultMessage"] == ["hello"]
    bench = _startup_bench()
    client = bench.SDK_PY
    argv = (record / "argv").read_text(encoding="utf-8").split("\n")[:-1]
    assert tuple(argv) == client.argv
    env = dict(line.split("=", 1) for line in (record / "env").read_text().splitlines())
    assert env == client.env
    initialize, prompt = (record / "stdin").read_bytes().splitlines(keepends=True)[:2]
    random_id = re.compile(rb'"req_1_[0-9a-f]{8}"')
    assert random_id.sub(b"ID", initialize) == random_id.sub(b"ID", client.initialize)
    assert prompt == client.prompt
