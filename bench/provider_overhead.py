"""Provider client overhead (DEC-AUTH-2, DEC-AUTH-6): agentx's stream on stdout vs bare httpx.

The loopback provider server (``tests/fakes``) runs in its own process and
streams one Chat Completions response of N text deltas as fast as it can (one
chunked write per SSE event); in the bench's own process it would share a GIL
with whichever client it feeds and pace the two differently. In the same run,
interleaved, this bench times:

* baseline: a bare httpx client reading that stream line by line, from the
  first SSE line to the last;
* agentx:   a real ``agentx`` process on an ``openai`` profile pointed at the
  server, with ``--include-partial-messages``, from the first ``stream_event``
  record on its stdout to the last (every record encoded, credential-checked
  and written, as a host sees it).

It also times the client alone in-process (``OpenAIClient.stream``: SSE
decode, strict JSON decode, stream items with a ``RawEvent`` per chunk as under
``--include-partial-messages``), and two floors no provider client in this
design goes below: the same httpx client reading the raw chunks (no line
splitting), and the strict decode of the same events (WIRE-014, frozen values)
with no IO at all. Medians of R runs, each with its ratio to the baseline. Usage:
``python bench/provider_overhead.py [--deltas N] [--runs R] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import start_agentx

from agentx.messages.strict_json import loads_strict
from agentx.providers.base import ModelRequest, Stop
from agentx.providers.openai import OpenAIClient
from tests.fakes.cancel import EventCancelToken
from tests.fakes.provider_server import ProviderServer, Reply, openai_text_stream

REQUEST = ModelRequest(model="bench", system="", messages=(), stream_events=True)
KEY = "sk-bench-provider-key-0123456789"
PROMPT = {
    "type": "user",
    "message": {"role": "user", "content": "stream please"},
    "parent_tool_use_id": None,
    "session_id": "",
}


def bare_httpx(client: httpx.Client, url: str) -> float:
    """First to last SSE line read by a bare httpx client."""
    first = last = 0.0
    with client.stream("POST", url + "/chat/completions", json={}) as response:
        for line in response.iter_lines():
            if line:
                last = time.perf_counter()
                first = first or last
    return last - first


def raw_chunks(client: httpx.Client, url: str) -> float:
    """First to last body chunk read by the same bare client (transport floor)."""
    first = last = 0.0
    with client.stream("POST", url + "/chat/completions", json={}) as response:
        for _chunk in response.iter_raw():
            last = time.perf_counter()
            first = first or last
    return last - first


def strict_decode(events: tuple[str, ...]) -> float:
    """The strict JSON decode of every event alone, no IO (decode floor)."""
    start = time.perf_counter()
    for event in events:
        loads_strict(event)
    return time.perf_counter() - start


def agentx_stdout(home: Path) -> float:
    """First to last ``stream_event`` line on a real agentx process's stdout."""
    proc = start_agentx(home, "--include-partial-messages", "--no-session-persistence")
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(PROMPT).encode() + b"\n")
    proc.stdin.close()
    first = last = 0.0
    for line in proc.stdout:
        if line.startswith(b'{"type":"stream_event"'):
            last = time.perf_counter()
            first = first or last
        elif line.startswith(b'{"type":"result"') and b'"is_error":false' not in line:
            raise SystemExit(f"agentx turn failed: {line[:300]!r}")
    proc.wait(timeout=60)
    return last - first


def client_alone(client: OpenAIClient) -> float:
    start = time.perf_counter()
    items = list(client.stream(REQUEST, EventCancelToken()))
    if items[-1] != Stop(stop_reason="end_turn"):
        raise SystemExit(f"unexpected end of stream: {items[-1]!r}")
    return time.perf_counter() - start


def serve(deltas: int, replies: int) -> None:
    """The loopback provider in its own process: it streams as fast as it
    can, not slowed by whichever client the bench process runs."""
    chunks = openai_text_stream(*(f"token{i} " for i in range(deltas)))
    with ProviderServer([Reply(chunks=chunks)] * replies) as server:
        print(server.url, flush=True)
        sys.stdin.read()  # until the bench closes our stdin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--serve", type=int, metavar="REPLIES", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.deltas, args.serve)
        return
    runs = 3 if args.quick else args.runs
    server = subprocess.Popen(
        [sys.executable, __file__, "--deltas", str(args.deltas), "--serve", str(4 * runs)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    url = server.stdout.readline().strip() + "/v1"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        entry = {"id": "bench", "type": "openai", "model": "bench", "endpoint": url, "api_key": KEY}
        (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [entry]}))
        raw = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
        client = OpenAIClient(url, KEY, {}, "bench")
        events = tuple(
            chunk.decode().removeprefix("data: ").rstrip("\n")
            for chunk in openai_text_stream(*(f"token{i} " for i in range(args.deltas)))[:-1]
        )
        timings: dict[str, list[float]] = {k: [] for k in ("base", "ours", "alone", "raw", "json")}
        for _ in range(runs):  # interleaved, so drift hits all alike
            timings["base"].append(bare_httpx(raw, url))
            timings["ours"].append(agentx_stdout(home))
            timings["alone"].append(client_alone(client))
            timings["raw"].append(raw_chunks(raw, url))
            timings["json"].append(strict_decode(events))
        client.close()
        raw.close()
    server.stdin.close()
    server.wait(timeout=30)
    base, ours, alone, floor, decode = (
        statistics.median(timings[k]) for k in ("base", "ours", "alone", "raw", "json")
    )
    print(f"deltas={args.deltas} runs={runs}")
    print(f"bare httpx, first to last SSE line      : {base * 1000:8.2f} ms")
    print(
        f"agentx, first to last stream_event      : {ours * 1000:8.2f} ms"
        f"  ratio {ours / base:5.2f} (target <= 1.5)"
    )
    print(
        f"OpenAIClient.stream alone, in-process   : {alone * 1000:8.2f} ms"
        f"  ratio {alone / base:5.2f}"
    )
    for label, value in (
        ("floor: bare httpx, raw chunks", floor),
        ("floor: strict JSON decode alone, no IO", decode),
    ):
        print(f"{label:40s}: {value * 1000:8.2f} ms  ratio {value / base:5.2f}")


if __name__ == "__main__":
    main()
