"""UploadManagerActor with real temp dirs, real Pillow/pypdf bytes and a real
blob store; every call is synchronised on its future (no sleeps)."""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from PIL.PngImagePlugin import PngInfo
from pypdf import PdfWriter

from agentx.actors.upload_manager import UploadManagerActor
from agentx.media.blobs import BlobNotFound, BlobStore
from agentx.messages.inbound_import import (
    AttachmentAbort,
    AttachmentBegin,
    AttachmentChunk,
    AttachmentCommit,
)
from agentx.messages.inbound_user import AttachmentRef

PROMPT = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"
CHUNK = 262_144


class CollectingSink:
    """The writer stand-in: records every batch the actor emits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.batches: list[tuple[Mapping[str, Any], ...]] = []

    def __call__(self, records: tuple[Mapping[str, Any], ...]) -> None:
        with self._lock:
            self.batches.append(records)

    @property
    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(json.dumps(r)) for batch in self.batches for r in batch]

    def terminals(self) -> list[tuple[str, str, str | None]]:
        return [
            (r["upload_id"], r["status"], r.get("reason")) for r in self.records if r["terminal"]
        ]


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Harness:
    proxy: Any
    sink: CollectingSink
    clock: Clock
    temp_dir: Path
    store_root: Path
    ops: Iterator[int] = field(default_factory=itertools.count)

    def work_files(self) -> list[Path]:
        return [p for d in self.temp_dir.glob(f"upl-{os.getpid()}-*") for p in d.iterdir()]

    def begin(self, n: int, payload: bytes, mime: str = "image/png", **overrides: Any) -> None:
        fields: dict[str, Any] = {
            "line": next(self.ops),
            "upload_id": f"upl_{n}",
            "attachment_id": f"att_{n}",
            "prompt_uuid": PROMPT,
            "name": f"file{n}",
            "size_bytes": len(payload),
            "mime_type": mime,
            "sha256": hashlib.sha256(payload).hexdigest(),
        }
        fields.update(overrides)
        self.proxy.handle(AttachmentBegin(**fields)).get()

    def chunks(self, n: int, payload: bytes) -> None:
        for seq, start in enumerate(range(0, len(payload), CHUNK)):
            data = base64.b64encode(payload[start : start + CHUNK]).decode()
            op = AttachmentChunk(line=next(self.ops), upload_id=f"upl_{n}", sequence=seq, data=data)
            self.proxy.handle(op).get()

    def commit(self, n: int) -> None:
        self.proxy.handle(AttachmentCommit(line=next(self.ops), upload_id=f"upl_{n}")).get()

    def upload(self, n: int, payload: bytes, mime: str = "image/png") -> None:
        self.begin(n, payload, mime)
        self.chunks(n, payload)
        self.commit(n)


@pytest.fixture
def start(tmp_path: Path) -> Callable[..., Harness]:
    def _start(*, capability_enabled: bool = True, max_bytes: int = 512 * 1024 * 1024) -> Harness:
        sink, clock = CollectingSink(), Clock()
        counter = itertools.count()
        temp_dir = tmp_path / "blobs" / "tmp"
        ref = UploadManagerActor.start(
            sink=sink,
            store=BlobStore(tmp_path / "blobs", max_bytes=max_bytes),
            temp_dir=temp_dir,
            session_id=lambda: "sess-1",
            new_uuid=lambda: f"uuid-{next(counter)}",
            clock=clock,
            capability_enabled=capability_enabled,
        )
        return Harness(ref.proxy(), sink, clock, temp_dir, tmp_path / "blobs")

    return _start


def png_bytes(seed: int = 0, size: tuple[int, int] = (600, 400)) -> bytes:
    """A real PNG with a text chunk; noise makes it span several chunks."""
    image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
    out = io.BytesIO()
    meta = PngInfo()
    meta.add_text("Comment", f"CORPUS-{seed}")
    image.save(out, format="PNG", pnginfo=meta)
    return out.getvalue()


def pdf_bytes(pages: int = 2) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def ref_from(manifest: Mapping[str, Any]) -> AttachmentRef:
    return AttachmentRef(**{k: v for k, v in manifest.items() if k != "type"})


def test_two_correlated_uploads_commit_and_admit_one_prompt(
    start: Callable[..., Harness], tmp_path: Path
) -> None:
    """Scenario 22 up to admission: one terminal per upload, the committed
    manifests admit the prompt, blobs read back, no bytes or paths in records."""
    h = start()
    image, document = png_bytes(), pdf_bytes()
    assert len(image) > 2 * CHUNK, "several chunks"
    h.upload(1, image)
    h.upload(2, document, "application/pdf")
    records = h.sink.records
    assert [(r["upload_id"], r["status"]) for r in records] == [
        ("upl_1", "accepted"),
        ("upl_1", "committed"),
        ("upl_2", "accepted"),
        ("upl_2", "committed"),
    ]
    assert all(r["session_id"] == "sess-1" for r in records)
    assert len({r["uuid"] for r in records}) == 4
    png_manifest, pdf_manifest = (r["attachment"] for r in records if r["terminal"])
    stored_png = h.proxy.read_blob(png_manifest["storage_id"]).get()
    assert hashlib.sha256(stored_png).hexdigest() == png_manifest["sha256"]
    assert png_manifest["size_bytes"] == len(stored_png)
    assert b"CORPUS" not in stored_png, "the text chunk was dropped"
    assert h.proxy.read_blob(pdf_manifest["storage_id"]).get() == document
    assert pdf_manifest["sha256"] == hashlib.sha256(document).hexdigest()
    refs = (ref_from(png_manifest), ref_from(pdf_manifest))
    assert h.proxy.admit_refs(PROMPT, refs).get() is None
    assert h.proxy.admit_refs(PROMPT, refs[:1]).get() == "attachment_omitted"
    dumped = json.dumps(records)
    assert str(tmp_path) not in dumped
    assert base64.b64encode(image[:30]).decode()[:20] not in dumped
    assert h.work_files() == []


def test_eight_concurrent_uploads_then_the_ninth_is_rejected(start: Callable[..., Harness]) -> None:
    h = start()
    payload = png_bytes(size=(20, 20))
    for n in range(8):
        h.begin(n, payload)
        h.chunks(n, payload[:100])
    assert len(h.work_files()) == 8
    h.begin(8, payload)
    ninth = h.sink.records[-1]
    assert (ninth["type"], ninth["reason"], ninth["terminal"]) == (
        "attachment_import_rejected",
        "too_many_active_uploads",
        False,
    )
    h.proxy.on_eof().get()
    assert sorted(h.sink.terminals()) == [(f"upl_{n}", "aborted", "input_closed") for n in range(8)]
    assert h.work_files() == []
    h.proxy.on_eof().get()
    assert len(h.sink.terminals()) == 8, "settled exactly once"


def test_timeout_with_an_injected_clock(start: Callable[..., Harness]) -> None:
    h = start()
    payload = png_bytes(size=(20, 20))
    h.begin(1, payload)
    h.chunks(1, payload[:50])
    h.clock.now += 120.0
    h.proxy.tick().get()
    assert h.sink.terminals() == []
    assert len(h.work_files()) == 1
    h.clock.now += 0.5
    h.proxy.tick().get()
    assert h.sink.terminals() == [("upl_1", "expired", "upload_timeout")]
    assert h.work_files() == []


def _noncanonical(h: Harness, payload: bytes) -> None:
    h.begin(1, payload)
    h.proxy.handle(AttachmentChunk(line=1, upload_id="upl_1", sequence=0, data="QQ")).get()


def _out_of_order(h: Harness, payload: bytes) -> None:
    h.begin(1, payload)
    data = base64.b64encode(payload[:10]).decode()
    h.proxy.handle(AttachmentChunk(line=1, upload_id="upl_1", sequence=0, data=data)).get()
    h.proxy.handle(AttachmentChunk(line=2, upload_id="upl_1", sequence=2, data=data)).get()


def _digest_mismatch(h: Harness, payload: bytes) -> None:
    h.begin(1, payload, sha256="0" * 64)
    h.chunks(1, payload)
    h.commit(1)


def _size_mismatch(h: Harness, payload: bytes) -> None:
    h.begin(1, payload, size_bytes=len(payload) + 1)
    h.chunks(1, payload)
    h.commit(1)


def _mime_mismatch(h: Harness, payload: bytes) -> None:
    document = pdf_bytes()
    h.upload(1, document, "image/png")


def _bad_image(h: Harness, payload: bytes) -> None:
    broken = payload[: len(payload) // 2]
    h.upload(1, broken)


def _abort(h: Harness, payload: bytes) -> None:
    h.begin(1, payload)
    h.chunks(1, payload[:10])
    h.proxy.handle(AttachmentAbort(line=9, upload_id="upl_1")).get()


@pytest.mark.parametrize(
    ("scenario", "terminal"),
    [
        (_noncanonical, ("upl_1", "failed", "chunk_not_canonical_base64")),
        (_out_of_order, ("upl_1", "failed", "chunk_out_of_order")),
        (_digest_mismatch, ("upl_1", "failed", "sha256_mismatch")),
        (_size_mismatch, ("upl_1", "failed", "size_mismatch")),
        (_mime_mismatch, ("upl_1", "failed", "magic_mismatch")),
        (_bad_image, ("upl_1", "failed", "image_invalid")),
        (_abort, ("upl_1", "aborted", "client_abort")),
    ],
    ids=["noncanonical", "out-of-order", "digest", "size", "mime-magic", "truncated", "abort"],
)
def test_every_failure_settles_once_and_removes_temp_files(
    start: Callable[..., Harness],
    scenario: Callable[[Harness, bytes], None],
    terminal: tuple[str, str, str],
) -> None:
    h = start()
    scenario(h, png_bytes(size=(30, 30)))
    assert h.sink.terminals() == [terminal]
    assert h.work_files() == []
    assert list((h.store_root / "sha256").iterdir()) == []
    h.proxy.handle(AttachmentAbort(line=99, upload_id="upl_1")).get()
    assert h.sink.records[-1]["reason"] == "upload_not_active"
    assert len(h.sink.terminals()) == 1


def test_storage_full_fails_the_commit(start: Callable[..., Harness]) -> None:
    h = start(max_bytes=100)
    document = pdf_bytes()
    h.upload(1, document, "application/pdf")
    assert h.sink.terminals() == [("upl_1", "failed", "storage_full")]
    assert h.work_files() == []


def test_stop_fails_open_uploads_and_removes_the_work_dir(
    start: Callable[..., Harness],
) -> None:
    h = start()
    payload = png_bytes(size=(20, 20))
    h.begin(1, payload)
    h.chunks(1, payload[:10])
    h.begin(2, payload)
    h.proxy.actor_ref.stop()
    assert h.sink.terminals() == [
        ("upl_1", "failed", "host_shutdown"),
        ("upl_2", "failed", "host_shutdown"),
    ]
    assert list(h.temp_dir.glob(f"upl-{os.getpid()}-*")) == []


def test_without_the_capability_everything_is_rejected(start: Callable[..., Harness]) -> None:
    h = start(capability_enabled=False)
    h.begin(1, b"x")
    assert h.sink.records[-1]["reason"] == "capability_not_advertised"
    fake = AttachmentRef(
        attachment_id="att_1",
        kind="image",
        name="a.png",
        mime_type="image/png",
        size_bytes=1,
        sha256="0" * 64,
        storage_id="blob_sha256_" + "0" * 64,
    )
    assert h.proxy.admit_refs(PROMPT, (fake,)).get() == "capability_not_advertised"
    assert h.proxy.admit_refs(PROMPT, ()).get() is None


def test_read_blob_of_an_unknown_id_raises(start: Callable[..., Harness]) -> None:
    h = start()
    with pytest.raises(BlobNotFound):
        h.proxy.read_blob("blob_sha256_" + "1" * 64).get()


def test_start_sweeps_work_dirs_of_dead_processes(
    start: Callable[..., Harness], tmp_path: Path
) -> None:
    stale = tmp_path / "blobs" / "tmp" / "upl-999999999-old"
    stale.mkdir(parents=True)
    (stale / "1.part").write_bytes(b"left by a crash")
    h = start()
    h.proxy.tick().get()
    assert not stale.exists()
    # This process's own work directory is made by its first upload, not
    # at start (DEC-CLI-3).
    assert list(h.temp_dir.glob(f"upl-{os.getpid()}-*")) == []
