"""Start-up bench (WIRE-026): wall time of ``agentx --list-providers
--output-format json`` and ``agentx --version`` against ``python -c "import
agentx"`` and ``python -c pass``, measured in the same run (median of N).

The four commands run interleaved, one of each per round, so load from other
processes that drifts during the run weighs on every command alike rather
than on whichever happened to be measured at the time.

Two bytecode settings are measured. The target rows use a bytecode cache
(a temporary ``PYTHONPYCACHEPREFIX``, filled by one warm-up round), as every
installed agentx runs: pip writes ``.pyc`` files at install time and an
editable install writes them on first import. The second table sets
``PYTHONDONTWRITEBYTECODE`` with no cache prefix (the standard library keeps
its installed bytecode), so every run also compiles each imported agentx
source file of the editable install; it is printed for information
(``python -c "import agentx"`` compiles only the three-line package
``__init__``, so that ratio is mostly the compiler's speed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = (
    ("--list-providers json", "import agentx", 1.5),
    ("--version", "python -c pass", 2.0),
)


def _elapsed(command: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def _medians(commands: dict[str, list[str]], runs: int, env: dict[str, str]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(_elapsed(command, env))
    return {name: statistics.median(values) for name, values in times.items()}


def _report(title: str, median: dict[str, float], with_target: bool) -> None:
    print(title)
    for name, base_name, target in TARGETS:
        value, base = median[name], median[base_name]
        goal = f" (target <= {target})" if with_target else ""
        print(
            f"  {name:<22} {1000 * value:7.1f} ms  vs {base_name} {1000 * base:6.1f} ms"
            f"  ratio {value / base:4.2f}{goal}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs
    agentx = str(Path(sys.executable).with_name("agentx"))
    commands = {
        "import agentx": [sys.executable, "-c", "import agentx"],
        "python -c pass": [sys.executable, "-c", "pass"],
        "--list-providers json": [agentx, "--list-providers", "--output-format", "json"],
        "--version": [agentx, "--version"],
    }
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cache:
        base_env = {
            name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"
        }
        cached = {**base_env, "AGENTX_HOME": home, "PYTHONPYCACHEPREFIX": cache}
        _medians(commands, 1, cached)  # warm-up: writes the bytecode cache
        _report("bytecode cached:", _medians(commands, runs, cached), with_target=True)
        compiling = {**base_env, "AGENTX_HOME": home, "PYTHONDONTWRITEBYTECODE": "1"}
        _report("compiled every run:", _medians(commands, runs, compiling), with_target=False)


if __name__ == "__main__":
    main()
