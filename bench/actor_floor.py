"""The floor of the design agentx is bound to (DESIGN "The actors"): how fast three
pykka actors can move the bench's prompts with no host work at all.

A reader actor decodes each line as the baseline does (``json`` with a
duplicate-rejecting hook), a turn actor builds the two records the echo
provider answers with (``assistant`` and ``result``, the same members agentx
writes), and a writer actor ``ujson``-encodes them and writes to /dev/null,
one write per idle inbox. Inboxes are ``SimpleQueue`` s, as in agentx. There is
no process, no pipe, no validation, no history, no accounting and no output
guard: whatever agentx does beyond this costs time on top of it. Printed with
its ratio to the same-run baseline loop, so the end-to-end target (25% of that
loop) can be read against what the actor design alone allows.

    python bench/actor_floor.py [--prompts N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

import pykka
import ujson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import _pairs, baseline_records_per_second, report, user_line

BATCH = 512  # lines per reader message, like a 64 KiB stdin read

_IDS = random.Random(0)


def _uuid() -> str:
    h = f"{_IDS.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class _Actor(pykka.ThreadingActor):
    use_daemon_thread = True

    @staticmethod
    def _create_actor_inbox() -> queue.SimpleQueue[Any]:  # type: ignore[override]
        return queue.SimpleQueue()


class _Writer(_Actor):
    def __init__(self, sink: BinaryIO, results: int, done: threading.Event) -> None:
        super().__init__()
        self._sink = sink
        self._left = results
        self._done = done
        self._frames: list[bytes] = []

    def on_receive(self, message: Any) -> None:
        for record in message:
            self._frames.append(ujson.dumps(record, ensure_ascii=False).encode() + b"\n")
            self._left -= record["type"] == "result"
        if self.actor_inbox.empty():
            self._sink.write(b"".join(self._frames))
            self._frames.clear()
        if not self._left:
            self._done.set()


class _Turn(_Actor):
    def __init__(self, writer: pykka.ActorRef[_Writer]) -> None:
        super().__init__()
        self._writer = writer

    def on_receive(self, message: Any) -> None:
        text = message["message"]["content"]
        usage = {
            "input_tokens": 3,
            "output_tokens": 3,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        api_message = {
            "id": f"msg_{_uuid().replace('-', '')[:24]}",
            "type": "message",
            "role": "assistant",
            "model": "local-echo",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        assistant = {
            "type": "assistant",
            "message": api_message,
            "parent_tool_use_id": None,
            "uuid": _uuid(),
            "session_id": "floor",
        }
        self._writer.tell((assistant,))
        model_usage = {
            "inputTokens": 3,
            "outputTokens": 3,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 0,
            "costUSD": 0.0,
        }
        result = {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 0,
            "duration_api_ms": 0,
            "num_turns": 1,
            "result": text,
            "stop_reason": "end_turn",
            "total_cost_usd": 0.0,
            "usage": usage,
            "modelUsage": {"local-echo": model_usage},
            "permission_denials": [],
            "uuid": _uuid(),
            "session_id": "floor",
        }
        self._writer.tell((result,))


class _Reader(_Actor):
    def __init__(self, turn: pykka.ActorRef[_Turn]) -> None:
        super().__init__()
        self._turn = turn

    def on_receive(self, message: Any) -> None:
        for line in message:
            self._turn.tell(json.loads(line, object_pairs_hook=_pairs))


def actor_floor_records_per_second(lines: Sequence[bytes]) -> float:
    """Records/s of the three-actor pipeline over ``lines`` (two records each)."""
    done = threading.Event()
    with open(os.devnull, "wb") as sink:
        writer = _Writer.start(sink, len(lines), done)
        turn = _Turn.start(writer)
        reader = _Reader.start(turn)
        try:
            start = time.perf_counter()
            for at in range(0, len(lines), BATCH):
                reader.tell(lines[at : at + BATCH])
            if not done.wait(120):
                raise SystemExit("the actor floor pipeline did not finish")
            elapsed = time.perf_counter() - start
        finally:
            for ref in (reader, turn, writer):
                ref.stop()
    return 2 * len(lines) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=30_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 2_000 if args.quick else args.prompts
    lines = [user_line(i).rstrip(b"\n") for i in range(n)]
    floor = actor_floor_records_per_second(lines)
    baseline = baseline_records_per_second(lines, 2 * n)
    print(report("three-actor floor records/s", floor, baseline, "records/s"))


if __name__ == "__main__":
    main()
