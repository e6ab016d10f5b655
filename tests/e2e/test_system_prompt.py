"""The system prompt the model receives (DEC-CLI-5): the built-in one with its
environment block by default and for ``--system-prompt ""``, the flag's text
in its place, ``--append-system-prompt`` after either; guidance only for the
tools offered."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.system_prompt import IDENTITY, TOOL_GUIDANCE
from tests.e2e.agentx_process import DUPLEX, encode, run_once, user, write_auth
from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream


def _system_of(home: Path, cwd: Path, *args: str) -> str:
    with ProviderServer([Reply(chunks=anthropic_text_stream("ok"))]) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-system-prompt-1",
                    "endpoint": server.url,
                }
            ],
        )
        done = run_once([*DUPLEX, *args], encode(user("hi")), home=home, cwd=cwd)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    (request,) = requests
    system: Any = request.body.get("system", "")
    if isinstance(system, list):
        return "".join(block["text"] for block in system)
    return str(system)


@pytest.mark.parametrize("flags", [(), ("--system-prompt", "")], ids=["no-flag", "empty"])
def test_the_built_in_prompt_and_its_environment(
    home: Path, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    other = tmp_path / "other"
    other.mkdir()
    system = _system_of(home, work, *flags, "--add-dir", str(other), "--tools", "Read,Grep")
    assert system.startswith(IDENTITY)
    assert f"Working directory: {work}" in system
    assert "Is the working directory a git repository: yes" in system
    assert f"Additional working directories: {other}" in system
    assert f"Today's date: {datetime.date.today().isoformat()}" in system
    assert "Model: m-1" in system
    for name, text in TOOL_GUIDANCE.items():
        assert (text in system) is (name in ("Read", "Grep")), name


def test_a_flag_prompt_replaces_it_and_append_follows(home: Path, tmp_path: Path) -> None:
    replaced = _system_of(home, tmp_path, "--system-prompt", "Only this.")
    assert replaced == "Only this."
    appended = _system_of(home, tmp_path, "--append-system-prompt", "And this.")
    assert appended.startswith(IDENTITY) and appended.endswith("\n\nAnd this.")


def test_plan_mode_is_told(home: Path, tmp_path: Path) -> None:
    system = _system_of(home, tmp_path, "--permission-mode", "plan")
    assert "The session is in plan mode" in system
    assert "Is the working directory a git repository: no" in system
