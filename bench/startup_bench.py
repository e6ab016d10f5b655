"""Start-up bench: how long a fresh ``agentx`` takes to start and to leave,
against floors measured the same way in the same run (medians of N rounds).

An SDK's one-shot ``query()`` spawns one agentx per call, so every figure
here is paid per request. One duplex session per round, driven as the SDK
drives it (``initialize`` at spawn, the prompt once it is answered, stdin
closed once the session is idle), gives four figures:

* spawn to ``system/init`` (the first record),
* spawn to the ``initialize`` response (what both SDKs wait for),
* spawn to the first ``result`` (the built-in echo provider),
* stdin EOF to process exit, with nothing running.

The stock SDKs spawn agentx with ``CLAUDE_CODE_ENTRYPOINT=sdk-py`` (or
``sdk-ts``), which selects the sdk profile (DEC-PROFILE-2), so each round also
runs the session as the Python SDK (claude-agent-sdk 0.2.189) spawns it for a
default ``query()``: its argv (:data:`SDK_ARGV`), its environment
(:data:`SDK_ENV`) and its ``initialize`` (``hooks: null``) and prompt lines,
spaced as its ``json.dumps`` writes them. Its spawn to the ``initialize``
response and to the first ``result`` have the same floor and targets.

The floor of any agentx is the interpreter with the libraries the design
binds for a session (DEC-CLI-3): ``python -c "import pykka, ujson"``, timed
spawn to exit; the targets are the ``initialize`` response and the first
``result`` within 2x of it. The spawn figures are also printed against a bare
Python and a Python after ``import pykka, ujson`` that print one JSON line at
once and exit at stdin EOF (the same shape as the session), EOF to exit
against those processes'.

The first run on a new runtime (no MOD-A14B verdict remembered yet, a fresh
``AGENTX_HOME``) runs in every round too: its check waits for the first
attachment (agentx.media.runtime_check), so its figures should match the
second run's. After the rounds, one session reports how many modules are
loaded when the ``initialize`` response is written.

The fast paths of the command line (WIRE-026) run in the same rounds, measured spawn
to exit: ``--list-providers --output-format json`` against ``python -c
"import agentx"`` and ``--version`` against ``python -c pass``.

Every command runs once per round, interleaved, so load from other processes
that drifts during the run weighs on each alike. The bytecode cache is a
temporary ``PYTHONPYCACHEPREFIX`` filled by one warm-up round, as every
installed agentx runs (pip writes ``.pyc`` files at install time).

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

from common import DUPLEX, agentx_command

#: Prints one JSON line at once, then exits at stdin EOF.
BARE = "import sys; sys.stdout.write('{}\\n'); sys.stdout.flush(); sys.stdin.buffer.read()"
LIBS = f"import pykka, ujson; {BARE}"
#: The floor of the targets (DEC-CLI-3), timed spawn to exit.
FLOOR = "python -c 'import pykka, ujson'"
INITIALIZE = (
    b'{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize"}}\n'
)
PROMPT = (
    b'{"type":"user","message":{"role":"user","content":"hello"},'
    b'"parent_tool_use_id":null,"session_id":""}\n'
)
#: The argv of a default ``query()`` of the Python SDK 0.2.189
#: (``SubprocessCLITransport._build_command`` with default options;
#: tests/unit/test_startup_imports.py checks it against the installed SDK).
SDK_ARGV = (
    "--output-format",
    "stream-json",
    "--verbose",
    "--system-prompt",
    "",
    "--input-format",
    "stream-json",
)
#: What the Python SDK 0.2.189 adds to the environment it spawns with.
SDK_ENV = {
    "CLAUDE_CODE_ENTRYPOINT": "sdk-py",
    "CLAUDE_AGENT_SDK_VERSION": "0.2.189",
    "CLAUDE_CODE_SDK_READS_SESSION_STATE": "1",
}
#: A default ``query()``'s ``initialize`` and prompt, as its ``json.dumps`` writes them.
SDK_INITIALIZE = (
    b'{"type": "control_request", "request_id": "req_1_5f3a9c2e",'
    b' "request": {"subtype": "initialize", "hooks": null}}\n'
)
SDK_PROMPT = (
    b'{"type": "user", "session_id": "", "message": {"role": "user", "content": "hello"},'
    b' "parent_tool_use_id": null}\n'
)


@dataclass(frozen=True, slots=True)
class Client:
    """How a client spawns and drives a session: what follows ``agentx`` on
    the command line, the environment it adds, its ``initialize`` (with the
    request id the response carries) and its prompt."""

    argv: tuple[str, ...]
    env: dict[str, str]
    initialize: bytes
    request_id: bytes
    prompt: bytes


#: Driven as the benches' own clients drive it (the standalone profile).
STANDALONE = Client(DUPLEX, {}, INITIALIZE, b'"request_id":"init-1"', PROMPT)
#: Driven as the Python SDK's default ``query()`` drives it (the sdk profile).
SDK_PY = Client(SDK_ARGV, SDK_ENV, SDK_INITIALIZE, b'"request_id":"req_1_5f3a9c2e"', SDK_PROMPT)
#: The name of an sdk-py figure.
SDK = "sdk-py: "

#: A process that is not done by then is killed and the bench fails.
DEADLINE_S = 60.0

#: (figure, floor, target ratio or None, target difference in s or None).
TARGETS: tuple[tuple[str, str, float | None, float | None], ...] = (
    ("spawn -> initialize response", FLOOR, 2.0, None),
    ("spawn -> first result", FLOOR, 2.0, None),
    (f"{SDK}spawn -> initialize response", FLOOR, 2.0, None),
    (f"{SDK}spawn -> first result", FLOOR, 2.0, None),
    ("first run: spawn -> initialize response", FLOOR, 2.0, None),
    ("EOF -> exit", "python: EOF -> exit", None, 0.050),
    ("--list-providers json", "python -c 'import agentx'", 1.5, None),
    ("--version", "python -c pass", 2.0, None),
)


#: The figures bench/load_report.py draws, each against one floor.
CHART = (
    ("spawn -> initialize response", FLOOR),
    ("spawn -> first result", FLOOR),
    ("EOF -> exit", "python: EOF -> exit"),
)


@dataclass(frozen=True, slots=True)
class Row:
    """One figure and the floors it is printed against."""

    name: str
    floors: tuple[str, ...]


_SPAWN_FLOORS = (FLOOR, "python: first line", "python + pykka, ujson: first line")
ROWS = (
    Row("spawn -> system/init", _SPAWN_FLOORS),
    Row("spawn -> initialize response", _SPAWN_FLOORS),
    Row("spawn -> first result", _SPAWN_FLOORS),
    Row(f"{SDK}spawn -> initialize response", _SPAWN_FLOORS),
    Row(f"{SDK}spawn -> first result", _SPAWN_FLOORS),
    Row("first run: spawn -> initialize response", _SPAWN_FLOORS),
    Row("first run: spawn -> first result", _SPAWN_FLOORS),
    Row("EOF -> exit", ("python: EOF -> exit", "pykka, ujson: EOF -> exit")),
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


def agentx_session(env: dict[str, str], cwd: str, client: Client = STANDALONE) -> dict[str, float]:
    """One duplex session as an SDK's ``query()`` drives it: ``initialize``
    at spawn, the prompt once it is answered, stdin closed once idle."""
    command = [*agentx_command(), *client.argv]
    start = time.perf_counter()
    proc = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**env, **client.env},
        cwd=cwd,
    )
    assert proc.stdin is not None
    watchdog = _Watchdog(proc)
    try:
        proc.stdin.write(client.initialize)
        proc.stdin.flush()
        marks: dict[str, float] = {}
        while "spawn -> first result" not in marks or "idle" not in marks:
            line = _line(proc, "agentx")
            now = time.perf_counter() - start
            if b'"subtype":"init"' in line and b'"type":"system"' in line:
                marks.setdefault("spawn -> system/init", now)
            elif client.request_id in line and b'"type":"control_response"' in line:
                marks["spawn -> initialize response"] = now
                proc.stdin.write(client.prompt)
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


def first_run(env: dict[str, str], cwd: str) -> dict[str, float]:
    """A session on a new runtime: a fresh ``AGENTX_HOME`` with no MOD-A14B
    verdict remembered (the bytecode cache stays warm, as after an install)."""
    with tempfile.TemporaryDirectory(dir=cwd) as home:
        marks = agentx_session({**env, "AGENTX_HOME": home}, home)
    return {
        f"first run: {name}": marks[name]
        for name in ("spawn -> initialize response", "spawn -> first result")
    }


def one_round(env: dict[str, str], cwd: str) -> dict[str, float]:
    """Every figure once, interleaved."""
    python, agentx = sys.executable, agentx_command()
    times: dict[str, float] = {}
    spawn, eof = floor_process([python, "-c", BARE], env)
    times["python: first line"], times["python: EOF -> exit"] = spawn, eof
    spawn, eof = floor_process([python, "-c", LIBS], env)
    times["python + pykka, ujson: first line"] = spawn
    times["pykka, ujson: EOF -> exit"] = eof
    times[FLOOR] = _exit_time([python, "-c", "import pykka, ujson"], env)
    times.update(agentx_session(env, cwd))
    sdk = agentx_session(env, cwd, SDK_PY)
    for name in ("spawn -> initialize response", "spawn -> first result"):
        times[f"{SDK}{name}"] = sdk[name]
    times.update(first_run(env, cwd))
    times["python -c pass"] = _exit_time([python, "-c", "pass"], env)
    times["python -c 'import agentx'"] = _exit_time([python, "-c", "import agentx"], env)
    list_json = [*agentx, "--list-providers", "--output-format", "json"]
    times["--list-providers json"] = _exit_time(list_json, env)
    times["--version"] = _exit_time([*agentx, "--version"], env)
    return times


def medians(runs: int, env: dict[str, str], cwd: str) -> dict[str, float]:
    """Medians of ``runs`` rounds after one warm-up round (it fills the
    bytecode cache)."""
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
        lines.append(f"  {row.name:<40} {1000 * value:7.1f} ms  vs {against}")
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


#: Runs the entry point and prints, to stderr, how many modules are loaded
#: when the ``initialize`` response (its request id in ``COUNTED_ID``) is
#: handed to stdout.
COUNTING = """
import os, sys
import agentx.cli as cli
write_all = cli._write_all
marker = os.environ["COUNTED_ID"].encode()
counted = []

def counting(fd, data):
    if not counted and marker in data:
        counted.append(len(sys.modules))
    return write_all(fd, data)

cli._write_all = counting
status = cli.main(sys.argv[1:])
sys.stderr.write(f"\\nmodules: {counted[0]}\\n")
sys.exit(status)
"""


def imports_before_initialize(env: dict[str, str], cwd: str, client: Client = STANDALONE) -> int:
    """``len(sys.modules)`` when the ``initialize`` response is written
    (stdin is closed only once it is read, so nothing later races it)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", COUNTING, *client.argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**env, **client.env, "COUNTED_ID": client.request_id.decode()},
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    watchdog = _Watchdog(proc)
    try:
        proc.stdin.write(client.initialize)
        proc.stdin.flush()
        while client.request_id not in _line(proc, "agentx"):
            pass
        proc.stdin.close()
        proc.stdout.read()
        err = proc.stderr.read()
        proc.wait()
    finally:
        watchdog.cancel()
    return int(err.decode("utf-8").rsplit("modules: ", 1)[1])


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
        modules = imports_before_initialize(bench_env(home), home)
        sdk_modules = imports_before_initialize(bench_env(home), home, SDK_PY)
    print(f"start-up, median of {runs} interleaved rounds (bytecode cached):")
    print("\n".join(report(median)))
    print(
        f"modules loaded when the initialize response is written: {modules} (standalone),"
        f" {sdk_modules} (sdk profile, as the Python SDK spawns it)"
    )


if __name__ == "__main__":
    main()
