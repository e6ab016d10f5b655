"""End-to-end: a file read at start that never ends, or is not a file
(DECISIONS section 8, DEC-SET-1, DEC-AUTH-1).

Before, a project ``.agentx/settings.json`` linked to ``/dev/zero`` (a cloned
repository can carry that), ``--settings /dev/zero`` or
``--system-prompt-file /dev/zero`` were read until memory ran out, and a
link to ``/dev/stdin`` swallowed the protocol's input. Every file agentx
reads at start is a regular file read with a size bound: anything else is
exit 2 with one line naming it, nothing on stdout, at once. A file of
exactly its bound starts; one byte more does not.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentx.config.start_files import START_FILE_LIMITS
from tests.e2e.agentx_process import (
    DUPLEX,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)

SETTINGS_LIMIT = START_FILE_LIMITS["settings"]
PROMPT_LIMIT = START_FILE_LIMITS["system prompt"]


def _linked(relative: str) -> Callable[[Path, Path, str], tuple[list[str], dict[str, str], str]]:
    def put(home: Path, work: Path, target: str) -> tuple[list[str], dict[str, str], str]:
        link = work / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        return [], {}, str(link)

    return put


def _in_home(name: str) -> Callable[[Path, Path, str], tuple[list[str], dict[str, str], str]]:
    def put(home: Path, work: Path, target: str) -> tuple[list[str], dict[str, str], str]:
        (home / name).symlink_to(target)
        return [], {}, name if name == "auth.json" else str(home / name)

    return put


def _flag(flag: str) -> Callable[[Path, Path, str], tuple[list[str], dict[str, str], str]]:
    def put(home: Path, work: Path, target: str) -> tuple[list[str], dict[str, str], str]:
        return [flag, target], {}, flag if flag == "--system-prompt-file" else target

    return put


def _policy(home: Path, work: Path, target: str) -> tuple[list[str], dict[str, str], str]:
    return [], {"AGENTX_POLICY": target}, target


def _script(home: Path, work: Path, target: str) -> tuple[list[str], dict[str, str], str]:
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": target}])
    return [], {}, "script file"


PLACES = {
    "project-settings": _linked(".agentx/settings.json"),
    "local-settings": _linked(".agentx/settings.local.json"),
    "user-settings": _in_home("settings.json"),
    "auth-json": _in_home("auth.json"),
    "flag-settings": _flag("--settings"),
    "system-prompt-file": _flag("--system-prompt-file"),
    "policy": _policy,
    "scripted-provider-script": _script,
}


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    return home, work


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/stdin"])
@pytest.mark.parametrize("place", list(PLACES))
def test_a_start_file_that_is_not_a_regular_file_is_exit_2_in_one_line(
    tmp_path: Path, place: str, target: str
) -> None:
    home, work = _dirs(tmp_path)
    args, env, named = PLACES[place](home, work, target)
    done = run_once(
        [*DUPLEX, *args], encode(user("hello")), home=home, cwd=work, env=env, timeout=30
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert named in lines[0] and "not a regular file" in lines[0], lines
    if place == "auth-json":
        assert str(home) not in lines[0]  # DEC-AUTH-3a: its path is never shown


def _settings_of(size: int) -> bytes:
    """A valid settings document of exactly ``size`` bytes."""
    head = b'{"env": {"PAD": "'
    tail = b'"}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


@pytest.mark.parametrize("how", ["--settings", "project"])
def test_settings_of_exactly_the_bound_start_and_one_byte_more_is_exit_2(
    tmp_path: Path, how: str
) -> None:
    home, work = _dirs(tmp_path)
    path = work / ".agentx" / "settings.json" if how == "project" else tmp_path / "flag.json"
    path.parent.mkdir(exist_ok=True)
    args = ["--settings", str(path)] if how == "--settings" else []
    path.write_bytes(_settings_of(SETTINGS_LIMIT))
    json.loads(path.read_bytes())
    done = run_once([*DUPLEX, *args], encode(user("hello")), home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    assert [r["result"] for r in records_of(done.stdout) if is_result(r)] == ["hello"]
    path.write_bytes(_settings_of(SETTINGS_LIMIT + 1))
    done = run_once([*DUPLEX, *args], encode(user("hello")), home=home, cwd=work)
    assert done.returncode == 2, done.stderr
    assert done.stdout == b""
    (line,) = done.stderr.decode().strip().splitlines()
    assert str(path) in line and f"is larger than {SETTINGS_LIMIT} bytes" in line


def test_a_system_prompt_of_exactly_the_bound_starts_and_one_byte_more_is_exit_2(
    tmp_path: Path,
) -> None:
    home, work = _dirs(tmp_path)
    path = tmp_path / "prompt.txt"
    path.write_bytes(b"p" * PROMPT_LIMIT)
    args = [*DUPLEX, "--system-prompt-file", str(path)]
    done = run_once(args, encode(user("hello")), home=home, cwd=work)
    assert done.returncode == 0, done.stderr
    path.write_bytes(b"p" * (PROMPT_LIMIT + 1))
    done = run_once(args, encode(user("hello")), home=home, cwd=work)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.decode().strip().splitlines()
    assert "--system-prompt-file" in line and f"is larger than {PROMPT_LIMIT} bytes" in line
