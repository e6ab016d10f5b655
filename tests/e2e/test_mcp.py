"""MCP servers in a real agentx process, end to end (DEC-SET-2, DEC-PROFILE-1).

The fake MCP server (tests/fakes/mcp_server.py) runs as a real stdio
subprocess of agentx, or over streamable HTTP on loopback from this test
process. Waiting for a connection is a loop of ``mcp_status`` round trips
(each one a synchronisation point), never a sleep.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    base_env,
    control,
    is_control_response,
    is_result,
    is_state,
    run_once,
    user,
    write_auth,
    write_script,
)
from tests.fakes.mcp_server import HttpMcpServer

pytestmark = pytest.mark.e2e

FAKE = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")
EXTENDED = (*DUPLEX, "--control-profile", "extended")
_ids = itertools.count(1)


def stdio(*extra: str) -> dict[str, Any]:
    return {"type": "stdio", "command": sys.executable, "args": [FAKE, *extra]}


def start(
    home: Path,
    processes: list[AgentxProcess],
    *,
    servers: dict[str, Any] | None = None,
    turns: list[Record] | None = None,
    settings: dict[str, Any] | None = None,
    args: tuple[str, ...] = DUPLEX,
    env: dict[str, str] | None = None,
) -> AgentxProcess:
    script = write_script(home / "script.json", turns or [])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    project = home / ".agentx"
    project.mkdir(exist_ok=True)
    content = dict(settings or {})
    if servers is not None:
        content["mcpServers"] = servers
    (project / "settings.json").write_text(json.dumps(content))
    proc = AgentxProcess(args, home=home, env=env)
    processes.append(proc)
    return proc


def ask(proc: AgentxProcess, subtype: str, **fields: Any) -> dict[str, Any]:
    rid = f"r{next(_ids)}"
    proc.send(control(rid, subtype, **fields))
    record = proc.until(is_control_response(rid))[-1]
    response: dict[str, Any] = record["response"]
    return response


def statuses(proc: AgentxProcess) -> dict[str, dict[str, Any]]:
    payload = ask(proc, "mcp_status")["response"]
    return {entry["name"]: entry for entry in payload["mcpServers"]}


def wait_status(proc: AgentxProcess, wanted: dict[str, str], timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        now = statuses(proc)
        if all(now.get(name, {}).get("status") == s for name, s in wanted.items()):
            return now
        assert time.monotonic() < deadline, f"statuses never became {wanted}: {now}"


def tool_use(name: str, **tool_input: Any) -> Record:
    return {"steps": [{"tool_use": {"name": name, "input": tool_input}}]}


def can_use_tool(record: Record) -> bool:
    return record.get("type") == "control_request" and (
        record["request"].get("subtype") == "can_use_tool"
    )


def allow(request: Record) -> Record:
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request["request_id"],
            "response": {"behavior": "allow", "updatedInput": request["request"]["input"]},
        },
    }


def tool_results(records: list[Record]) -> list[dict[str, Any]]:
    return [
        block
        for r in records
        if r.get("type") == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


@pytest.fixture
def http_server() -> Iterator[HttpMcpServer]:
    with HttpMcpServer() as server:
        yield server


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_model_calls_an_mcp_tool_the_host_allows_it_the_result_arrives(
    home: Path, processes: list[AgentxProcess], http_server: HttpMcpServer, transport: str
) -> None:
    config = (
        stdio()
        if transport == "stdio"
        else {"type": "http", "url": http_server.url, "headers": {"X-Api-Key": "mcp-key-9f2e71"}}
    )
    proc = start(
        home,
        processes,
        servers={"calc": config},
        turns=[tool_use("mcp__calc__add", a=2, b=3), {"steps": [{"text": "done"}]}],
    )
    init = proc.next()
    assert init["subtype"] == "init"
    assert init["mcp_servers"] == [{"name": "calc", "status": "pending"}]
    connected = wait_status(proc, {"calc": "connected"})["calc"]
    assert connected["serverInfo"] == {"name": "fake", "version": "1.0.0"}
    assert connected["scope"] == "project"
    proc.send(user("add them"))
    request = proc.until(can_use_tool)[-1]
    assert request["request"]["tool_name"] == "mcp__calc__add"
    assert request["request"]["input"] == {"a": 2, "b": 3}
    proc.send(allow(request))
    records = proc.until(is_result)
    assert tool_results(records) == [
        {
            "type": "tool_result",
            "tool_use_id": request["request"]["tool_use_id"],
            "content": "5",
            "is_error": False,
        }
    ]
    assert records[-1]["subtype"] == "success" and records[-1]["result"] == "done"
    if transport == "http":
        assert all(h.get("x-api-key") == "mcp-key-9f2e71" for h in http_server.headers)
    proc.close_stdin()
    assert proc.wait() == 0


def test_crashing_servers_show_failed_and_the_session_goes_on(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = start(
        home,
        processes,
        servers={
            "exits": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]},
            "missing": {"type": "stdio", "command": str(home / "no-such-server")},
        },
    )
    assert proc.next()["mcp_servers"] == [
        {"name": "exits", "status": "pending"},
        {"name": "missing", "status": "pending"},
    ]
    failed = wait_status(proc, {"exits": "failed", "missing": "failed"})
    assert failed["missing"]["error"].startswith("FileNotFoundError")
    assert all(entry["error"] for entry in failed.values())
    proc.send(user("still here?"))
    result = proc.until(is_result)[-1]
    assert result["subtype"] == "success" and result["result"] == "still here?"
    proc.close_stdin()
    assert proc.wait() == 0


def test_scenario_8_set_servers_answers_before_the_connection_begins(
    home: Path, processes: list[AgentxProcess], tmp_path: Path
) -> None:
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    os.mkfifo(gate)
    proc = start(home, processes, args=EXTENDED)
    assert proc.next()["mcp_servers"] == []
    response = ask(
        proc,
        "mcp_set_servers",
        servers={
            "dyn": stdio("--gate", str(gate), "--marker", str(marker)),
            "bad": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "secret": {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer never-seen-before"},
            },
        },
    )
    assert response["subtype"] == "success"
    payload = response["response"]
    assert payload["added"] == ["dyn"] and payload["removed"] == []
    assert set(payload["errors"]) == {"bad", "secret"}
    assert "WIRE-013" in payload["errors"]["secret"]
    # The server cannot have started serving: its start-up waits on the gate.
    assert statuses(proc)["dyn"]["status"] == "pending"
    assert not marker.exists()
    gate.write_bytes(b"go")  # opens once the server reads the FIFO, then releases it
    now = wait_status(proc, {"dyn": "connected"})
    assert marker.exists()
    assert now["dyn"]["scope"] == "dynamic"
    assert {t["name"] for t in now["dyn"]["tools"]} >= {"echo", "add"}
    removal = ask(proc, "mcp_set_servers", servers={})["response"]
    assert removal == {"added": [], "removed": ["dyn"], "errors": {}}
    assert statuses(proc) == {}
    proc.close_stdin()
    assert proc.wait() == 0


def test_toggle_and_reconnect_over_the_wire(home: Path, processes: list[AgentxProcess]) -> None:
    proc = start(home, processes, servers={"calc": stdio()}, args=EXTENDED)
    wait_status(proc, {"calc": "connected"})
    assert ask(proc, "mcp_toggle", serverName="calc", enabled=False)["subtype"] == "success"
    assert statuses(proc)["calc"]["status"] == "disabled"
    refused = ask(proc, "mcp_reconnect", serverName="calc")
    assert refused["subtype"] == "error" and "disabled" in refused["error"]
    assert ask(proc, "mcp_toggle", serverName="calc", enabled=True)["subtype"] == "success"
    wait_status(proc, {"calc": "connected"})
    assert ask(proc, "mcp_reconnect", serverName="calc")["subtype"] == "success"
    wait_status(proc, {"calc": "connected"})
    unknown = ask(proc, "mcp_toggle", serverName="nope", enabled=True)
    assert unknown == {
        "subtype": "error",
        "request_id": unknown["request_id"],
        "error": "no MCP server named 'nope'",
    }
    proc.close_stdin()
    assert proc.wait() == 0


@pytest.mark.parametrize("args", [DUPLEX, EXTENDED], ids=["standalone", "extended"])
def test_mcp_message_stays_unsupported(
    home: Path, processes: list[AgentxProcess], args: tuple[str, ...]
) -> None:
    proc = start(home, processes, args=args)
    proc.next()
    answer = ask(proc, "mcp_message", server_name="x", message={"jsonrpc": "2.0"})
    assert answer["error"] == 'unsupported control request "mcp_message"'
    if args == DUPLEX:
        answer = ask(proc, "mcp_set_servers", servers={})
        assert answer["error"] == 'unsupported control request "mcp_set_servers"'
    proc.close_stdin()
    assert proc.wait() == 0


def test_an_interrupt_during_a_slow_mcp_call_ends_the_turn_promptly(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = start(
        home,
        processes,
        servers={"calc": stdio()},
        settings={"permissions": {"allow": ["mcp__calc"]}},
        turns=[tool_use("mcp__calc__slow", seconds=60)],
    )
    wait_status(proc, {"calc": "connected"})
    proc.send(user("wait for it"))
    # tool_progress: the call has been running for a second.
    proc.until(lambda r: r.get("type") == "tool_progress")
    began = time.monotonic()
    proc.send(control("int-1", "interrupt"))
    records = proc.until(is_result)
    assert time.monotonic() - began < 3.0
    assert any(is_control_response("int-1")(r) for r in records)
    (result_block,) = tool_results(records)
    assert result_block["is_error"] is True
    assert result_block["content"] == "Interrupted by user"
    assert records[-1]["subtype"] == "error_during_execution"
    proc.close_stdin()
    assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error


PROGRAM = """
import sys
from agentx.cli import main
status = main(sys.argv[1:])
sys.stderr.write("\\nMCP_LOADED=%s\\n" % any(m.split(".")[0] == "mcp" for m in sys.modules))
sys.exit(status)
"""


@pytest.mark.parametrize(
    "args",
    [("--version",), ("--list-providers",), ("-p", "hello", "--output-format", "json")],
    ids=["version", "list-providers", "session-without-servers"],
)
def test_no_mcp_import_without_servers(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, *args],
        env=base_env(home),
        cwd=home,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith(b"MCP_LOADED=False\n")


def test_an_image_result_reaches_the_provider_but_never_stdout(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """The scripted provider echoes the media it received after its last
    scripted turn, which shows the image arrived as a media block."""
    proc = start(
        home,
        processes,
        servers={"pics": stdio()},
        settings={"permissions": {"allow": ["mcp__pics__image"]}},
        turns=[tool_use("mcp__pics__image")],
    )
    assert proc.next()["input_capabilities"]
    wait_status(proc, {"pics": "connected"})
    proc.send(user("draw"))
    records = proc.until(is_result)
    (block,) = tool_results(records)
    size = int(block["content"].removeprefix("[image: image/png, ").removesuffix(" bytes]"))
    assert block["is_error"] is False
    echoed = records[-1]["result"]
    assert echoed.startswith(f"[image {block['tool_use_id']}-1 {size} bytes sha256=")
    assert b"iVBORw0KGgo" not in proc.raw  # no base64 PNG on stdout
    proc.close_stdin()
    assert proc.wait() == 0


@pytest.mark.parametrize(
    ("rules", "asked"),
    [
        ({"deny": ["mcp__calc__add"]}, False),
        ({"deny": ["mcp__calc"]}, False),
        ({"deny": ["mcp__other"]}, True),
    ],
    ids=["tool-rule", "server-rule", "other-server"],
)
def test_permission_rules_name_mcp_servers_and_tools(
    home: Path, processes: list[AgentxProcess], rules: dict[str, Any], asked: bool
) -> None:
    proc = start(
        home,
        processes,
        servers={"calc": stdio()},
        settings={"permissions": rules},
        turns=[tool_use("mcp__calc__add", a=1, b=1), {"steps": [{"text": "ok"}]}],
    )
    wait_status(proc, {"calc": "connected"})
    proc.send(user("add"))
    records = proc.until(lambda r: is_result(r) or can_use_tool(r))
    assert can_use_tool(records[-1]) is asked
    if asked:
        proc.send(allow(records[-1]))
        records = proc.until(is_result)
        assert tool_results(records)[0]["content"] == "2"
    else:
        assert records[-1]["permission_denials"][0]["tool_name"] == "mcp__calc__add"
        assert tool_results(records)[0]["is_error"] is True
    proc.close_stdin()
    assert proc.wait() == 0


def test_an_env_value_agentx_itself_prints_fails_start_up_clearly(home: Path) -> None:
    """A header or env value is a credential; "1" is in system/init already
    (the version), so no session could ever write its first record."""
    (home / ".agentx").mkdir()
    (home / ".agentx" / "settings.json").write_text(
        json.dumps({"mcpServers": {"a": {"command": "srv", "env": {"DEBUG": "1"}}}})
    )
    done = run_once(["-p", "hi"], b"", home=home)
    assert (done.returncode, done.stdout) == (2, b"")
    assert b"an MCP server header or env value also appears in agentx's own output" in done.stderr


@pytest.mark.parametrize("opened", ["before", "after"], ids=["gate-opened", "gate-closed"])
def test_a_prompt_after_an_interrupt_during_the_mcp_wait_runs_to_its_result(
    home: Path, processes: list[AgentxProcess], tmp_path: Path, opened: str
) -> None:
    """WIRE-010, DEC-SET-2: a turn interrupted while its model request waits
    for an MCP server's first connection ends at once; the next prompt's
    turn starts with a scope of its own and runs to its result (the server
    connected meanwhile, or its first attempt timed out: ``MCP_TIMEOUT``)."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    proc = start(
        home,
        processes,
        servers={"slow": stdio("--gate", str(gate))},
        args=EXTENDED,
        env={"MCP_TIMEOUT": "60000" if opened == "before" else "1500"},
    )
    proc.send(user("first"))
    proc.until(is_state("running"))
    began = time.monotonic()
    proc.send(control("int-1", "interrupt"))
    records = proc.until(is_result)
    assert time.monotonic() - began < 5.0
    assert any(is_control_response("int-1")(r) for r in records)
    assert records[-1]["subtype"] == "error_during_execution"
    if opened == "before":
        gate.write_bytes(b"go")
        wait_status(proc, {"slow": "connected"})
    proc.send(user("second"))
    after = proc.until(is_result)
    assert after[-1]["subtype"] == "success" and after[-1]["result"] == "second"
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_a_stdio_servers_stderr_is_logged_and_redacted(
    tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    """DEC-AUTH-3: a stdio server's stderr is not agentx's own: each line is
    logged as an INFO line naming the server, and the credential union (the
    server's own env values among it) is redacted there like every line."""
    secret = "mcp-env-secret-42"
    server = {**stdio("--stderr-env", "FAKE_TOKEN"), "env": {"FAKE_TOKEN": secret}}
    proc = start(tmp_path, processes, servers={"calc": server})
    wait_status(proc, {"calc": "connected"})
    proc.close_stdin()
    assert proc.wait() == 0
    err = proc.stderr
    assert "MCP server 'calc': starting; the token is [redacted]" in err
    assert secret not in err
