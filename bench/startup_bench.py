"""Start-up bench (issues 4 and 9): wall time of ``agentx --list-providers
--output-format json`` and ``agentx --version`` against ``python -c "import
agentx"`` and ``python -c pass``, measured in the same run (median of N)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _median(command: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs
    agentx = str(Path(sys.executable).with_name("agentx"))
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "AGENTX_HOME": home}
        base_import = _median([sys.executable, "-c", "import agentx"], runs, env)
        base_pass = _median([sys.executable, "-c", "pass"], runs, env)
        listing = _median([agentx, "--list-providers", "--output-format", "json"], runs, env)
        version = _median([agentx, "--version"], runs, env)
    rows = (
        ("--list-providers json", listing, "import agentx", base_import, 1.5),
        ("--version", version, "python -c pass", base_pass, 2.0),
    )
    for name, value, base_name, base, target in rows:
        print(
            f"{name:<22} {1000 * value:7.1f} ms  vs {base_name} {1000 * base:6.1f} ms"
            f"  ratio {value / base:4.2f} (target <= {target})"
        )


if __name__ == "__main__":
    main()
