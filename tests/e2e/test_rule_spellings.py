"""End-to-end: Claude Code's rule spellings hold, and a rule that can match
nothing stops the start (DEC-SET-2, DEC-PERM-PATH, DECISIONS section 8).

The scripted model reads files through every spelling a deny rule may take;
the process runs in ``bypassPermissions`` mode, so only the rule stands
between the model and the secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.agentx_process import (
    DUPLEX,
    Record,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
    write_script,
)

pytestmark = pytest.mark.e2e

SECRET = "SECRET-5b7e"


def _read_all(
    home: Path, work: Path, user_home: Path, paths: list[Path], deny: list[str]
) -> list[Record]:
    steps = [{"tool_use": {"name": "Read", "input": {"file_path": str(p)}}} for p in paths]
    script = write_script(home / "script.json", [{"steps": steps}, {"steps": [{"text": "ok"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    (work / ".agentx").mkdir(exist_ok=True)
    (work / ".agentx" / "settings.json").write_text(json.dumps({"permissions": {"deny": deny}}))
    done = run_once(
        [*DUPLEX, "--permission-mode", "bypassPermissions", "--add-dir", str(user_home)],
        encode(user("go")),
        home=home,
        cwd=work,
        env={"HOME": str(user_home)},
    )
    assert done.returncode == 0, done.stderr
    return records_of(done.stdout)


def _results(records: list[Record]) -> list[dict[str, Any]]:
    return [
        block
        for r in records
        if r["type"] == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


#: (deny rule, the file it must protect, relative to work or to the user's home)
SPELLINGS = [
    ("Read(~/.ssh/**)", "~/.ssh/id_rsa"),
    ("Read(~/**)", "~/notes.txt"),
    ("Read(//{abs}/**)", "{abs}/k.pem"),
    ("Read(secrets/)", "secrets/deep/k"),
    ("Read(secrets)", "secrets/deep/k"),
    ("Read(.env)", "sub/.env"),
    ("Read(/conf/**)", "conf/app.ini"),
]


@pytest.mark.parametrize("denied", [True, False], ids=["deny-rule", "no-rule"])
def test_claude_code_path_spellings_deny(home: Path, tmp_path: Path, denied: bool) -> None:
    work, user_home, outside = tmp_path / "work", tmp_path / "uhome", tmp_path / "outside"
    for folder in (work, user_home, outside):
        folder.mkdir()
    rules, targets = [], []
    for rule, target in SPELLINGS:
        rules.append(rule.format(abs=str(outside).lstrip("/")))
        spelled = target.format(abs=str(outside))
        path = (
            user_home / spelled[2:]
            if spelled.startswith("~/")
            else Path(spelled)
            if spelled.startswith("/")
            else work / spelled
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{SECRET}\n")
        targets.append(path)
    records = _read_all(home, work, user_home, targets, rules if denied else [])
    results = _results(records)
    assert len(results) == len(targets)
    if denied:
        for result in results:
            assert result["is_error"] is True
            assert "denied by rule Read(" in json.dumps(result)
        assert SECRET not in json.dumps(records)
    else:  # the same reads do reach the files: the rules are what stop them
        assert all(SECRET in json.dumps(r) for r in results)
    assert [r["subtype"] for r in records if is_result(r)] == ["success"]


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("WebFetch(evil.example)", "domain:<host>"),
        ("Read(../secrets/**)", ".."),
        ("Task(explore)", "take no specifier"),
    ],
)
def test_a_rule_that_can_match_nothing_stops_the_start(
    home: Path, tmp_path: Path, rule: str, problem: str
) -> None:
    work = tmp_path / "work"
    (work / ".agentx").mkdir(parents=True)
    settings = work / ".agentx" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)", rule]}}))
    script = write_script(home / "script.json", [{"steps": [{"text": "ok"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    done = run_once([*DUPLEX], encode(user("go")), home=home, cwd=work)
    assert done.returncode == 2
    assert done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert str(settings) in lines[0]
    assert repr(rule) in lines[0]
    assert problem in lines[0]
