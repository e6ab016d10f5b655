"""Provider client overhead: agentx's OpenAI stream vs a bare httpx read.

Serves one Chat Completions stream of N text deltas from the loopback
provider server (``tests/fakes``) and times, in the same run:

* baseline: httpx POST + ``iter_bytes`` of the same response (no parsing);
* agentx:   ``OpenAIClient.stream`` (SSE decode, JSON parse, RawEvent freeze,
  TextDelta/Usage/Stop items).

Prints the median of each and their ratio. Usage:
``python bench/provider_overhead.py [--deltas N] [--runs R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentx.providers.base import ModelRequest, Stop
from agentx.providers.openai import OpenAIClient
from tests.fakes.cancel import EventCancelToken
from tests.fakes.provider_server import ProviderServer, Reply, openai_text_stream

REQUEST = ModelRequest(model="bench", system="", messages=())


def median_seconds(run: Callable[[], None], runs: int) -> float:
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        timings.append(time.perf_counter() - start)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    chunks = openai_text_stream(*(f"token{i} " for i in range(args.deltas)))
    with ProviderServer([Reply(chunks=chunks)]) as server:
        url = server.url + "/v1"
        client = OpenAIClient(url, "bench-key", {}, "bench")
        raw = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))

        def baseline() -> None:
            with raw.stream("POST", url + "/chat/completions", json={}) as response:
                for _ in response.iter_bytes():
                    pass

        def agentx() -> None:
            items = list(client.stream(REQUEST, EventCancelToken()))
            if items[-1] != Stop(stop_reason="end_turn"):
                raise SystemExit(f"unexpected end of stream: {items[-1]!r}")

        base = median_seconds(baseline, args.runs)
        ours = median_seconds(agentx, args.runs)
        client.close()
        raw.close()
    print(f"deltas={args.deltas} runs={args.runs}")
    print(f"baseline httpx read : {base * 1000:9.2f} ms")
    print(f"agentx OpenAIClient : {ours * 1000:9.2f} ms")
    print(f"ratio agentx/base   : {ours / base:9.2f}x")
    print(f"per delta overhead  : {(ours - base) / args.deltas * 1e6:9.2f} us")


if __name__ == "__main__":
    main()
