"""Memory a streamed model text costs agentx: peak RSS growth over the streamed bytes.

A loopback Chat Completions server, in its own process, streams one answer
of M megabytes of text in deltas of D characters (generated as it writes, so
the server holds none of it). A real ``agentx`` on an ``openai`` profile
answers one prompt with it; the bench reads the process's resident set
(``VmRSS`` in ``/proc/PID/status``) once the host is running (after the
``initialize`` response) and its peak (``VmHWM``) once the turn's ``result``
is out, before the session ends. The figure is the same-run ratio

    (peak RSS - RSS before the turn) / streamed text bytes

so 1.0 would be one copy of the text. Runs with session persistence (the
text is also written to the transcript) and, with ``--partial``,
``--include-partial-messages``. Usage:
``python bench/stream_memory.py [--megabytes M] [--delta-chars D] [--partial] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ready, start_agentx

PROMPT = {
    "type": "user",
    "message": {"role": "user", "content": "stream please"},
    "parent_tool_use_id": None,
    "session_id": "",
}
KEY = "sk-bench-memory-key-0123456789"


def _event(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "bench",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def serve(total: int, piece: int) -> None:
    """The provider process: every POST gets ``total`` characters of text."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            text = ("lorem ipsum dolor sit amet " * (piece // 27 + 1))[:piece]
            batch: list[bytes] = [_event({"role": "assistant", "content": ""})]
            sent = 0
            while sent < total:
                batch.append(_event({"content": text}))
                sent += piece
                if len(batch) >= 256:
                    self._chunk(b"".join(batch))
                    batch = []
            batch.append(_event({}, "stop"))
            batch.append(b"data: [DONE]\n\n")
            self._chunk(b"".join(batch))
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    print(f"http://127.0.0.1:{httpd.server_address[1]}", flush=True)
    sys.stdin.read()  # until the bench closes our stdin
    httpd.shutdown()


def _status(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of ``pid`` in bytes."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found


def measure(home: Path, partial: bool) -> tuple[int, int]:
    """(RSS before the turn, peak RSS) of one agentx turn."""
    extra = ("--include-partial-messages",) if partial else ()
    proc = start_agentx(home, *extra)
    assert proc.stdin is not None and proc.stdout is not None
    ready(proc)
    before = _status(proc.pid)["VmRSS"]
    proc.stdin.write(json.dumps(PROMPT).encode() + b"\n")
    proc.stdin.flush()
    for line in proc.stdout:
        if line.startswith(b'{"type":"result"'):
            if b'"subtype":"success"' not in line:
                raise SystemExit(f"agentx turn failed: {line[:300]!r}")
            break
    peak = _status(proc.pid)["VmHWM"]
    proc.stdin.close()
    proc.stdout.read()
    proc.wait(timeout=120)
    return before, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=100)
    parser.add_argument("--delta-chars", type=int, default=32)
    parser.add_argument("--partial", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    total = (8 if args.quick else args.megabytes) * 1024 * 1024
    if args.serve:
        serve(total, args.delta_chars)
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--delta-chars", str(args.delta_chars)]
        + (["--quick"] if args.quick else ["--megabytes", str(args.megabytes)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    url = server.stdout.readline().strip() + "/v1"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            entry = {
                "id": "bench",
                "type": "openai",
                "model": "bench",
                "endpoint": url,
                "api_key": KEY,
            }
            (home / "auth.json").write_text(json.dumps({"version": 2, "providers": [entry]}))
            before, peak = measure(home, args.partial)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    growth = peak - before
    text = -(-total // args.delta_chars) * args.delta_chars  # what the server sent
    mode = "with --include-partial-messages" if args.partial else "without partial messages"
    print(f"streamed text: {text / 2**20:.1f} MiB in deltas of {args.delta_chars} chars, {mode}")
    print(f"RSS before the turn: {before / 2**20:8.1f} MiB")
    print(f"peak RSS:            {peak / 2**20:8.1f} MiB")
    print(f"growth / text bytes: {growth / text:8.2f}  (target about 2)")


if __name__ == "__main__":
    main()
