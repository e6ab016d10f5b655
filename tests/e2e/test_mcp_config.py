"""MCP servers from the command line and from ``.mcp.json``, end to end
(DEC-SET-2, DEC-CLI-7, DEC-SET-1), and ``--permission-prompt-tool``
(WIRE-PERM-002): a real stdio MCP server (tests/fakes/mcp_server.py) under
a real ``agentx`` process, with a scripted model.

Each run is one-shot: the prompt is written and stdin closed at once, so a
tool call that succeeds also proves that the first model request waited for
the server's first connection (DEC-SET-2).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    Record,
    encode,
    log_lines,
    records_of,
    run_once,
    user,
    write_auth,
    write_script,
)

pytestmark = pytest.mark.e2e

FAKE = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


def server(*extra: str) -> dict[str, Any]:
    return {"type": "stdio", "command": sys.executable, "args": [FAKE, *extra]}


def config(**servers: dict[str, Any]) -> str:
    return json.dumps({"mcpServers": servers})


def tool_use(name: str, **tool_input: Any) -> Record:
    return {"steps": [{"tool_use": {"name": name, "input": tool_input}}]}


def run(
    home: Path,
    args: tuple[str, ...],
    turns: list[Record],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, list[Record], str]:
    script = write_script(home / "script.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    proc = run_once((*DUPLEX, *args), encode(user("go")), home=home, cwd=cwd, env=env, timeout=60)
    stderr = proc.stderr.decode()
    return proc.returncode, records_of(proc.stdout) if proc.returncode != 2 else [], stderr


def tool_results(records: list[Record]) -> list[dict[str, Any]]:
    return [
        block
        for r in records
        if r.get("type") == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def result(records: list[Record]) -> Record:
    return next(r for r in records if r.get("type") == "result")


def init(records: list[Record]) -> Record:
    return next(r for r in records if r.get("subtype") == "init")


ADD = [tool_use("mcp__calc__add", a=2, b=3), {"steps": [{"text": "done"}]}]


@pytest.mark.parametrize("form", ["json", "file"])
def test_mcp_config_servers_connect_before_the_first_request(
    home: Path, tmp_path: Path, form: str
) -> None:
    value = config(calc=server())
    if form == "file":
        path = tmp_path / "servers.json"
        path.write_text(value)
        value = str(path)
    code, records, _ = run(home, ("--mcp-config", value, "--allowedTools", "mcp__calc__add"), ADD)
    assert code == 0
    assert init(records)["mcp_servers"] == [{"name": "calc", "status": "pending"}]
    assert [r["content"] for r in tool_results(records)] == ["5"]
    assert result(records)["result"] == "done"


def test_repeated_mcp_config_later_wins_and_settings_servers_join(home: Path) -> None:
    project = home / ".agentx"
    project.mkdir()
    (project / "settings.json").write_text(json.dumps({"mcpServers": {"set": server()}}))
    code, records, _ = run(
        home,
        (
            "--mcp-config",
            config(calc={"command": str(home / "missing")}),
            "--mcp-config",
            config(calc=server()),
            "--allowedTools",
            "mcp__calc__add",
        ),
        ADD,
    )
    assert code == 0
    assert [e["name"] for e in init(records)["mcp_servers"]] == ["set", "calc"]
    assert [r["content"] for r in tool_results(records)] == ["5"]


def test_strict_mcp_config_ignores_settings_and_mcp_json(home: Path) -> None:
    project = home / ".agentx"
    project.mkdir()
    (project / "settings.json").write_text(json.dumps({"mcpServers": {"set": server()}}))
    (home / ".mcp.json").write_text(config(proj=server()))
    (home / "settings.json").write_text(json.dumps({"enableAllProjectMcpServers": True}))
    code, records, _ = run(
        home, ("--mcp-config", config(calc=server()), "--strict-mcp-config"), [{"steps": []}]
    )
    assert code == 0
    assert init(records)["mcp_servers"] == [{"name": "calc", "status": "pending"}]
    code, records, _ = run(home, ("--strict-mcp-config",), [{"steps": []}])
    assert code == 0 and init(records)["mcp_servers"] == []


@pytest.mark.parametrize(
    ("user_settings", "project_settings", "started", "warned"),
    [
        pytest.param({"enableAllProjectMcpServers": True}, {}, ["proj", "other"], [], id="all"),
        pytest.param({"enabledMcpjsonServers": ["proj"]}, {}, ["proj"], ["other"], id="named"),
        pytest.param(
            {"enableAllProjectMcpServers": True, "disabledMcpjsonServers": ["other"]},
            {},
            ["proj"],
            [],
            id="disabled-wins",
        ),
        pytest.param({}, {}, [], ["proj", "other"], id="unapproved"),
        pytest.param(
            {}, {"enableAllProjectMcpServers": True}, [], ["proj", "other"], id="project-cannot"
        ),
    ],
)
def test_mcp_json_servers_need_approval(
    home: Path,
    user_settings: dict[str, Any],
    project_settings: dict[str, Any],
    started: list[str],
    warned: list[str],
) -> None:
    (home / ".mcp.json").write_text(config(proj=server(), other=server()))
    (home / "settings.json").write_text(json.dumps(user_settings))
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps(project_settings))
    code, records, stderr = run(home, (), [{"steps": []}])
    assert code == 0
    assert [e["name"] for e in init(records)["mcp_servers"]] == started
    not_started = [line for line in log_lines(stderr) if "of .mcp.json is not started" in line]
    assert [line.split("MCP server ")[1].split(" ")[0] for line in not_started] == warned


def test_an_approved_mcp_json_server_runs_its_tools(home: Path) -> None:
    (home / ".mcp.json").write_text(config(calc=server()))
    (home / "settings.json").write_text(json.dumps({"enabledMcpjsonServers": ["calc"]}))
    code, records, _ = run(home, ("--allowedTools", "mcp__calc__add"), ADD)
    assert code == 0
    assert [r["content"] for r in tool_results(records)] == ["5"]


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge", "missing-target", "bad-json"])
@pytest.mark.parametrize("where", ["mcp.json", "flag"])
def test_hostile_config_files_are_refused_naming_them(
    home: Path, tmp_path: Path, kind: str, where: str
) -> None:
    path = home / ".mcp.json" if where == "mcp.json" else tmp_path / "servers.json"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        path.write_text(config(x={"command": "y" * 10, "args": ["z" * (1024 * 1024)]}))
    elif kind == "missing-target":
        path.symlink_to(tmp_path / "nowhere.json")
    else:
        path.write_text("{not json")
    args = () if where == "mcp.json" else ("--mcp-config", str(path))
    code, _, stderr = run(home, args, [{"steps": []}])
    assert code == 2
    (line,) = [line for line in log_lines(stderr) if line.strip()]
    assert ("--mcp-config" if where == "flag" else ".mcp.json") in line


def test_a_file_of_exactly_the_bound_is_read(home: Path, tmp_path: Path) -> None:
    head = config(calc=server())[:-2]
    path = tmp_path / "servers.json"
    pad = 1024 * 1024 - len(head) - 2
    path.write_text(head + " " * pad + "}}")
    assert path.stat().st_size == 1024 * 1024
    code, records, _ = run(home, ("--mcp-config", str(path)), [{"steps": []}])
    assert code == 0 and init(records)["mcp_servers"] == [{"name": "calc", "status": "pending"}]


@pytest.mark.parametrize(
    "servers",
    [
        pytest.param({"a b": {"command": "x"}}, id="space"),
        pytest.param({"a__b": {"command": "x"}}, id="separator"),
        pytest.param({"ü": {"command": "x"}}, id="non-ascii"),
        pytest.param({"x" * 33: {"command": "x"}}, id="too-long"),
        pytest.param({"calc": {"type": "sdk", "name": "calc"}}, id="sdk-needs-profile"),
        pytest.param({"calc": {"type": "sse", "url": "http://127.0.0.1:9"}}, id="sse"),
    ],
)
def test_odd_servers_are_refused_at_start(home: Path, servers: dict[str, Any]) -> None:
    code, _, stderr = run(home, ("--mcp-config", json.dumps({"mcpServers": servers})), [])
    assert code == 2
    assert "--mcp-config" in stderr


def prompt_tool_run(
    home: Path, decide: str, turns: list[Record], *extra: str, env: dict[str, str] | None = None
) -> tuple[int, list[Record]]:
    servers = config(calc=server(), gate=server("--decide", decide))
    code, records, _ = run(
        home,
        ("--mcp-config", servers, "--permission-prompt-tool", "mcp__gate__decide", *extra),
        turns,
        env=env,
    )
    return code, records


@pytest.mark.parametrize(
    ("decide", "content", "is_error"),
    [
        pytest.param("allow", "5", False, id="allow"),
        pytest.param("allow-keep", "5", False, id="allow-without-updated-input"),
        pytest.param("deny", "the fake said no", True, id="deny"),
        pytest.param("garbage", "did not answer with a JSON object", True, id="garbage"),
    ],
)
def test_permission_prompt_tool_decides(
    home: Path, decide: str, content: str, is_error: bool
) -> None:
    code, records = prompt_tool_run(home, decide, ADD)
    assert code == 0
    (answer,) = tool_results(records)
    assert content in answer["content"] and answer.get("is_error", False) is is_error
    # The prompt tool answered: no can_use_tool went to the client.
    assert not [r for r in records if r.get("type") == "control_request"]
    if is_error:
        denials = result(records)["permission_denials"]
        assert [d["tool_name"] for d in denials] == ["mcp__calc__add"]


def test_permission_prompt_tool_that_never_answers_denies_at_the_deadline(home: Path) -> None:
    code, records = prompt_tool_run(home, "hang", ADD, env={"MCP_TOOL_TIMEOUT": "1500"})
    assert code == 0
    (answer,) = tool_results(records)
    assert answer["is_error"] is True and "timed out" in answer["content"]


def test_permission_prompt_tool_that_is_not_there_denies(home: Path) -> None:
    code, records, _ = run(
        home,
        ("--mcp-config", config(calc=server()), "--permission-prompt-tool", "mcp__gate__decide"),
        ADD,
    )
    assert code == 0
    (answer,) = tool_results(records)
    assert answer["is_error"] is True and "not available" in answer["content"]


def test_an_updated_input_still_meets_the_deny_rules(home: Path, tmp_path: Path) -> None:
    turns = [tool_use("Bash", command="echo hi"), {"steps": [{"text": "done"}]}]
    code, records = prompt_tool_run(home, "swap", turns, "--disallowedTools", "Bash(curl:*)")
    assert code == 0
    (answer,) = tool_results(records)
    assert answer["is_error"] is True and "curl" in answer["content"]


def test_an_unapproved_server_agentx_cannot_run_does_not_stop_the_start(home: Path) -> None:
    (home / ".mcp.json").write_text(config(remote={"type": "sse", "url": "http://127.0.0.1:9"}))
    code, records, stderr = run(home, (), [{"steps": []}])
    assert code == 0 and init(records)["mcp_servers"] == []
    assert any(
        "MCP server remote of .mcp.json is not started" in line for line in log_lines(stderr)
    )
    (home / "settings.json").write_text(json.dumps({"enabledMcpjsonServers": ["remote"]}))
    code, _, stderr = run(home, (), [{"steps": []}])
    assert code == 2 and "remote" in stderr
