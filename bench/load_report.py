"""Load report (WIRE-020, DEC-TURN-1): every load figure of a real ``agentx`` process.

Each figure comes with the baseline this script measures in the same run:

* prompts/s on the echo provider, with and without the durable transcript,
  against the bare decode-plus-encode loop for the same records, and with
  the PostgreSQL session store (DEC-STORE-1; a throwaway cluster, when
  PostgreSQL 15's server binaries are installed) against the file store
  (bench/common.py); next to them, the same loop's ratio of the bare
  three-actor pipeline (bench/actor_floor.py), the floor of the design;
* control round trips/s with 64 outstanding against the same bare loop for
  the ``mcp_status`` requests;
* lockstep control round trips/s, permission round trip and interrupt
  acknowledgement latencies against a pipe echo: a bare Python child that
  writes each line it reads straight back (the floor of any stdio round trip
  on this machine);
* upload MiB/s against the base64 + SHA-256 + Pillow floor (bench/upload_bench.py);
* peak RSS with 8 concurrent uploads and with 128 queued prompts against the
  same process's RSS once it has answered ``initialize``;
* spawn to the ``initialize`` response and to the first ``result``, against
  ``python -c "import pykka, ujson"``, and stdin EOF to exit against a bare
  Python that exits at EOF (bench/startup_bench.py).

``--chart PATH`` also draws the ratios as a PNG (needs the optional
``bench`` extra: ``pip install -e '.[bench]'``). ``--quick`` is CI's
completes-in-under-a-minute mode; its figures are not meant to be judged.

    python bench/load_report.py [--quick] [--chart bench/performance.png]
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import e2e_bench
import startup_bench
import upload_bench
from actor_floor import actor_floor_records_per_second
from common import baseline_records_per_second, ready, start_agentx, user_line

QUEUE_BOUND = 128  # WIRE-020: queued user records
QUEUED_PROMPT_BYTES = 65_536  # 128 x 64 KiB = 8 MiB, under the 16 MiB bound


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    name: str
    value: float
    unit: str
    baseline: float
    baseline_name: str
    higher_is_better: bool

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("nan")


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(p * len(ordered)), len(ordered) - 1)]


def pipe_echo_latencies(n: int) -> list[float]:
    """Round trips of one record-sized line through a bare Python echo child."""
    echo = (
        "import sys\n"
        "for line in sys.stdin.buffer:\n"
        " sys.stdout.buffer.write(line)\n"
        " sys.stdout.flush()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", echo], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    line = json.dumps({"type": "control_request", "request_id": "c", "request": {}}).encode()
    latencies = []
    for i in range(n + 1):
        sent = time.perf_counter()
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        proc.stdout.readline()
        if i:  # the first trip waits for the child's start-up
            latencies.append(time.perf_counter() - sent)
    proc.stdin.close()
    proc.wait(timeout=30)
    return latencies


def _latencies(name: str, seconds: list[float], echo: list[float]) -> tuple[Figure, ...]:
    """p50 and p99 in ms, each against the pipe echo's same percentile."""
    return tuple(
        Figure(
            name=f"{name} {label}",
            value=1000 * pick(seconds),
            unit="ms",
            baseline=1000 * pick(echo),
            baseline_name=f"pipe echo {label}",
            higher_is_better=False,
        )
        for label, pick in (
            ("p50", statistics.median),
            ("p99", lambda values: _percentile(values, 0.99)),
        )
    )


def _vm(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith(field))


def queued_prompts_rss(home: Path) -> tuple[int, int]:
    """(RSS kB after init, peak RSS kB) with 128 prompts queued behind a turn
    that waits; admission is observed through the replayed acknowledgements."""
    script = home / "wait.json"
    turns = [{"steps": [{"text": "busy"}, {"sleep_ms": 60000}]}]
    script.write_text(json.dumps({"version": 1, "turns": turns * (QUEUE_BOUND + 1)}))
    entry = {"id": "wait", "type": "scripted", "model": "m", "script": str(script)}
    (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [entry]}))
    proc = start_agentx(home, "--replay-user-messages", "--no-session-persistence")
    assert proc.stdin is not None and proc.stdout is not None
    ready(proc)
    idle = _vm(proc.pid, "VmRSS")
    proc.stdin.write(user_line(0))
    proc.stdin.flush()
    while b'"running"' not in proc.stdout.readline():
        pass
    text = "q" * QUEUED_PROMPT_BYTES
    for _ in range(QUEUE_BOUND):
        prompt = {
            "type": "user",
            "message": {"role": "user", "content": text},
            "parent_tool_use_id": None,
            "session_id": "",
            "uuid": str(uuid.uuid4()),
        }
        proc.stdin.write(json.dumps(prompt).encode() + b"\n")
    proc.stdin.flush()
    acknowledged = 0
    while acknowledged < QUEUE_BOUND:
        line = proc.stdout.readline()
        assert line, "agentx closed stdout"
        if b'"isReplay":true' in line:
            acknowledged += 1
        elif line.startswith(b'{"type":"result"'):
            raise SystemExit(f"a queued prompt was refused: {line[:200]!r}")
    peak = _vm(proc.pid, "VmHWM")
    proc.kill()
    proc.wait(timeout=30)
    (home / "auth.json").unlink()
    return idle, peak


def postgres_prompts(home: Path, n: int) -> float | None:
    """Seconds for the durable prompts on a throwaway PostgreSQL store, or
    ``None`` without the server binaries."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.store import pg_cluster  # noqa: PLC0415 - only when measured

    if not pg_cluster.available():
        return None
    cluster = pg_cluster.start_cluster()
    try:
        url = cluster.url(cluster.new_database())
        elapsed, _, _ = e2e_bench.prompts(home, n, "--session-store", url)
    finally:
        pg_cluster.remove(cluster)
    return elapsed


def measure(quick: bool) -> list[Figure]:
    n = 300 if quick else 5_000
    trips = 200 if quick else 5_000
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        echo = pipe_echo_latencies(trips)
        elapsed, records, lines = e2e_bench.prompts(home, n)
        stripped = [line.rstrip(b"\n") for line in lines]
        floor = baseline_records_per_second(stripped, records)
        lean, lean_records, _ = e2e_bench.prompts(home, n, "--no-session-persistence")
        on_postgres = postgres_prompts(home, n)
        actor_floor = actor_floor_records_per_second(stripped)
        control = e2e_bench.control_round_trips(home, trips, window=e2e_bench.WINDOW)
        requests = [e2e_bench._mcp_status(i).rstrip(b"\n") for i in range(trips)]
        control_floor = baseline_records_per_second(requests, trips)
        lockstep = e2e_bench.control_round_trips(home, trips)
        interrupts = e2e_bench.interrupt_latency(home, 20 if quick else 200)
        permissions = e2e_bench.permission_round_trips(home, 100 if quick else 1_000)
        idle, queued_peak = queued_prompts_rss(home)
        side = 800 if quick else 2600
        data = upload_bench.noise_png(side)
        chunk = upload_bench.CHUNK
        encoded = [base64.b64encode(data[i : i + chunk]) for i in range(0, len(data), chunk)]
        upload_floor = min(upload_bench.floor_seconds(data, encoded) for _ in range(3))
        prompt = str(uuid.uuid4())
        one, _ = upload_bench.run(
            home / "one", [upload_bench.lines_for("upl_a", data, encoded, prompt)]
        )
        eight = [upload_bench.lines_for(f"upl_{i}", data, encoded, prompt) for i in range(8)]
        _, upload_peak = upload_bench.run(home / "eight", eight)
        start = startup_bench.medians(3 if quick else 11, startup_bench.bench_env(home), str(home))
    mib = len(data) / 2**20
    per_prompt = records / n
    return [
        Figure(
            name="prompts/s (echo provider)",
            value=n / elapsed,
            unit="prompts/s",
            baseline=floor / per_prompt,
            baseline_name="bare decode+encode loop",
            higher_is_better=True,
        ),
        *(
            ()
            if on_postgres is None
            else (
                Figure(
                    name="  same, PostgreSQL session store",
                    value=n / on_postgres,
                    unit="prompts/s",
                    baseline=n / elapsed,
                    baseline_name="durable file store",
                    higher_is_better=True,
                ),
            )
        ),
        Figure(
            name="  same, --no-session-persistence",
            value=n / lean,
            unit="prompts/s",
            baseline=floor / (lean_records / n),
            baseline_name="bare decode+encode loop",
            higher_is_better=True,
        ),
        Figure(
            name="  three-actor floor, no host work",
            value=actor_floor / 2,
            unit="prompts/s",
            baseline=floor / per_prompt,
            baseline_name="bare decode+encode loop",
            higher_is_better=True,
        ),
        Figure(
            name="control round trips/s (64 outstanding)",
            value=control,
            unit="trips/s",
            baseline=control_floor,
            baseline_name="bare decode+encode loop",
            higher_is_better=True,
        ),
        Figure(
            name="control round trips/s (lockstep)",
            value=lockstep,
            unit="trips/s",
            baseline=1 / statistics.mean(echo),  # trips/s of the echo
            baseline_name="pipe echo round trips/s",
            higher_is_better=True,
        ),
        *_latencies("permission round trip", permissions, echo),
        *_latencies("interrupt ack (streaming turn)", interrupts, echo),
        Figure(
            name=f"upload ({mib:.1f} MiB PNG)",
            value=mib / one,
            unit="MiB/s",
            baseline=mib / upload_floor,
            baseline_name="base64+sha256+Pillow floor",
            higher_is_better=True,
        ),
        Figure(
            name="peak RSS, 8 concurrent uploads",
            value=upload_peak / 1024,
            unit="MiB",
            baseline=idle / 1024,
            baseline_name="RSS after initialize",
            higher_is_better=False,
        ),
        Figure(
            name="peak RSS, 128 queued prompts",
            value=queued_peak / 1024,
            unit="MiB",
            baseline=idle / 1024,
            baseline_name="RSS after initialize",
            higher_is_better=False,
        ),
        *(
            Figure(
                name=name,
                value=1000 * start[name],
                unit="ms",
                baseline=1000 * start[floor],
                baseline_name=floor,
                higher_is_better=False,
            )
            for name, floor in startup_bench.CHART
        ),
    ]


def table(figures: list[Figure]) -> str:
    rows = [f"{'figure':<38} {'value':>10} {'unit':<10} {'ratio':>7}  baseline"]
    for f in figures:
        rows.append(
            f"{f.name:<38} {f.value:>10,.2f} {f.unit:<10} {f.ratio:>7.2f}"
            f"  {f.baseline_name} {f.baseline:,.2f}"
        )
    return "\n".join(rows)


def chart(figures: list[Figure], path: Path) -> None:
    try:  # lazy: matplotlib is the optional ``bench`` extra
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        raise SystemExit("--chart needs matplotlib: pip install -e '.[bench]'") from None
    names = [f.name for f in figures][::-1]
    ratios = [f.ratio for f in figures][::-1]
    colors = ["tab:blue" if f.higher_is_better else "tab:orange" for f in figures][::-1]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(figures) + 1.5))
    bars = ax.barh(names, ratios, color=colors)
    for bar, f in zip(bars, figures[::-1], strict=True):
        ax.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f"  {f.value:,.1f} {f.unit}",
            va="center",
            fontsize=8,
        )
    ax.set_xscale("log")
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("ratio to the same-run baseline (blue: higher is better; orange: lower)")
    ax.set_title("agentx under load (bench/load_report.py)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--chart", type=Path)
    args = parser.parse_args()
    figures = measure(args.quick)
    print(table(figures))
    if args.chart is not None:
        chart(figures, args.chart)
        print(f"chart written to {args.chart}")


if __name__ == "__main__":
    main()
