"""End-to-end: Bash rules on the parsed command line (DEC-PERM-PATH, DEC-PERM-MODE).

A fake ``curl``, first on the session's ``PATH``, writes a marker file when it
runs. In ``bypassPermissions`` mode only the deny rule stands between the
scripted model's commands and that marker.
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

CURL_FORMS = (
    "env curl x",
    "{fake}/curl x",
    "bash -c 'c\\url x'",
    "echo $(X=1 curl x)",
    "sudo -u nobody timeout 5 curl x",
    # DEC-PERM-BASH-4: wrappers with their own option grammars.
    "taskset -c 0 curl x",
    "prlimit --nofile=100 curl x",
    "chrt -o 0 curl x",
    "setpriv --nnp curl x",
    "stdbuf -oL curl x",
    "ionice -c3 curl x",
    "flock {tmp}/lock curl x",
    "flock {tmp}/lock -c 'curl x'",
    "script -qc 'curl x' /dev/null",
    # DEC-PERM-BASH-5: a shell fed a literal script on its input.
    "bash <<'EOF'\ncurl x\nEOF",
    "sh <<< 'curl x'",
    "echo curl x | sh",
    "printf 'curl x\\n' | bash",
)
#: DEC-PERM-BASH-5: shells whose script the matcher cannot read: opaque, so even
#: a deny rule on another program stops them.
OPAQUE_FORMS = (
    "bash {tmp}/script.sh",
    "sh < {tmp}/script.sh",
    "cat {tmp}/script.sh | bash",
    "bash <<EOF\n$(cat {tmp}/script.sh)\nEOF",
)


def _run(
    home: Path, tmp_path: Path, commands: list[str], settings: dict[str, Any]
) -> tuple[list[Record], str]:
    steps = [{"tool_use": {"name": "Bash", "input": {"command": c}}} for c in commands]
    script = write_script(home / "script.json", [{"steps": steps}, {"steps": [{"text": "done"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    done = run_once(
        [
            *DUPLEX,
            "--permission-mode",
            "bypassPermissions",
            "--settings",
            json.dumps(settings),
        ],
        encode(user("go")),
        home=home,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    return records_of(done.stdout), done.stderr.decode()


def _tool_results(records: list[Record]) -> list[Record]:
    return [
        block
        for r in records
        if r["type"] == "user"
        for block in r["message"]["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def _fake_curl(tmp_path: Path) -> tuple[Path, Path]:
    fake = tmp_path / "fakebin"
    fake.mkdir()
    marker = tmp_path / "curl-ran"
    curl = fake / "curl"
    curl.write_text(f'#!/bin/sh\necho "$@" >> {marker}\n')
    curl.chmod(0o755)
    # ``sudo`` as a pass-through: the test needs no privileges to reach curl through it.
    sudo = fake / "sudo"
    sudo.write_text('#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift 2; done\nexec "$@"\n')
    sudo.chmod(0o755)
    return fake, marker


@pytest.mark.parametrize(
    "rule", ["Bash(curl:*)", "Bash(curl *)", None], ids=["deny-rule", "deny-rule-cc", "no-rule"]
)
def test_denied_curl_never_runs_however_it_is_spelt(
    home: Path, tmp_path: Path, rule: str | None
) -> None:
    fake, marker = _fake_curl(tmp_path)
    settings: dict[str, Any] = {"env": {"PATH": f"{fake}:/usr/bin:/bin"}}
    denied = rule is not None
    if denied:
        settings["permissions"] = {"deny": [rule]}
    commands = [form.format(fake=fake, tmp=tmp_path) for form in CURL_FORMS]
    records, _ = _run(home, tmp_path, commands, settings)
    results = _tool_results(records)
    assert len(results) == len(commands)
    if denied:
        assert not marker.exists()
        assert all(r["is_error"] for r in results)
        assert all(f"denied by rule {rule}" in json.dumps(r) for r in results)
    else:  # the same commands do reach the fake curl: the rule is what stops them
        assert marker.read_text().splitlines() == ["x"] * len(commands)
    assert [r["subtype"] for r in records if is_result(r)] == ["success"]


@pytest.mark.parametrize("denied", [True, False], ids=["deny-rule", "no-rule"])
def test_a_shell_running_a_script_it_cannot_read_is_opaque(
    home: Path, tmp_path: Path, denied: bool
) -> None:
    """A deny rule naming another program stops a shell whose script is a file or a pipe."""
    fake, marker = _fake_curl(tmp_path)
    (tmp_path / "script.sh").write_text("curl x\n")
    settings: dict[str, Any] = {"env": {"PATH": f"{fake}:/usr/bin:/bin"}}
    if denied:
        settings["permissions"] = {"deny": ["Bash(wget:*)"]}
    commands = [form.format(tmp=tmp_path) for form in OPAQUE_FORMS]
    records, _ = _run(home, tmp_path, commands, settings)
    results = _tool_results(records)
    assert len(results) == len(commands)
    if denied:
        assert not marker.exists()
        assert all("the command cannot be checked" in json.dumps(r) for r in results)
    else:
        assert marker.read_text().splitlines() == ["x"] * len(commands)


def test_a_redirection_under_a_bash_rule_runs(home: Path, tmp_path: Path) -> None:
    """``echo hi > out.txt`` with a content rule: it runs, no internal error."""
    settings = {"permissions": {"deny": ["Bash(rm:*)"]}}
    records, stderr = _run(
        home, tmp_path, ["echo hi > out.txt", "cat < out.txt", "echo `echo a` $(echo b)"], settings
    )
    assert (tmp_path / "work" / "out.txt").read_text() == "hi\n"
    results = _tool_results(records)
    assert [r.get("is_error", False) for r in results] == [False, False, False]
    assert "hi" in json.dumps(results[1])
    assert "a b" in json.dumps(results[2])
    assert [r["subtype"] for r in records if is_result(r)] == ["success"]
    assert "RecursionError" not in stderr
    assert "internal error" not in json.dumps(records)
