"""File checkpoints and ``rewind_files`` over the real process (DEC-PROFILE-2).

A scripted model changes files across two user messages (Write, Edit, and a
Bash ``rm`` the checkpoints do not see); ``rewind_files`` then puts the
files on disk back as they were when a message began. Hostile cases: a
symlink planted at a checkpointed file or above it since the checkpoint, a
deny rule added since, a prior state past the size bound.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.checkpoints import MAX_FILE_BYTES, NOT_ENABLED, NOT_FOUND
from tests.e2e.agentx_process import (
    DUPLEX,
    AgentxProcess,
    Record,
    control,
    is_control_response,
    is_result,
    user,
    write_auth,
    write_script,
)

ON = {"CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING": "true"}
SDK = (
    *DUPLEX,
    "--control-profile",
    "sdk",
    "--replay-user-messages",
    "--permission-mode",
    "acceptEdits",
    "--allowedTools",
    "Bash",
)


def tool(name: str, **tool_input: Any) -> Record:
    return {"tool_use": {"name": name, "input": tool_input}}


def said(text: str) -> Record:
    return {"steps": [{"text": text}]}


def start(
    home: Path,
    work: Path,
    turns: list[Record],
    processes: list[AgentxProcess],
    *extra: str,
    env: dict[str, str] | None = None,
) -> AgentxProcess:
    script = write_script(home / "script.json", turns)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    proc = AgentxProcess((*SDK, *extra), home=home, cwd=work, env=ON if env is None else env)
    processes.append(proc)
    return proc


def prompt(proc: AgentxProcess, text: str) -> str:
    """Send a prompt; its uuid (from the replayed echo) once its turn ended."""
    proc.send(user(text))
    records = proc.until(is_result)
    assert records[-1]["subtype"] == "success", records[-1]
    (echo,) = [r for r in records if r["type"] == "user" and r.get("isReplay")]
    return str(echo["uuid"])


def rewind(proc: AgentxProcess, rid: str, message: str, *, dry_run: bool | None = None) -> Record:
    fields: dict[str, Any] = {"user_message_id": message}
    if dry_run is not None:
        fields["dry_run"] = dry_run
    proc.send(control(rid, "rewind_files", **fields))
    response: Record = proc.until(is_control_response(rid))[-1]["response"]
    return response


def finish(proc: AgentxProcess) -> None:
    proc.close_stdin()
    proc.rest()
    assert proc.wait() == 0, proc.stderr


def disk(work: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(work.iterdir()) if p.is_file()}


TWO_MESSAGES = [
    {
        "steps": [
            tool("Edit", file_path="a.txt", old_string="one", new_string="ONE"),
            tool("Write", file_path="b.txt", content="created\n"),
            tool("Edit", file_path="c.txt", old_string="keep", new_string="KEEP"),
        ]
    },
    said("first done"),
    {
        "steps": [
            tool("Write", file_path="a.txt", content="second\n"),
            tool("Bash", command="rm c.txt"),
            tool("Write", file_path="d.txt", content="also created\n"),
        ]
    },
    said("second done"),
]
ORIGINAL = {"a.txt": "one\ntwo\n", "c.txt": "keep me\n"}
AFTER_FIRST = {"a.txt": "ONE\ntwo\n", "b.txt": "created\n", "c.txt": "KEEP me\n"}
AFTER_SECOND = {"a.txt": "second\n", "b.txt": "created\n", "d.txt": "also created\n"}


def _two_messages(
    home: Path, processes: list[AgentxProcess], *extra: str
) -> tuple[AgentxProcess, Path, str, str]:
    work = home.parent / "work"
    work.mkdir()
    for name, text in ORIGINAL.items():
        (work / name).write_text(text)
    proc = start(home, work, TWO_MESSAGES, processes, *extra)
    first = prompt(proc, "change things")
    assert disk(work) == AFTER_FIRST
    second = prompt(proc, "change more")
    assert disk(work) == AFTER_SECOND
    return proc, work, first, second


def test_rewind_restores_contents_removes_created_files_and_brings_back_deleted_ones(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc, work, first, second = _two_messages(home, processes)

    # A dry run says what would change and changes nothing.
    dry = rewind(proc, "dry", second, dry_run=True)
    assert dry["subtype"] == "success"
    answer = dry["response"]
    assert answer["canRewind"] is True
    assert sorted(answer["filesChanged"]) == sorted(
        str(work / n) for n in ("a.txt", "c.txt", "d.txt")
    )
    # a: "second" -> "ONE\ntwo"; c: (gone) -> "KEEP me"; d: "also created" -> (gone).
    assert (answer["insertions"], answer["deletions"]) == (3, 2)
    assert disk(work) == AFTER_SECOND

    # An unknown message: the error, as Claude Code gives it.
    unknown = rewind(proc, "unknown", "00000000-0000-4000-8000-000000000000")
    assert unknown == {"subtype": "error", "request_id": "unknown", "error": NOT_FOUND}
    unknown_dry = rewind(proc, "unknown-dry", "nope", dry_run=True)
    assert unknown_dry["response"] == {"canRewind": False, "error": NOT_FOUND}

    done = rewind(proc, "real", first)
    assert done["subtype"] == "success" and done["response"]["canRewind"] is True
    assert sorted(done["response"]["filesChanged"]) == sorted(
        str(work / n) for n in ("a.txt", "b.txt", "c.txt", "d.txt")
    )
    assert disk(work) == ORIGINAL

    # Forward again to the second message's start, then nothing is left to do.
    assert rewind(proc, "forward", second)["response"]["canRewind"] is True
    assert disk(work) == AFTER_FIRST
    again = rewind(proc, "again", second, dry_run=True)["response"]
    assert again == {"canRewind": True, "filesChanged": [], "insertions": 0, "deletions": 0}
    finish(proc)


def test_rewind_after_resume(home: Path, processes: list[AgentxProcess]) -> None:
    proc, work, first, second = _two_messages(home, processes)
    finish(proc)
    session = next(r for r in proc.seen if r.get("subtype") == "init")["session_id"]
    resumed = AgentxProcess((*SDK, "--resume", session), home=home, cwd=work, env=ON)
    processes.append(resumed)
    assert rewind(resumed, "r", first)["response"]["canRewind"] is True
    assert disk(work) == ORIGINAL
    assert rewind(resumed, "f", second)["response"]["canRewind"] is True
    assert disk(work) == AFTER_FIRST
    finish(resumed)


def test_without_the_variable_rewinding_is_not_enabled(
    home: Path, processes: list[AgentxProcess]
) -> None:
    work = home.parent / "work"
    work.mkdir()
    proc = start(home, work, TWO_MESSAGES[:2], processes, env={})
    (work / "a.txt").write_text("one\n")
    (work / "c.txt").write_text("keep\n")
    first = prompt(proc, "change")
    assert rewind(proc, "x", first)["error"] == NOT_ENABLED
    assert rewind(proc, "y", first, dry_run=True)["response"] == {
        "canRewind": False,
        "error": NOT_ENABLED,
    }
    finish(proc)
    assert not (home / "sessions").exists() or not list((home / "sessions").rglob("checkpoints"))


def test_the_standalone_profile_does_not_install_rewind_files(home: Path) -> None:
    proc = AgentxProcess(DUPLEX, home=home, env=ON)
    try:
        proc.send(control("r", "rewind_files", user_message_id="x"))
        response = proc.until(is_control_response("r"))[-1]["response"]
        assert response["subtype"] == "error" and "unsupported" in response["error"]
        finish(proc)
    finally:
        proc.kill()


@pytest.mark.parametrize("where", ["file", "folder"])
def test_a_symlink_planted_since_the_checkpoint_is_not_followed(
    home: Path, processes: list[AgentxProcess], where: str
) -> None:
    work = home.parent / "work"
    (work / "sub").mkdir(parents=True)
    (work / "sub" / "x.txt").write_text("v1\n")
    outside = home.parent / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("precious\n")
    turns = [{"steps": [tool("Write", file_path="sub/x.txt", content="v2\n")]}, said("ok")]
    proc = start(home, work, turns, processes)
    first = prompt(proc, "write")
    if where == "file":
        (work / "sub" / "x.txt").unlink()
        (work / "sub" / "x.txt").symlink_to(outside / "x.txt")
    else:
        (work / "sub" / "x.txt").unlink()
        (work / "sub").rmdir()
        (work / "sub").symlink_to(outside)
    for dry_run in (True, False):
        response = rewind(proc, f"r{dry_run}", first, dry_run=dry_run)
        error = response["response"]["error"] if dry_run else response["error"]
        assert "sub/x.txt" in error and "nothing was rewound" in error
        if where == "file":
            assert "symlink" in error
        else:
            assert "folder on its path" in error
    assert (outside / "x.txt").read_text() == "precious\n"
    assert os.path.islink(work / "sub" / "x.txt" if where == "file" else work / "sub")
    finish(proc)


def test_a_deny_rule_added_since_is_respected(home: Path, processes: list[AgentxProcess]) -> None:
    work = home.parent / "work"
    work.mkdir()
    (work / "secret.txt").write_text("v1\n")
    turns = [{"steps": [tool("Write", file_path="secret.txt", content="v2\n")]}, said("ok")]
    proc = start(home, work, turns, processes)
    first = prompt(proc, "write")
    proc.send(
        control(
            "deny",
            "apply_flag_settings",
            settings={"permissions": {"deny": ["Write(secret.txt)"]}},
        )
    )
    assert proc.until(is_control_response("deny"))[-1]["response"]["subtype"] == "success"
    response = rewind(proc, "r", first)
    assert response["subtype"] == "error" and "denied by rule" in response["error"]
    assert (work / "secret.txt").read_text() == "v2\n"
    finish(proc)


@pytest.mark.parametrize(
    ("size", "restored"),
    [
        pytest.param(MAX_FILE_BYTES, True, id="at-the-bound"),
        pytest.param(MAX_FILE_BYTES + 1, False, id="one-past"),
    ],
)
def test_the_size_bound_per_file(
    home: Path, processes: list[AgentxProcess], size: int, restored: bool
) -> None:
    work = home.parent / "work"
    work.mkdir()
    big = b"x" * (size - 1) + b"\n"
    (work / "big.txt").write_bytes(big)
    turns = [{"steps": [tool("Write", file_path="big.txt", content="small\n")]}, said("ok")]
    proc = start(home, work, turns, processes)
    first = prompt(proc, "shrink it")
    assert (work / "big.txt").read_bytes() == b"small\n"  # the change happens either way
    response = rewind(proc, "r", first)
    if restored:
        assert response["response"]["canRewind"] is True
        assert (work / "big.txt").read_bytes() == big
    else:
        assert response["subtype"] == "error"
        assert f"larger than {MAX_FILE_BYTES} bytes" in response["error"]
        assert (work / "big.txt").read_bytes() == b"small\n"
    finish(proc)


def test_without_persistence_nothing_is_left_on_disk(
    home: Path, tmp_path: Path, processes: list[AgentxProcess]
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    work = home.parent / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    turns = [{"steps": [tool("Write", file_path="a.txt", content="two\n")]}, said("ok")]
    proc = start(
        home,
        work,
        turns,
        processes,
        "--no-session-persistence",
        env={**ON, "TMPDIR": str(temp)},
    )
    first = prompt(proc, "write")
    assert [p.name for p in temp.iterdir() if p.name.startswith("agentx-checkpoints-")]
    assert rewind(proc, "r", first)["response"]["canRewind"] is True
    assert (work / "a.txt").read_text() == "one\n"
    finish(proc)
    assert not [p for p in temp.iterdir() if p.name.startswith("agentx-checkpoints-")]
    assert not (home / "sessions").exists() or not any((home / "sessions").iterdir())


def test_a_tampered_entries_file_refuses_every_rewind(
    home: Path, processes: list[AgentxProcess]
) -> None:
    proc, work, first, _ = _two_messages(home, processes)
    finish(proc)
    session = next(r for r in proc.seen if r.get("subtype") == "init")["session_id"]
    entries = home / "sessions" / session / "checkpoints" / "entries.jsonl"
    lines = entries.read_text().splitlines()
    lines[1] = json.dumps({"kind": "file", "message": first, "path": "/etc/passwd", "x": 1})
    entries.write_text("\n".join(lines) + "\n")
    resumed = AgentxProcess((*SDK, "--resume", session), home=home, cwd=work, env=ON)
    processes.append(resumed)
    response = rewind(resumed, "r", first)
    assert response["subtype"] == "error" and "cannot be read" in response["error"]
    assert disk(work) == AFTER_SECOND
    finish(resumed)


def test_notebook_edit_is_checkpointed_through_the_same_write_path(
    home: Path, processes: list[AgentxProcess]
) -> None:
    work = home.parent / "work"
    work.mkdir()
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {},
                "source": "# old",
                "outputs": [],
                "execution_count": None,
            }
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    original = json.dumps(notebook)
    (work / "n.ipynb").write_text(original)
    edit = tool("NotebookEdit", notebook_path="n.ipynb", cell_id="c1", new_source="# new")
    proc = start(home, work, [{"steps": [edit]}, said("ok")], processes)
    first = prompt(proc, "edit the notebook")
    assert "# new" in (work / "n.ipynb").read_text()
    assert rewind(proc, "r", first)["response"]["canRewind"] is True
    assert (work / "n.ipynb").read_text() == original
    finish(proc)
