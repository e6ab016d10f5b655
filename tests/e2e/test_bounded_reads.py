"""End-to-end: Read and Grep read in bounded chunks and cap what a line
contributes, so a one-line file of 2 GiB is read by an agentx whose address
space is capped at 1 GiB (a whole-line read would end in MemoryError)."""

from __future__ import annotations

import json
import resource
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

GIB = 1024 * 1024 * 1024


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def test_a_two_gibibyte_line_is_read_cut_by_a_small_agentx(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    big = work / "big.txt"
    with big.open("wb") as handle:  # sparse: costs no disk
        handle.write(b"needle at the start ")
        handle.truncate(2 * GIB)
    mid = work / "mid.txt"  # one text line at Grep's file cap
    mid.write_bytes(b"needle " + b"x" * (16 * 1024 * 1024 - 8) + b"\n")
    steps = [
        {"tool_use": {"name": "Read", "input": {"file_path": str(big)}}},
        {"tool_use": {"name": "Grep", "input": {"pattern": "needle", "output_mode": "content"}}},
    ]
    script = write_script(home / "script.json", [{"steps": steps}, {"steps": [{"text": "read"}]}])
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    done = subprocess.run(
        [*agentx_command(), *DUPLEX, "--permission-mode", "bypassPermissions"],
        input=encode(user("read it")),
        capture_output=True,
        env=base_env(home),
        cwd=work,
        timeout=100,
        check=False,
        preexec_fn=_cap_address_space,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    records = records_of(done.stdout)
    results = [b for r in records if r["type"] == "user" for b in r["message"]["content"]]
    read, grep = results
    assert not read.get("is_error")
    assert read["content"].startswith("     1\tneedle at the start \u0000")
    assert read["content"].endswith("… [line truncated]")
    assert not grep.get("is_error")
    (line,) = grep["content"].splitlines()  # big.txt is past Grep's file cap
    assert line.startswith(f"{mid}:1:needle xxx") and len(line) < len(str(mid)) + 2100
    assert [r["subtype"] for r in records if is_result(r)] == ["success"]
    assert "MemoryError" not in done.stderr.decode()
    assert len(json.dumps(read)) < 20_000
