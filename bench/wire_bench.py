"""Pure-layer bench (WIRE-001, WIRE-021, WIRE-013): framing + closed decoding + guarded encoding.

For N user records: frame the byte stream in 64 KiB chunks, decode each line
into its frozen record, build the assistant record that echoes it and
encode each through the credential-checked guard. Prints records/s and the
ratio to the same-run baseline loop (see bench/common.py).

The machine is shared and noisy, so each figure is measured in ``--rounds``
interleaved rounds (agentx, then the baseline for the same records) and the
round with the median ratio is printed.

    python bench/wire_bench.py [--records N] [--rounds R] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import baseline_records_per_second, report, user_line

from agentx.messages import outbound
from agentx.messages.decode import decode_line
from agentx.messages.framing import LineFramer
from agentx.messages.guard import CredentialValidator, OutputGuard
from agentx.messages.inbound_user import TextPart, UserRecord

CHUNK = 65536


def agentx_pure(stream: bytes, *, with_credentials: bool) -> tuple[int, float]:
    written = 0

    def sink(frame: bytes) -> None:
        nonlocal written
        written += 1

    guard = OutputGuard(sink, state_lock=threading.Lock(), write_lock=threading.RLock())
    literals = (
        ["sk-bench-credential-0123456789", "https://bench.invalid"] if with_credentials else []
    )
    guard.install_validator(CredentialValidator(literals))
    framer = LineFramer()
    start = time.perf_counter()
    for offset in range(0, len(stream), CHUNK):
        for line in framer.feed(stream[offset : offset + CHUNK]):
            record = decode_line(line)
            assert isinstance(record, UserRecord)
            text = "".join(p.text for p in record.content if isinstance(p, TextPart))
            message = outbound.api_assistant_message(
                message_id="msg_bench",
                model="local-echo",
                content=({"type": "text", "text": text},),
                stop_reason="end_turn",
                usage={"input_tokens": 1, "output_tokens": 1},
            )
            guard.write_record(
                outbound.assistant(message, parent_tool_use_id=None, session_id="s", uuid="u")
            )
    return written, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 5_000 if args.quick else args.records
    rounds = 1 if args.quick else args.rounds
    lines = [user_line(i) for i in range(n)]
    stream = b"".join(lines)
    stripped = [line.rstrip(b"\n") for line in lines]
    for credentials in (False, True):
        measured = []
        for _ in range(rounds):
            written, elapsed = agentx_pure(stream, with_credentials=credentials)
            # One pass a side, interleaved: the median-ratio round is fair.
            baseline = baseline_records_per_second(stripped, written, repeat=1)
            measured.append((written / elapsed, baseline))
        measured.sort(key=lambda pair: pair[0] / pair[1])
        value, baseline = measured[len(measured) // 2]
        label = "pure decode+encode" + (" (guarded)" if credentials else "")
        print(report(label, value, baseline, "records/s"))


if __name__ == "__main__":
    main()
