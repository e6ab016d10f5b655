"""End-to-end bench (DEC-TURN-1): N prompts through a real ``agentx`` process.

A closed loop keeps a window of prompts outstanding (below the 128-record
queue bound, WIRE-020) on the built-in echo provider, counts every record
agentx writes, and reports records/s and prompts/s against the same-run
baseline loop (bench/common.py) for the same input lines. It also measures
control round trips (``mcp_status``, back to back) and the interrupt
acknowledgement latency while a scripted turn streams.

    python bench/e2e_bench.py [--prompts N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import baseline_records_per_second, ready, report, start_agentx, user_line

WINDOW = 64


def prompts(home: Path, n: int, *extra: str) -> tuple[float, int, list[bytes]]:
    """Closed loop with WINDOW prompts outstanding; returns (seconds, records, lines)."""
    proc = start_agentx(home, *extra)
    assert proc.stdin is not None and proc.stdout is not None
    ready(proc)
    lines = [user_line(i) for i in range(n)]
    credit = threading.Semaphore(WINDOW)

    def feed() -> None:
        assert proc.stdin is not None
        for line in lines:
            credit.acquire()
            proc.stdin.write(line)
            proc.stdin.flush()
        proc.stdin.close()

    start = time.perf_counter()
    threading.Thread(target=feed, daemon=True).start()
    records = results = 0
    for raw in proc.stdout:
        records += 1
        if raw.startswith(b'{"type":"result"'):
            results += 1
            credit.release()
    elapsed = time.perf_counter() - start
    proc.wait(timeout=60)
    assert results == n, f"expected {n} results, got {results}"
    return elapsed, records, lines


def _mcp_status(i: int) -> bytes:
    request = {"subtype": "mcp_status"}
    record = {"type": "control_request", "request_id": f"c{i}", "request": request}
    return json.dumps(record).encode() + b"\n"


def control_round_trips(home: Path, n: int, *, window: int = 1) -> float:
    """``mcp_status`` requests to their responses, back to back, with at most
    ``window`` outstanding (1: lockstep, each request waits for its answer)."""
    proc = start_agentx(home)
    assert proc.stdin is not None and proc.stdout is not None
    ready(proc)
    credit = threading.Semaphore(window)

    def feed() -> None:
        assert proc.stdin is not None
        for i in range(n):
            credit.acquire()
            proc.stdin.write(_mcp_status(i))
            proc.stdin.flush()

    start = time.perf_counter()
    threading.Thread(target=feed, daemon=True).start()
    for _ in range(n):
        line = proc.stdout.readline()
        assert line.startswith(b'{"type":"control_response"'), line[:200]
        credit.release()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=60)
    return n / elapsed


def interrupt_latency(home: Path, n: int) -> list[float]:
    """Request written to acknowledgement read, while a scripted turn streams."""
    script = home / "slow.json"
    turn = {"steps": [{"text": "streaming"}, {"sleep_ms": 60000}]}
    script.write_text(json.dumps({"version": 1, "turns": [turn] * n}))
    (home / "auth.json").write_text(
        json.dumps(
            {
                "version": 2,
                "providers": [
                    {"id": "slow", "type": "scripted", "model": "m", "script": str(script)}
                ],
            }
        )
    )
    proc = start_agentx(home)
    assert proc.stdin is not None and proc.stdout is not None
    ready(proc)
    latencies = []
    for i in range(n):
        proc.stdin.write(user_line(i))
        proc.stdin.flush()
        while b'"running"' not in proc.stdout.readline():
            pass
        request = {
            "type": "control_request",
            "request_id": f"i{i}",
            "request": {"subtype": "interrupt"},
        }
        sent = time.perf_counter()
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if f'"request_id":"i{i}"'.encode() in line:
                latencies.append(time.perf_counter() - sent)
            if line.startswith(
                b'{"type":"system","subtype":"session_state_changed","state":"idle"'
            ):
                break
    proc.stdin.close()
    proc.wait(timeout=60)
    (home / "auth.json").unlink()
    return latencies


def permission_round_trips(home: Path, n: int) -> list[float]:
    """can_use_tool request read, answered at once, to its tool_result read."""
    work = home / "work"
    work.mkdir(exist_ok=True)
    write = {
        "tool_use": {"name": "Write", "input": {"file_path": str(work / "f.txt"), "content": "x"}}
    }
    turns = [{"steps": [write]}, {"steps": [{"text": "ok"}]}] * n
    script = home / "perm.json"
    script.write_text(json.dumps({"version": 1, "turns": turns}))
    entry = {"id": "perm", "type": "scripted", "model": "m", "script": str(script)}
    (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [entry]}))
    proc = start_agentx(home)
    assert proc.stdin is not None and proc.stdout is not None
    ready(proc)
    trips = []
    for i in range(n):
        proc.stdin.write(user_line(i))
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            if b'"subtype":"can_use_tool"' in line:
                request_id = json.loads(line)["request_id"]
                asked = time.perf_counter()
                answer = {
                    "type": "control_response",
                    "response": {
                        "subtype": "success",
                        "request_id": request_id,
                        "response": {"behavior": "allow"},
                    },
                }
                proc.stdin.write(json.dumps(answer).encode() + b"\n")
                proc.stdin.flush()
            elif b'"tool_result"' in line:
                trips.append(time.perf_counter() - asked)
            elif line.startswith(b'{"type":"result"'):
                break
    proc.stdin.close()
    proc.wait(timeout=60)
    (home / "auth.json").unlink()
    return trips


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(p * len(ordered)), len(ordered) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 500 if args.quick else args.prompts
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        elapsed, records, lines = prompts(home, n)
        baseline = baseline_records_per_second([line.rstrip(b"\n") for line in lines], records)
        print(report("end-to-end records/s (echo)", records / elapsed, baseline, "records/s"))
        lean, lean_records, _ = prompts(home, n, "--no-session-persistence")
        print(
            report(
                "  same, --no-session-persistence",
                lean_records / lean,
                baseline,
                "records/s",
            )
        )
        print(
            report("end-to-end prompts/s (echo)", n / elapsed, baseline * n / records, "prompts/s")
        )
        # WIRE-006: control round trips against the end-to-end record
        # throughput, both with WINDOW outstanding; lockstep for reference.
        count = 200 if args.quick else 10_000
        trips = control_round_trips(home, count, window=WINDOW)
        print(report("control round trips/s (mcp_status)", trips, records / elapsed, "trips/s"))
        print(report("  same, vs --no-session-persistence", trips, lean_records / lean, "trips/s"))
        lockstep = control_round_trips(home, count)
        print(report("  lockstep (window 1)", lockstep, records / elapsed, "trips/s"))
        latencies = interrupt_latency(home, 20 if args.quick else 200)
        print(
            f"interrupt ack latency p50 {1000 * statistics.median(latencies):.2f} ms, "
            f"p99 {1000 * _percentile(latencies, 0.99):.2f} ms (target p99 < 20 ms)"
        )
        perms = permission_round_trips(home, 200 if args.quick else 2_000)
        print(
            f"permission round trip p50 {1000 * statistics.median(perms):.2f} ms, "
            f"p99 {1000 * _percentile(perms, 0.99):.2f} ms (target p99 < 25 ms)"
        )


if __name__ == "__main__":
    main()
