"""Start-up bench: how long a fresh ``agentx`` takes to start and to leave,
against floors measured the same way in the same run (medians of N rounds).

An SDK's one-shot ``query()`` spawns one agentx per call, so every figure
here is paid per request. One duplex session per round, driven as the SDK
drives it (``initialize`` at spawn, the prompt once it is answered, stdin
closed once the session is idle), gives four figures:

* spawn to ``system/init`` (the first record),
* spawn to the ``initialize`` response,
* spawn to the first ``result`` (the built-in echo provider),
* stdin EOF to process exit, with nothing running.

The floors are two bare Python processes that print one JSON line at once
and exit at stdin EOF: ``python`` alone (the ``python -c pass`` floor) and
``python`` after ``import pykka, ujson, loguru`` (the libraries the design
binds: the floor of any agentx). Each spawn figure is printed against both,
as a ratio and a difference; EOF to exit against the bare process's.

The fast paths of the command line (WIRE-026) run in the same rounds, measured spawn
to exit: ``--list-providers --output-format json`` against ``python -c
"import agentx"`` and ``--version`` against ``python -c pass``.

Every command runs once per round, interleaved, so load from other processes
that drifts during the run weighs on each alike. The bytecode cache is a
temporary ``PYTHONPYCACHEPREFIX`` filled by one warm-up round, as every
installed agentx runs (pip writes ``.pyc`` files at install time); the same
round runs the attachment runtime check that every later start on this
runtime remembers (agentx.media.runtime_check), as every start after the first
one of an installation does.

    python bench/startup_bench.py [--runs N] [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import agentx_command

#: Prints one JSON line at once, then exits at stdin EOF.
BARE = "import sys; sys.stdout.write('{}\\n'); sys.stdout.flush(); sys.stdin.buffer.read()"
LIBS = f"import pykka, ujson, loguru; {BARE}"
INITIALIZE = (
    b'{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize"}}\n'
)
PROMPT = (
    b'{"type":"user","message":{"role":"user","content":"hello"},'
    b'"parent_tool_use_id":null,"session_id":""}\n'
)
#: A process that is not done by then is killed and the bench fails.
DEADLINE_S = 60.0

#: (figure, floor, target ratio or None, target difference in s or None).
TARGETS: tuple[tuple[str, str, float | None, float | None], ...] = (
    ("spawn -> system/init", "python + pykka, ujson, loguru", 1.3, None),
    ("EOF -> exit", "python: EOF -> exit", None, 0.050),
    ("--list-providers json", "python -c 'import agentx'", 1.5, None),
    ("--version", "python -c pass", 2.0, None),
)


#: The figures bench/load_report.py draws, each against one floor.
CHART = (
    ("spawn -> system/init", "python + pykka, ujson, loguru"),
    ("spawn -> first result", "python + pykka, ujson, loguru"),
    ("EOF -> exit", "python: EOF -> exit"),
)


@dataclass(frozen=True, slots=True)
class Row:
    """One figure and the floors it is printed against."""

    name: str
    floors: tuple[str, ...]


ROWS = (
    Row("spawn -> system/init", ("python: first line", "python + pykka, ujson, loguru")),
    Row("spawn -> initialize response", ("python: first line", "python + pykka, ujson, loguru")),
    Row("spawn -> first result", ("python: first line", "python + pykka, ujson, loguru")),
    Row("EOF -> exit", ("python: EOF -> exit", "pykka, ujson, loguru: EOF -> exit")),
    Row("--list-providers json", ("python -c 'import agentx'",)),
    Row("--version", ("python -c pass",)),
)


class _Watchdog:
    """Kills ``proc`` if the round outlives :data:`DEADLINE_S` (never hang)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self._timer = threading.Timer(DEADLINE_S, proc.kill)
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()


def _line(proc: subprocess.Popen[bytes], name: str) -> bytes:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"{name}: stdout ended early (exit status {proc.wait()})")
    return line


def _eof_to_exit(proc: subprocess.Popen[bytes]) -> float:
    assert proc.stdin is not None and proc.stdout is not None
    start = time.perf_counter()
    proc.stdin.close()
    proc.wait()
    elapsed = time.perf_counter() - start
    proc.stdout.read()
    return elapsed


def floor_process(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Spawn to the first line, and stdin EOF to exit, of a floor process."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    watchdog = _Watchdog(proc)
    try:
        _line(proc, command[-1])
        first_line = time.perf_counter() - start
        return first_line, _eof_to_exit(proc)
    finally:
        watchdog.cancel()


def agentx_session(env: dict[str, str], cwd: str) -> dict[str, float]:
    """One duplex session as an SDK's ``query()`` drives it."""
    command = [*agentx_command(), "--input-format", "stream-json", "--output-format", "stream-json"]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None
    watchdog = _Watchdog(proc)
    try:
        proc.stdin.write(INITIALIZE)
        proc.stdin.flush()
        marks: dict[str, float] = {}
        while "spawn -> first result" not in marks or "idle" not in marks:
            line = _line(proc, "agentx")
            now = time.perf_counter() - start
            if b'"subtype":"init"' in line and b'"type":"system"' in line:
                marks.setdefault("spawn -> system/init", now)
            elif b'"request_id":"init-1"' in line:
                marks["spawn -> initialize response"] = now
                proc.stdin.write(PROMPT)
                proc.stdin.flush()
            elif line.startswith(b'{"type":"result"'):
                marks["spawn -> first result"] = now
            elif b'"state":"idle"' in line and "spawn -> first result" in marks:
                marks["idle"] = now
        marks["EOF -> exit"] = _eof_to_exit(proc)
        if proc.returncode != 0:
            raise SystemExit(f"agentx exited {proc.returncode}")
        return marks
    finally:
        watchdog.cancel()


def _exit_time(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=True, timeout=DEADLINE_S)
    return time.perf_counter() - start


def one_round(env: dict[str, str], cwd: str) -> dict[str, float]:
    """Every figure once, interleaved."""
    python, agentx = sys.executable, agentx_command()
    times: dict[str, float] = {}
    spawn, eof = floor_process([python, "-c", BARE], env)
    times["python: first line"], times["python: EOF -> exit"] = spawn, eof
    spawn, eof = floor_process([python, "-c", LIBS], env)
    times["python + pykka, ujson, loguru"] = spawn
    times["pykka, ujson, loguru: EOF -> exit"] = eof
    times.update(agentx_session(env, cwd))
    times["python -c pass"] = _exit_time([python, "-c", "pass"], env)
    times["python -c 'import agentx'"] = _exit_time([python, "-c", "import agentx"], env)
    list_json = [*agentx, "--list-providers", "--output-format", "json"]
    times["--list-providers json"] = _exit_time(list_json, env)
    times["--version"] = _exit_time([*agentx, "--version"], env)
    return times


def medians(runs: int, env: dict[str, str], cwd: str) -> dict[str, float]:
    """Medians of ``runs`` rounds after one warm-up round (it fills the
    bytecode cache and runs the MOD-A14B check that later starts remember)."""
    one_round(env, cwd)
    rounds = [one_round(env, cwd) for _ in range(runs)]
    return {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}


def report(median: dict[str, float]) -> list[str]:
    """The table: each figure against its floors, then the targets."""
    lines = []
    for row in ROWS:
        value = median[row.name]
        against = "  ".join(
            f"{floor} {1000 * median[floor]:6.1f} ms: {value / median[floor]:4.2f}x"
            f" {1000 * (value - median[floor]):+6.1f} ms"
            for floor in row.floors
        )
        lines.append(f"  {row.name:<29} {1000 * value:7.1f} ms  vs {against}")
    lines.append("targets:")
    for name, floor, ratio, difference in TARGETS:
        value, base = median[name], median[floor]
        if ratio is not None:
            verdict = "met" if value / base <= ratio else "MISSED"
            lines.append(f"  {name}: {value / base:4.2f}x {floor} (target <= {ratio}x) {verdict}")
        if difference is not None:
            verdict = "met" if value - base <= difference else "MISSED"
            lines.append(
                f"  {name}: {1000 * (value - base):+.1f} ms over {floor}"
                f" (target <= +{1000 * difference:.0f} ms) {verdict}"
            )
    return lines


def bench_env(home: str | Path) -> dict[str, str]:
    """The environment of every command: ``AGENTX_HOME`` and a bytecode cache in
    ``home`` (filled by the first round)."""
    return {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "AGENTX_HOME": str(home),
        "PYTHONPYCACHEPREFIX": str(Path(home) / "pycache"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--quick", action="store_true", help="3 rounds: completes, not judged")
    args = parser.parse_args()
    runs = 3 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as home:
        median = medians(runs, bench_env(home), home)
    print(f"start-up, median of {runs} interleaved rounds (bytecode cached):")
    print("\n".join(report(median)))


if __name__ == "__main__":
    main()
