"""End-to-end: control plane and permission race over the real process
(WIRE-003, WIRE-006..011, WIRE-PERM-001..004; scenarios 3, 4, 5, 6, 7, 11, 12, 13, 20, 28)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.agentx_process import (
    AgentxProcess,
    Record,
    control,
    is_can_use_tool,
    is_control_response,
    is_result,
    is_state,
    scripted_session,
    user,
    write_auth,
    write_script,
)


def _write(path: str, text: str = "x") -> Record:
    return {"tool_use": {"name": "Write", "input": {"file_path": path, "content": text}}}


def _hook_settings(command: str) -> str:
    hook = {"type": "command", "command": command}
    return json.dumps({"hooks": {"PermissionRequest": [{"matcher": "Write", "hooks": [hook]}]}})


def _answer(request: Record, decision: dict[str, Any]) -> Record:
    return {
        "type": "control_response",
        "response": {
            "subtype": "success",
            "request_id": request["request_id"],
            "response": decision,
        },
    }


def test_scenario_3_and_7_permission_after_assistant_and_late_duplicate(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 3: the request never overtakes the assistant event.
    Scenario 7: the same late response twice gives one tool result."""
    proc = scripted_session(
        home, [{"steps": [_write("a.txt")]}, {"steps": [{"text": "done"}]}], processes
    )
    proc.send(user("go"))
    before = proc.until(is_can_use_tool)
    kinds = [r["type"] for r in before]
    assert kinds.index("assistant") < len(kinds) - 1
    assert before[-2] == {**before[-2], "state": "requires_action"}
    request = before[-1]
    tool_use_id = request["request"]["tool_use_id"]
    answer = _answer(request, {"behavior": "allow"})
    proc.send(answer, answer)
    rest = proc.until(is_result)
    proc.close_stdin()
    rest += proc.rest()
    assert proc.wait() == 0
    results = [
        block
        for r in rest
        if r["type"] == "user"
        for block in r["message"]["content"]
        if block.get("type") == "tool_result"
    ]
    assert [b["tool_use_id"] for b in results] == [tool_use_id]
    assert (home.parent / "work" / "a.txt").read_text() == "x"


def test_scenario_5_eof_with_two_pending_permissions(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 5: both reject at EOF; the session ends idle, not requires_action."""
    turns = [{"steps": [_write("a.txt"), _write("b.txt")]}, {"steps": [{"text": "after"}]}]
    proc = scripted_session(home, turns, processes)
    proc.send(user("two writes"))
    proc.until(is_can_use_tool)
    proc.until(is_can_use_tool)
    proc.close_stdin()
    rest = proc.rest()
    assert proc.wait() == 0
    (result,) = [r for r in rest if is_result(r)]
    assert {d["tool_name"] for d in result["permission_denials"]} == {"Write"}
    assert len(result["permission_denials"]) == 2
    states = [r["state"] for r in rest if r.get("subtype") == "session_state_changed"]
    assert states[-1] == "idle"
    assert not (home.parent / "work" / "a.txt").exists()


def test_wire_perm_044_every_invalid_answer_denies_with_one_message(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """WIRE-PERM-044: a non-object payload, an unknown outer member, an unknown
    outer subtype and an error response each deny the tool use with the
    message ``invalid permission response``; nothing runs."""
    forms: list[dict[str, Any]] = [
        {"subtype": "success", "response": "allow"},
        {"subtype": "success", "response": {"behavior": "allow"}, "extra": 1},
        {"subtype": "maybe", "response": {"behavior": "allow"}},
        {"subtype": "error", "error": "the host broke"},
    ]
    names = [f"f{index}.txt" for index in range(len(forms))]
    turns = [{"steps": [_write(name) for name in names]}, {"steps": [{"text": "after"}]}]
    proc = scripted_session(home, turns, processes)
    proc.send(user("four writes"))
    requests = [proc.until(is_can_use_tool)[-1] for _ in forms]
    for request, form in zip(requests, forms, strict=True):
        response = {**form, "request_id": request["request_id"]}
        proc.send({"type": "control_response", "response": response})
    rest = proc.until(is_result)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    blocks = {
        block["tool_use_id"]: block
        for r in rest
        if r["type"] == "user"
        for block in r["message"]["content"]
    }
    for request in requests:
        block = blocks[request["request"]["tool_use_id"]]
        assert (block["content"], block["is_error"]) == ("invalid permission response", True)
    assert len(rest[-1]["permission_denials"]) == len(forms)
    assert not [name for name in names if (home.parent / "work" / name).exists()]


def test_scenario_6_hook_allow_beats_a_silent_host(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 6 (hook first): a decisive hook allow wins; the host request is cancelled."""
    settings = _hook_settings("""echo '{"decision":"allow"}'""")
    proc = scripted_session(
        home,
        [{"steps": [_write("h.txt")]}, {"steps": [{"text": "ok"}]}],
        processes,
        "--settings",
        settings,
    )
    proc.send(user("go"))
    records = proc.until(is_result)
    cancels = [r for r in records if r["type"] == "control_cancel_request"]
    requests = [r for r in records if is_can_use_tool(r)]
    assert len(requests) == 1
    assert [c["request_id"] for c in cancels] == [requests[0]["request_id"]]
    assert records[-1]["subtype"] == "success"
    assert any(r.get("subtype") == "hook_response" for r in records)
    # the host's late deny is ignored: no second tool result
    proc.send(_answer(requests[0], {"behavior": "deny"}))
    proc.close_stdin()
    rest = proc.rest()
    assert proc.wait() == 0
    assert not [r for r in rest if r["type"] == "user"]
    assert (home.parent / "work" / "h.txt").exists()


def test_scenario_6_host_deny_beats_a_slow_hook(home: Path, processes: list[AgentxProcess]) -> None:
    """Scenario 6 (host first): the host's deny wins and the hook is cancelled."""
    settings = _hook_settings("sleep 30; echo {}")
    proc = scripted_session(
        home,
        [{"steps": [_write("n.txt")]}, {"steps": [{"text": "ok"}]}],
        processes,
        "--settings",
        settings,
    )
    proc.send(user("go"))
    request = proc.until(is_can_use_tool)[-1]
    proc.send(_answer(request, {"behavior": "deny", "message": "no"}))
    records = proc.until(is_result)
    proc.close_stdin()
    records += proc.rest()
    assert proc.wait() == 0
    result = next(r for r in records if is_result(r))
    assert len(result["permission_denials"]) == 1
    hook_responses = [r for r in records if r.get("subtype") == "hook_response"]
    assert [r["outcome"] for r in hook_responses] == ["cancelled"]
    assert not (home.parent / "work" / "n.txt").exists()


def test_scenario_11_interrupt_active_turn(home: Path, processes: list[AgentxProcess]) -> None:
    """Scenario 11: payload-less success ack, then error_during_execution, input usable.

    The interrupt goes once the model call is streaming (its first partial
    event): a turn interrupted before its model call consumes no scripted
    turn, and the next prompt would then be answered with this one's."""
    proc = scripted_session(
        home,
        [{"steps": [{"text": "start"}, {"sleep_ms": 30000}]}],
        processes,
        "--include-partial-messages",
    )
    proc.send(user("long"))
    proc.until(lambda r: r["type"] == "stream_event")
    proc.send(control("int-1", "interrupt"))
    records = proc.until(is_result)
    ack = next(r for r in records if is_control_response("int-1")(r))
    assert ack["response"] == {"subtype": "success", "request_id": "int-1"}
    assert records.index(ack) < len(records) - 1
    result = records[-1]
    assert result["subtype"] == "error_during_execution" and result["is_error"] is True
    assert result["stop_reason"] == "cancelled"
    proc.send(user("still usable"))
    after = proc.until(is_result)
    assert after[-1]["result"] == "still usable"
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_scenario_12_interrupt_with_two_pending_permissions(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 12: both cancels precede the ack; each tool use paired; result; idle last."""
    proc = scripted_session(home, [{"steps": [_write("a.txt"), _write("b.txt")]}], processes)
    proc.send(user("two"))
    requests = [proc.until(is_can_use_tool)[-1], proc.until(is_can_use_tool)[-1]]
    proc.send(control("int-2", "interrupt"))
    records = proc.until(is_state("idle"))
    cancels = [i for i, r in enumerate(records) if r["type"] == "control_cancel_request"]
    ack = next(i for i, r in enumerate(records) if is_control_response("int-2")(r))
    assert len(cancels) == 2 and max(cancels) < ack
    assert {records[i]["request_id"] for i in cancels} == {r["request_id"] for r in requests}
    tool_results = [
        b["tool_use_id"] for r in records if r["type"] == "user" for b in r["message"]["content"]
    ]
    assert sorted(tool_results) == sorted(r["request"]["tool_use_id"] for r in requests)
    result_at = next(i for i, r in enumerate(records) if is_result(r))
    assert records[result_at]["subtype"] == "error_during_execution"
    assert result_at > ack
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 1  # DEC-CLI-6: the last turn ended in error


def test_scenario_13_final_unterminated_response_wins_over_eof(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 13: the tail response resolves its request; only the other is rejected."""
    proc = scripted_session(
        home, [{"steps": [_write("a.txt"), _write("b.txt")]}, {"steps": [{"text": "k"}]}], processes
    )
    proc.send(user("two"))
    first = proc.until(is_can_use_tool)[-1]
    proc.until(is_can_use_tool)
    tail = json.dumps(_answer(first, {"behavior": "allow"})).encode()
    proc.send_bytes(tail)  # no newline
    proc.close_stdin()
    rest = proc.rest()
    assert proc.wait() == 0
    result = next(r for r in rest if is_result(r))
    assert len(result["permission_denials"]) == 1
    assert (home.parent / "work" / "a.txt").exists()
    assert not (home.parent / "work" / "b.txt").exists()


def test_scenario_4_orphan_and_unknown_responses_do_not_break_the_stream(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = scripted_session(home, [], processes)
    proc.send(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": "nobody", "response": {}},
        }
    )
    proc.send(user("fine"))
    assert proc.until(is_result)[-1]["result"] == "fine"
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_scenario_20_duplicate_in_operation_payload_is_a_correlated_error(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = scripted_session(home, [], processes)
    proc.send_bytes(
        b'{"type":"control_request","request_id":"d1","request":{"subtype":"mcp_status","x":1,"\\u0078":2}}\n'
    )
    response = proc.until(is_control_response("d1"))[-1]
    assert response["response"]["subtype"] == "error"
    assert response["response"]["error"] == "ambiguous JSON: duplicate member name"
    proc.send(user("goes on"))
    assert proc.until(is_result)[-1]["result"] == "goes on"
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_scenario_28_restart_bound_selection(home: Path, processes: list[AgentxProcess]) -> None:
    """Scenario 28 (first half): set_model restart error, set_provider generic error."""
    proc = scripted_session(home, [], processes)
    proc.send(control("i", "initialize"))
    init = proc.until(is_control_response("i"))[-1]["response"]["response"]
    proc.send(control("m1", "set_model", model="m"))
    proc.send(control("m2", "set_model", model=init["providers"][0]["value"]))
    proc.send(control("p1", "set_provider", provider="s"))
    m1 = proc.until(is_control_response("m1"))[-1]["response"]
    m2 = proc.until(is_control_response("m2"))[-1]["response"]
    p1 = proc.until(is_control_response("p1"))[-1]["response"]
    assert m1["subtype"] == m2["subtype"] == "error"
    assert "--provider" in m1["error"] and m1["error"] == m2["error"]
    assert p1 == {
        "subtype": "error",
        "request_id": "p1",
        "error": 'unsupported control request "set_provider"',
    }
    proc.send(control("i2", "initialize"))
    again = proc.until(is_control_response("i2"))[-1]["response"]["response"]
    assert again["providers"] == init["providers"]
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_control_request_without_request_id_is_dropped(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = scripted_session(home, [], processes)
    proc.send({"type": "control_request", "request": {"subtype": "interrupt"}})
    proc.send(control("c", "get_context_usage"))
    usage = proc.until(is_control_response("c"))[-1]["response"]["response"]
    assert [c["name"] for c in usage["categories"]] == [
        "System prompt",
        "System tools",
        "Messages",
        "Free space",
    ]
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    assert "dropped" in proc.stderr


def test_webfetch_asks_for_network_access_first(home: Path, processes: list[AgentxProcess]) -> None:
    """WIRE-PERM-004/023: the synthetic SandboxNetworkAccess request on the same
    correlated path, after the tool's own permission; a deny blocks the fetch."""
    import http.server
    import threading

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b"fetched body"
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page"
    fetch = {"tool_use": {"name": "WebFetch", "input": {"url": url}}}
    try:
        proc = scripted_session(
            home, [{"steps": [fetch]}, {"steps": [fetch]}, {"steps": [{"text": "k"}]}], processes
        )
        proc.send(user("fetch twice"))
        request = proc.until(is_can_use_tool)[-1]["request"]
        assert request["tool_name"] == "SandboxNetworkAccess"
        assert request["input"] == {"host": "127.0.0.1", "port": server.server_address[1]}
        assert request["tool_use_id"].startswith("net_")
        proc.send(_answer(proc.seen[-1], {"behavior": "allow"}))
        second = proc.until(is_can_use_tool)[-1]
        proc.send(_answer(second, {"behavior": "deny"}))
        records = proc.until(is_result)
        proc.close_stdin()
        proc.rest()
        assert proc.wait() == 0
    finally:
        server.shutdown()
    results = [b for r in proc.seen if r["type"] == "user" for b in r["message"]["content"]]
    assert [b["is_error"] for b in results] == [False, True]
    assert "fetched body" in results[0]["content"]
    assert hits == ["/page"]
    assert records[-1]["subtype"] == "success"


def test_scenario_10_settings_sources_and_runtime_values(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Scenario 10 (extended profile): sources low to high, the effective merge,
    and the runtime-applied model/effort told apart; apply_flag_settings merges."""
    (home / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Read"]}, "env": {"A": "user"}})
    )
    work = home.parent / "work"
    (work / ".agentx").mkdir(parents=True)
    (work / ".agentx" / "settings.json").write_text(json.dumps({"env": {"A": "project"}}))
    flag = json.dumps({"permissions": {"deny": ["Bash"]}})
    proc = scripted_session(
        home, [], processes, "--control-profile", "extended", "--settings", flag
    )
    proc.send(control("g", "get_settings"))
    payload = proc.until(is_control_response("g"))[-1]["response"]["response"]
    assert [s["source"] for s in payload["sources"]] == ["user", "project", "flag"]
    assert payload["effective"]["env"] == {"A": "project"}
    assert payload["effective"]["permissions"] == {"allow": ["Read"], "deny": ["Bash"]}
    assert payload["applied"] == {"model": "m", "effort": None}
    proc.send(control("a", "apply_flag_settings", settings={"env": {"B": "flag"}}))
    assert proc.until(is_control_response("a"))[-1]["response"]["subtype"] == "success"
    proc.send(control("g2", "get_settings"))
    again = proc.until(is_control_response("g2"))[-1]["response"]["response"]
    assert again["effective"]["env"] == {"A": "project", "B": "flag"}
    proc.send(control("s", "get_settings", extra=1))
    assert proc.until(is_control_response("s"))[-1]["response"]["subtype"] == "error"
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_extended_members_are_unsupported_in_standalone(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc = scripted_session(home, [], processes)
    proc.send(control("g", "get_settings"))
    response = proc.until(is_control_response("g"))[-1]["response"]
    assert response["error"] == 'unsupported control request "get_settings"'
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0


def test_tool_progress_for_a_tool_running_longer_than_a_second(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """DEC-TURN-3: tool_progress while a tool runs, before its one result."""
    bash = {"tool_use": {"name": "Bash", "input": {"command": "sleep 2.3"}}}
    proc = scripted_session(
        home,
        [{"steps": [bash]}, {"steps": [{"text": "slept"}]}],
        processes,
        "--permission-mode",
        "bypassPermissions",
    )
    proc.send(user("sleep"))
    records = proc.until(is_result)
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0
    kinds = [r["type"] for r in records]
    progress = [r for r in records if r["type"] == "tool_progress"]
    assert len(progress) >= 2
    assert all(p["tool_name"] == "Bash" for p in progress)
    elapsed = [p["elapsed_time_seconds"] for p in progress]
    assert elapsed == sorted(elapsed) and elapsed[0] >= 1
    tool_use = next(r for r in records if r["type"] == "assistant")["message"]["content"][0]
    assert {p["tool_use_id"] for p in progress} == {tool_use["id"]}
    assert kinds.index("tool_progress") < kinds.index("user")


def test_latched_output_during_a_permission_wait_exits_3_promptly(
    home: Path, processes: list[AgentxProcess]
) -> None:
    """Never hang: the can_use_tool request itself would carry a credential, the
    encoder latches, and the process ends with 3 instead of waiting forever."""
    import time

    script = write_script(home / "script.json", [{"steps": [_write("a.txt", "topsecret-value")]}])
    write_auth(
        home,
        [
            {
                "id": "s",
                "type": "scripted",
                "model": "m",
                "script": str(script),
                "api_key": "topsecret-value",
            }
        ],
    )
    proc = AgentxProcess(home=home, cwd=home)
    processes.append(proc)
    proc.send(user("go"))
    started = time.monotonic()
    assert proc.wait(timeout=15) == 3
    assert time.monotonic() - started < 8
    assert b"topsecret" not in proc.raw
