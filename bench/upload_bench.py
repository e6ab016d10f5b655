"""Attachment import bench (WIRE-018, MOD-084).

1. Import throughput for one ~20 MiB PNG (chunks in, commit acknowledged)
   against the same run's floor: base64 decode plus SHA-256 plus one Pillow
   decode and re-encode of that image in a bare loop.
2. Peak RSS of the agentx process (VmHWM) during 8 concurrent ~20 MiB uploads.

    python bench/upload_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ready, start_agentx

CHUNK = 262_144


def noise_png(side: int) -> bytes:
    """Incompressible pixels, so the PNG is about side*side*3 bytes."""
    image = Image.frombytes("RGB", (side, side), os.urandom(side * side * 3))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def floor_seconds(data: bytes, encoded_chunks: list[bytes]) -> float:
    start = time.perf_counter()
    digest = hashlib.sha256()
    for chunk in encoded_chunks:
        digest.update(base64.b64decode(chunk, validate=True))
    image = Image.open(io.BytesIO(data))
    image.load()
    out = io.BytesIO()
    image.save(out, format="PNG")
    digest.hexdigest()
    return time.perf_counter() - start


def lines_for(upload_id: str, data: bytes, encoded: list[bytes], prompt: str) -> list[bytes]:
    common = {"type": "attachment_import", "version": 1, "upload_id": upload_id}
    begin = {
        **common,
        "operation": "begin",
        "prompt_uuid": prompt,
        "attachment_id": "att_" + upload_id[4:],
        "name": f"{upload_id}.png",
        "size_bytes": len(data),
        "mime_type": "image/png",
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    out = [json.dumps(begin).encode()]
    for seq, chunk in enumerate(encoded):
        out.append(
            json.dumps(
                {**common, "operation": "chunk", "sequence": seq, "data": chunk.decode()}
            ).encode()
        )
    out.append(json.dumps({**common, "operation": "commit"}).encode())
    return out


def run(home: Path, uploads: list[list[bytes]]) -> tuple[float, int]:
    """Interleave the uploads' lines; returns (seconds to last commit, VmHWM kB)."""
    home.mkdir(parents=True, exist_ok=True)
    proc = start_agentx(home)
    assert proc.stdin is not None and proc.stdout is not None
    ready(proc)
    start = time.perf_counter()
    longest = max(len(u) for u in uploads)
    for i in range(longest):
        for upload in uploads:
            if i < len(upload):
                proc.stdin.write(upload[i] + b"\n")
    proc.stdin.flush()
    committed = 0
    while committed < len(uploads):
        line = proc.stdout.readline()
        assert line, "agentx closed stdout"
        record = json.loads(line)
        if record.get("type") == "attachment_import_result" and record["terminal"]:
            assert record["status"] == "committed", record
            committed += 1
    elapsed = time.perf_counter() - start
    status = Path(f"/proc/{proc.pid}/status").read_text()
    peak = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
    proc.stdin.close()
    proc.wait(timeout=120)
    return elapsed, peak


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    side = 800 if args.quick else 2600  # 2600^2*3 = 20.3 MB, under the 20 MiB item limit
    data = noise_png(side)
    encoded = [base64.b64encode(data[i : i + CHUNK]) for i in range(0, len(data), CHUNK)]
    mib = len(data) / 2**20
    floor = min(floor_seconds(data, encoded) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        prompt = str(uuid.uuid4())
        one, _ = run(home / "a", [lines_for("upl_one", data, encoded, prompt)])
        print(
            f"import {mib:.1f} MiB PNG   {mib / one:7.1f} MiB/s   floor {mib / floor:7.1f} MiB/s"
            f"   ratio {floor / one:4.2f} (target >= 0.5)"
        )
        eight = [lines_for(f"upl_{i}", data, encoded, prompt) for i in range(8)]
        seconds, peak = run(home / "b", eight)
        print(
            f"8 concurrent {mib:.1f} MiB uploads: {seconds:.2f} s, peak RSS {peak / 1024:.0f} MiB"
            " (target < 400 MiB)"
        )


if __name__ == "__main__":
    main()
