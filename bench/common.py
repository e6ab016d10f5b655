"""Shared pieces of the benches: the same-run baseline loop and reporting.

The baseline (DESIGN "Ways in": ratios against a same-run baseline) is a
plain single-threaded Python loop that reads the same input lines, decodes
each with ``json`` and a duplicate-rejecting ``object_pairs_hook``, and
writes as many ``ujson.dumps`` records as agentx wrote for that input. Every
figure is printed with its ratio to it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ujson

DUPLEX = ("--input-format", "stream-json", "--output-format", "stream-json")


def agentx_command() -> list[str]:
    """The ``agentx`` of this interpreter's environment."""
    script = Path(sys.executable).with_name("agentx")
    return [str(script)] if script.exists() else [sys.executable, "-m", "agentx"]


def start_agentx(home: Path, *extra: str) -> subprocess.Popen[bytes]:
    """A real ``agentx`` on the duplex protocol with ``AGENTX_HOME=home``."""
    return subprocess.Popen(
        [*agentx_command(), *DUPLEX, *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "AGENTX_HOME": str(home)},
        cwd=home,
    )


#: What an SDK sends first; its response says the whole host is running.
INITIALIZE = b'{"type":"control_request","request_id":"ready","request":{"subtype":"initialize"}}\n'


def ready(proc: subprocess.Popen[bytes]) -> None:
    """Read ``system/init``, then ask ``initialize`` and read up to its answer.

    ``system/init`` is written before the rest of the actor system has
    started (DEC-CLI-3), so a figure timed from that line alone would include
    the end of start-up; from the ``initialize`` response on, the host is
    running, as an SDK sees it after its handshake.
    """
    assert proc.stdin is not None and proc.stdout is not None
    line = proc.stdout.readline()
    if b'"subtype":"init"' not in line:
        raise SystemExit(f"agentx did not start: {line[:200]!r}")
    proc.stdin.write(INITIALIZE)
    proc.stdin.flush()
    for line in proc.stdout:
        if line.startswith(b'{"type":"control_response"') and b'"request_id":"ready"' in line:
            return
    raise SystemExit("agentx ended before answering initialize")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate member")
    return obj


def baseline_records_per_second(
    lines: Sequence[bytes], records_out: int, *, repeat: int = 5
) -> float:
    """Decode every line, then write ``records_out`` ujson records to /dev/null.

    The best of ``repeat`` passes: one short pass swings by 2x on this shared
    machine, and the best pass is the loop's real speed (the ratios against
    it are the conservative ones)."""
    per_line = max(records_out // max(len(lines), 1), 1)
    extra = records_out - per_line * len(lines)
    best = 0.0
    with open(os.devnull, "wb") as sink:
        for _ in range(repeat):
            start = time.perf_counter()
            written = 0
            record: Any = None
            for line in lines:
                record = json.loads(line, object_pairs_hook=_pairs)
                for _ in range(per_line):
                    sink.write(ujson.dumps(record, ensure_ascii=False).encode() + b"\n")
                    written += 1
            for _ in range(max(extra, 0)):
                sink.write(ujson.dumps(record, ensure_ascii=False).encode() + b"\n")
                written += 1
            best = max(best, written / (time.perf_counter() - start))
    return best


def user_line(i: int) -> bytes:
    record = {
        "type": "user",
        "message": {"role": "user", "content": f"prompt number {i}: hello agentx"},
        "parent_tool_use_id": None,
        "session_id": "",
    }
    return json.dumps(record).encode() + b"\n"


def report(name: str, value: float, baseline: float, unit: str) -> str:
    ratio = value / baseline if baseline else float("nan")
    return f"{name:<40} {value:>12,.0f} {unit:<10} baseline {baseline:>12,.0f}  ratio {ratio:5.2f}"
