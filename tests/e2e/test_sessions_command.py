"""``agentx sessions list|show|export|delete`` and their errors over the file
store (DEC-STORE-5, DEC-STORE-1, DECISIONS section 8); the same commands on
PostgreSQL are in tests/store/test_sessions_command.py."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    Record,
    agentx_command,
    base_env,
    encode,
    run_once,
    user,
    write_auth,
    write_script,
)

USAGE = {"input_tokens": 1000, "output_tokens": 250}
PRICING = {"input_per_mtok": 2.0, "output_per_mtok": 10.0}


def _sessions(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*agentx_command(), "sessions", *args],
        capture_output=True,
        text=True,
        env=base_env(home),
        cwd=cwd or home,
        timeout=60,
        check=False,
    )


def _priced(home: Path, tmp_path: Path, key: str | None = None) -> None:
    script = write_script(
        tmp_path / "s.json",
        [{"steps": [{"text": f"answer {n}"}, {"usage": USAGE}]} for n in range(4)],
    )
    entry: Record = {
        "id": "s",
        "type": "scripted",
        "model": "m",
        "script": str(script),
        "pricing": PRICING,
    }
    if key is not None:
        entry = {
            "id": "a",
            "type": "anthropic",
            "model": "m",
            "api_key": key,
            "endpoint": "http://127.0.0.1:9",
        }
        write_auth(
            home, [entry, {"id": "s", "type": "scripted", "model": "m", "script": str(script)}]
        )
        return
    write_auth(home, [entry])


def _session(home: Path, *prompts: str, provider: str | None = None) -> str:
    session = str(uuid.uuid4())
    flags = [*DUPLEX, "--session-id", session]
    if provider is not None:
        flags += ["--provider", provider]
    done = run_once(flags, b"".join(encode(user(p)) for p in prompts), home=home)
    assert done.returncode == 0, done.stderr
    return session


def test_list_has_a_header_last_activity_turns_and_the_first_words(
    home: Path, tmp_path: Path
) -> None:
    _priced(home, tmp_path)
    first = _session(home, "please refactor the parser\tand its tests, one module at a time")
    second = _session(home, "hello", "again")
    done = _sessions(home, "list")
    assert done.returncode == 0, done.stderr
    header, *rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert header == [
        "SESSION",
        "CREATED",
        "LAST_ACTIVITY",
        "TURNS",
        "PROVIDER",
        "MODEL",
        "CWD",
        "FIRST_PROMPT",
    ]
    assert [(r[0], r[3], r[4], r[5]) for r in rows] == [
        (first, "1", "s", "m"),
        (second, "2", "s", "m"),
    ]
    assert rows[0][7] == "please refactor the parser and its tests, one ..."
    assert rows[1][2] >= rows[1][1]  # the last turn ended after the session was created
    as_json = _sessions(home, "list", "--output-format", "json")
    assert as_json.returncode == 0, as_json.stderr
    listed = json.loads(as_json.stdout)["sessions"]
    assert [(s["session_id"], s["turns"]) for s in listed] == [(first, 1), (second, 2)]


def test_show_gives_each_turn_with_time_cost_and_result(home: Path, tmp_path: Path) -> None:
    _priced(home, tmp_path)
    session = _session(home, "one", "two")
    done = _sessions(home, "show", session)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"session {session}"
    assert "  turns: 2, total cost $0.0090" in lines
    turns = [line for line in lines if line.startswith("  turn ")]
    assert len(turns) == 2
    assert all("success, 1 model call, $0.0045" in line for line in turns)
    as_json = json.loads(_sessions(home, "show", session, "--output-format=json").stdout)
    assert as_json["total_cost_usd"] == 0.009
    assert [t["usage"]["input_tokens"] for t in as_json["turn_log"]] == [1000, 1000]


def test_export_is_the_stored_session_as_jsonl(home: Path, tmp_path: Path) -> None:
    _priced(home, tmp_path)
    session = _session(home, "export me")
    done = _sessions(home, "export", session)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[0]["type"] == "session_header" and lines[0]["session_id"] == session
    assert [e["type"] for e in lines[1:]] == ["message", "message", "turn"]
    stored = (home / "sessions" / session / "transcript.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in stored] == lines[1:]


def test_export_refuses_a_session_holding_a_credential_known_now(
    home: Path, tmp_path: Path
) -> None:
    """WIRE-013: an export is guarded like every output. A key added to
    auth.json after the session was written is still never printed."""
    _priced(home, tmp_path)
    key = "sk-exported-secret-0123456789"
    session = _session(home, f"my key is {key}")
    _priced(home, tmp_path, key=key)
    done = _sessions(home, "export", session)
    assert done.returncode == 2
    assert key not in done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"agentx: sessions export: session {session}: entry 1 holds a credential agentx "
        "knows; nothing was written (WIRE-013)\n"
    )


def test_export_refuses_a_provider_key_from_the_environment(home: Path, tmp_path: Path) -> None:
    """DEC-AUTH-3: the provider key variables are in an export's union too."""
    _priced(home, tmp_path)
    key = "sk-ant-from-the-environment-42"
    session = _session(home, f"my key is {key}")
    done = subprocess.run(
        [*agentx_command(), "sessions", "export", session],
        capture_output=True,
        text=True,
        env=base_env(home, {"ANTHROPIC_API_KEY": key}),
        cwd=home,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert key not in done.stderr and "holds a credential" in done.stderr
    assert _sessions(home, "export", session).returncode == 0  # without it, exported


def test_delete_removes_named_sessions_and_old_ones(home: Path, tmp_path: Path) -> None:
    _priced(home, tmp_path)
    keep, doomed = _session(home, "keep"), _session(home, "go")
    done = _sessions(home, "delete", doomed)
    assert (done.returncode, done.stdout) == (0, f"{doomed}: deleted\n"), done.stderr
    assert not (home / "sessions" / doomed).exists()
    assert [p.name for p in (home / "sessions").iterdir()] == [keep]
    assert _sessions(home, "delete", "--older-than", "1").stdout == ""
    transcript = home / "sessions" / keep / "transcript.jsonl"
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    lines[-1]["ended_at"] = "2000-01-01T00:00:00.000Z"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines))
    old = _sessions(home, "delete", "--older-than", "30")
    assert (old.returncode, old.stdout) == (0, f"{keep}: deleted\n"), old.stderr
    again = _sessions(home, "delete", keep)
    assert again.returncode == 2
    assert again.stderr == f"agentx: session {keep} is not in the store\n"


def test_a_session_open_in_another_process_is_not_deleted(home: Path, tmp_path: Path) -> None:
    from tests.e2e.agentx_process import AgentxProcess, is_result

    _priced(home, tmp_path)
    session = _session(home, "open")
    proc = AgentxProcess(home=home, args=[*DUPLEX, "--resume", session])
    try:
        proc.send(user("still here"))
        proc.until(is_result)
        done = _sessions(home, "delete", session)
        assert done.returncode == 2
        assert done.stderr == (
            f"agentx: session {session} is open in another agentx process; not deleted\n"
        )
        assert (home / "sessions" / session / "header.json").exists()
    finally:
        proc.close_stdin()
        proc.wait()


def test_read_only_commands_create_nothing(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    home.mkdir()
    done = _sessions(home, "list")
    assert (done.returncode, done.stdout.split("\t")[0]) == (0, "SESSION"), done.stderr
    assert list(home.iterdir()) == []
    missing = tmp_path / "no-such-folder"
    done = _sessions(home, "list", "--store", f"file://{missing}")
    assert done.returncode == 2
    assert (
        done.stderr
        == f"agentx: session store: {missing} is not a sessions folder (it does not exist)\n"
    )
    assert not missing.exists()


def test_naming_a_home_instead_of_its_sessions_folder_says_which_to_name(
    home: Path, tmp_path: Path
) -> None:
    _priced(home, tmp_path)
    _session(home, "x")
    target = tmp_path / "target"
    done = _sessions(home, "copy", "--from", f"file://{home}", "--to", f"file://{target}")
    assert done.returncode == 2
    assert done.stderr == (
        f"agentx: session store: {home} is an AgentX home, not its sessions folder: "
        f"name file://{home}/sessions\n"
    )


def test_copy_of_a_missing_session_names_it(home: Path, tmp_path: Path) -> None:
    _priced(home, tmp_path)
    _session(home, "x")
    missing = str(uuid.uuid4())
    done = _sessions(
        home, "copy", "--from", f"file://{home}/sessions", "--to", f"file://{tmp_path}/t", missing
    )
    assert done.returncode == 2
    assert done.stderr == f"agentx: sessions copy: session {missing} is not in the source store\n"


@pytest.mark.parametrize("command", ["list", "show", "export", "delete", "copy"])
def test_every_subcommand_has_help(home: Path, command: str) -> None:
    done = _sessions(home, command, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: agentx sessions {command}")


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("list", "--bogus"),
            "sessions list: unknown option --bogus (see agentx sessions list --help)",
        ),
        (("show",), "sessions show takes one SESSION_ID"),
        (("list", "--output-format", "yaml"), "--output-format is text or json"),
        (("delete",), "sessions delete takes SESSION_IDs or --older-than DAYS, not both"),
        (
            ("delete", "--older-than", "-3"),
            "sessions delete: --older-than takes a number of days (0 or more)",
        ),
        (
            ("frobnicate",),
            "unknown sessions command 'frobnicate': one of list, show, export, delete, copy"
            " (see agentx sessions --help)",
        ),
    ],
)
def test_usage_errors_name_what_is_wrong(home: Path, args: tuple[str, ...], line: str) -> None:
    done = _sessions(home, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"agentx: {line}\n"


def test_no_arguments_print_the_usage_and_exit_2(home: Path) -> None:
    done = _sessions(home)
    assert done.returncode == 2
    assert done.stdout.startswith("usage: agentx sessions list")
    assert os.linesep in done.stdout


def _use(name: str, **tool_input: str) -> Record:
    return {"tool_use": {"name": name, "input": tool_input}}


def test_permission_decisions_are_recorded_with_who_decided(home: Path, tmp_path: Path) -> None:
    """DEC-STORE-1: each settled permission is a ledger entry naming who
    decided (a rule, the mode, the host) and the rule; ``sessions show`` lists them."""
    from tests.e2e.agentx_process import AgentxProcess, allow, is_can_use_tool, is_result

    target = tmp_path / "w.txt"
    script = write_script(
        tmp_path / "s.json",
        [
            {
                "steps": [
                    {
                        "tool_use": {
                            "name": "Read",
                            "input": {"file_path": str(tmp_path / "s.json")},
                        }
                    },
                    {"tool_use": {"name": "Bash", "input": {"command": "echo hi"}}},
                    {
                        "tool_use": {
                            "name": "Write",
                            "input": {"file_path": str(target), "content": "x"},
                        }
                    },
                ]
            },
            {"steps": [{"text": "done"}]},
        ],
    )
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    session = str(uuid.uuid4())
    proc = AgentxProcess(
        home=home,
        args=[*DUPLEX, "--session-id", session, "--allowedTools", "Bash(echo:*)"],
        cwd=tmp_path,
    )
    try:
        proc.send(user("go"))
        request = proc.until(is_can_use_tool)[-1]
        proc.send(allow(request))
        proc.until(is_result)
    finally:
        proc.close_stdin()
        assert proc.wait() == 0
    lines = (home / "sessions" / session / "transcript.jsonl").read_text().splitlines()
    decided = [json.loads(line) for line in lines if '"type":"permission"' in line]
    assert [(d["tool_name"], d["behavior"], d["decided_by"]) for d in decided] == [
        ("Read", "allow", "mode"),
        ("Bash", "allow", "rule"),
        ("Write", "allow", "host"),
    ]
    assert "Bash(echo:*)" in decided[1]["reason"]
    shown = _sessions(home, "show", session).stdout.splitlines()
    assert "  permission: Write allow by host" in shown
    assert any(
        line.startswith("  permission: Bash allow by rule (allowed by rule") for line in shown
    )
