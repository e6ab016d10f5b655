"""End-to-end: ``--no-session-persistence`` keeps nothing on disk, a
background task's output file included (README, DEC-STORE-1)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.e2e.agentx_process import (
    DUPLEX,
    agentx_command,
    base_env,
    encode,
    is_result,
    records_of,
    user,
    write_auth,
    write_script,
)


def test_a_background_task_output_file_is_gone_after_exit(home: Path, tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    bash = {"command": "echo hello-from-background", "run_in_background": True}
    steps = [{"tool_use": {"name": "Bash", "input": bash}}]
    script = write_script(home / "script.json", [{"steps": steps}, {"steps": [{"text": "ok"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    done = subprocess.run(
        [
            *agentx_command(),
            *DUPLEX,
            "--no-session-persistence",
            "--permission-mode",
            "bypassPermissions",
        ],
        input=encode(user("go")),
        capture_output=True,
        env={**base_env(home), "TMPDIR": str(temp)},
        cwd=work,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    records = records_of(done.stdout)
    assert [r["subtype"] for r in records if is_result(r)] == ["success"]
    text = str(records)
    found = re.search(r"Output is being written to: (\S+?\.output)", text)
    assert found is not None
    output_file = Path(found.group(1))
    assert output_file.is_relative_to(temp)  # it was in TMPDIR while the session ran
    assert not output_file.exists()
    assert list(temp.iterdir()) == []
