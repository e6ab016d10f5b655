"""Session resume bench (DEC-STORE-1, WIRE-005): ``SessionStore.read`` of a transcript.

For 1k, 10k and 100k entries of realistic records (user prompts, assistant
text and tool use, tool results, attachment manifests, compaction
boundaries), time ``read()`` (best of several runs) and print the total ms,
the per-record µs and the ratio to the same run's baseline: read the same
file, split it on ``\\n`` and ``json.loads`` each line. The target is a
10,000-record resume under 1 s with per-record cost flat across sizes.

When PostgreSQL 15's server binaries are installed, the same transcripts are
also written to a throwaway cluster's session store (DEC-STORE-1) and read
back in the same run: the ``pg ms`` column and its ratio to the file store.

    python bench/resume_bench.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentx.sessions.store.base import SessionStore as AnyStore
from agentx.sessions.store.files import TRANSCRIPT_FILE_NAME, SessionStore
from agentx.sessions.store.header import SessionHeader
from agentx.sessions.store.select import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.store import pg_cluster

SESSION_ID = "0b7c3e52-6f0a-4d0e-9a51-3c2f8e1d4a77"
BATCH = 1_000
TARGET_MS = 1_000.0


def realistic(i: int) -> dict[str, Any]:
    """Entry ``i`` of a conversation that cycles through the record kinds."""
    kind = i % 8
    if kind == 0:
        return {
            "type": "user",
            "uuid": f"00000000-0000-4000-8000-{i:012d}",
            "message": {"role": "user", "content": f"Please look at src/module_{i}.py and fix it."},
        }
    if kind in (1, 4):
        return {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "model": "gpt-5.6-sol",
                "content": [
                    {"type": "text", "text": "I will read the file first. " * 4},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "Read",
                        "input": {"file_path": f"/work/src/module_{i}.py", "limit": 200},
                    },
                ],
                "usage": {"input_tokens": 1200 + i, "output_tokens": 87},
            },
        }
    if kind in (2, 5):
        return {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{i - 1}",
                        "content": "def f(x):\n    return x + 1\n" * 12,
                        "is_error": False,
                    }
                ],
            },
        }
    if kind == 3:
        return {
            "type": "user",
            "uuid": f"00000000-0000-4000-8000-{i:012d}",
            "message": {
                "role": "user",
                "content_version": 1,
                "content": [
                    {"type": "text", "text": "What does this diagram show?"},
                    {
                        "type": "attachment_ref",
                        "attachment_id": f"att_{i}",
                        "kind": "image",
                        "name": "diagram.png",
                        "mime_type": "image/png",
                        "size_bytes": 48213,
                        "sha256": "ab" * 32,
                        "storage_id": "blob_sha256_" + "ab" * 32,
                    },
                ],
            },
        }
    if kind == 6:
        return {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "model": "gpt-5.6-sol",
                "content": [{"type": "text", "text": "The fix is done; tests pass. " * 6}],
                "usage": {"input_tokens": 2400 + i, "output_tokens": 160},
            },
        }
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "compact_metadata": {"trigger": "auto", "pre_tokens": 180_000},
        "summary": "The user asked for a series of fixes in src/; all were applied.",
    }


def build(store: AnyStore, session_id: str, records: int) -> None:
    store.create(
        SessionHeader(
            session_id=session_id,
            provider_id="sol-east",
            provider_type="azure_openai",
            model="gpt-5.6-sol",
            route_binding="0" * 64,
            created_at=datetime.now(UTC),
        )
    )
    for start in range(0, records, BATCH):
        store.append(session_id, [realistic(i) for i in range(start, min(start + BATCH, records))])


def best_seconds(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def baseline(path: Path) -> list[Any]:
    """Plain per-line ``json.loads`` of the same file."""
    lines = path.read_bytes().split(b"\n")
    lines.pop()
    return [json.loads(line) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1k and 10k only, one run each")
    args = parser.parse_args()
    sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    repeats = 1 if args.quick else 5

    postgres = pg_cluster.start_cluster() if pg_cluster.available() else None
    try:
        run(sizes, repeats, postgres)
    finally:
        if postgres is not None:
            pg_cluster.remove(postgres)


def run(sizes: tuple[int, ...], repeats: int, postgres: pg_cluster.Cluster | None) -> None:
    pg_store = None
    if postgres is None:
        print("PostgreSQL server binaries absent: no pg column")
    else:
        pg_store = open_store(postgres.url(postgres.new_database()), Path("/nonexistent"))
    print(
        f"{'records':>8} {'read ms':>10} {'µs/record':>10} {'baseline ms':>12} "
        f"{'µs/record':>10} {'ratio':>6} {'MiB':>7} {'pg ms':>9} {'pg/file':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = SessionStore(Path(tmp))
        for n, records in enumerate(sizes):
            session_id = SESSION_ID[:-1] + str(n)
            build(store, session_id, records)
            assert len(store.read(session_id).entries) == records
            path = Path(tmp) / session_id / TRANSCRIPT_FILE_NAME
            agentx = best_seconds(lambda sid=session_id: store.read(sid), repeats)
            plain = best_seconds(lambda p=path: baseline(p), repeats)
            pg = float("nan")
            if pg_store is not None:
                build(pg_store, session_id, records)
                assert pg_store.read(session_id).entries == store.read(session_id).entries
                pg = best_seconds(lambda sid=session_id: pg_store.read(sid), repeats)
            print(
                f"{records:>8,} {agentx * 1e3:>10.1f} {agentx / records * 1e6:>10.2f} "
                f"{plain * 1e3:>12.1f} {plain / records * 1e6:>10.2f} {agentx / plain:>6.2f} "
                f"{path.stat().st_size / 2**20:>7.1f} {pg * 1e3:>9.1f} {pg / agentx:>8.2f}"
            )
            if records == 10_000:
                verdict = "ok" if agentx * 1e3 < TARGET_MS else "OVER TARGET"
                print(f"10k resume {agentx * 1e3:.1f} ms, target {TARGET_MS:.0f} ms: {verdict}")
                if pg_store is not None:
                    verdict = "ok" if pg * 1e3 < TARGET_MS else "OVER TARGET"
                    print(f"10k PostgreSQL resume {pg * 1e3:.1f} ms: {verdict}")
    if pg_store is not None:
        pg_store.close()


if __name__ == "__main__":
    main()
