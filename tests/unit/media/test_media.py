"""MOD-083..085 and MOD-A14B on the shared third-party and generated corpora.

Policy rows of the corpora (``policy(...)``) follow DECISIONS section 7 and
corpora/README: encrypted PDFs are rejected, active PDF content and embedded
files are accepted as inert bytes, animated/multi-frame images are rejected.
The remaining open calls are decided here:

* ``sugarshack_bad_mpo_header.jpg``: Pillow reads it as one JPEG frame, so it
  is accepted as a JPEG.
* ``pdf_count_says_1000000_has_1.pdf``: pages are counted by walking the tree
  (MOD-085), so the one real page is accepted.
* ``pdf_no_root.pdf`` and ``issue-297.pdf`` / ``pdf_startxref_wrong.pdf``:
  strict structure, so a missing ``/Root`` or a broken xref is ``pdf_invalid``.
* ``pdf_xref_prev_self_loop.pdf``: pypdf detects the loop and reads a valid
  document; accepted.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from agentx.media.admission import Admitted, Rejected, admit, check_magic, qualify_runtime
from agentx.messages.attachments import Reason

CORPORA = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpora"
MISC = "generated/misc"
MIME_BY_SUFFIX = {".png": "image/png", ".jpg": "image/jpeg", ".mpo": "image/jpeg"}

#: Decisions for rows whose host_expect is policy(...) (module docstring).
POLICY = {
    "pillow/apng_num_plays.png": "unsupported_animation",
    "pillow/apng_sequence_gap.png": "unsupported_animation",
    "pillow/frame_size.mpo": "unsupported_animation",
    "pillow/sugarshack_bad_mpo_header.jpg": "accept",
    "pypdf/SF424_page2.pdf": "accept",
    "pypdf/crazyones-encrypted-256.pdf": "pdf_encrypted",
    "pypdf/encrypted_doc_no_id.pdf": "pdf_encrypted",
    "pypdf/encryption_r2-owner-password.pdf": "pdf_encrypted",
    "pypdf/encryption_r4-user-password.pdf": "pdf_encrypted",
    "pypdf/encryption_r6-both-passwords.pdf": "pdf_encrypted",
    "pypdf/encryption_r6-empty-password.pdf": "pdf_encrypted",
    "pypdf/issue-297.pdf": "pdf_invalid",
    "sample-files/with-attachment.pdf": "accept",
    "pdf/pdf_count_says_1000000_has_1.pdf": "accept",
    "pdf/pdf_deep_nesting.pdf": "accept",
    "pdf/pdf_embedded_file.pdf": "accept",
    "pdf/pdf_flate_bomb_content.pdf": "accept",
    "pdf/pdf_javascript_openaction.pdf": "accept",
    "pdf/pdf_no_root.pdf": "pdf_invalid",
    "pdf/pdf_startxref_wrong.pdf": "pdf_invalid",
    "pdf/pdf_xref_prev_self_loop.pdf": "accept",
}

#: Exact reasons for the boundary and structure rows.
REASONS = {
    "images/jpeg_4473x4473_pixels_over.jpg": "image_pixels_exceeded",
    "images/jpeg_8193x8_side_over.jpg": "image_dimensions_exceeded",
    # Past 40 MP Pillow's own guard refuses at open, before the side check.
    "images/jpeg_huge_dims_65500x65500.jpg": "image_pixels_exceeded",
    "images/png_1x8193_side_over.png": "image_dimensions_exceeded",
    "images/png_8193x1_side_over.png": "image_dimensions_exceeded",
    "images/png_4473x4473_pixels_over.png": "image_pixels_exceeded",
    "images/png_10000x10000_pillow_warn_zone.png": "image_pixels_exceeded",
    "images/png_bomb_30000x30000_1bit.png": "image_pixels_exceeded",
    "images/png_huge_dims_30000x30000_header_only.png": "image_pixels_exceeded",
    "images/jpeg_missing_eoi.jpg": "image_invalid",
    "images/jpeg_truncated_half.jpg": "image_invalid",
    "pdf/pdf_101_blank_pages.pdf": "pdf_too_many_pages",
    "pdf/pdf_count_says_1_has_101.pdf": "pdf_too_many_pages",
    "pdf/pdf_pages_tree_cycle.pdf": "pdf_invalid",
    "pdf/pdf_pages_tree_cycle2.pdf": "pdf_invalid",
    "misc/empty.bin": "magic_mismatch",
    "pillow/decompression_bomb.gif": "magic_mismatch",
    "misc/html_script_as_png.png": "magic_mismatch",
    "misc/svg_as_png.png": "magic_mismatch",
    "misc/png_magic_only.png": "image_invalid",
    "misc/jpeg_soi_only.jpg": "magic_mismatch",
}

#: MIME claims for files whose suffix names no supported type.
CLAIMS = {
    "pillow/decompression_bomb.gif": "image/png",
    "misc/empty.bin": "image/png",
    "misc/polyglot_png_magic_then_pdf.bin": "application/pdf",
    "misc/polyglot_pdf_magic_then_png.bin": "image/png",
}


def rows(manifest: str) -> Iterator[tuple[str, str, str]]:
    """(path under corpora, path in its folder, host_expect) per MANIFEST row."""
    path = CORPORA / manifest
    if not path.exists():
        return
    folder = manifest.split("/", maxsplit=1)[0]
    with path.open(encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if not row["path"].startswith("json/"):
                yield f"{folder}/{row['path']}", row["path"], row["host_expect"]


def expectation(inner: str, host_expect: str) -> str:
    if host_expect.startswith("policy("):
        return POLICY[inner]
    if host_expect.startswith("accept"):
        return "accept"
    return REASONS.get(inner, "reject")


def claim(inner: str) -> str:
    if inner in CLAIMS:
        return CLAIMS[inner]
    if inner.endswith(".pdf"):
        return "application/pdf"
    return MIME_BY_SUFFIX[Path(inner).suffix]


CASES = [
    pytest.param(rel, claim(inner), expectation(inner, expect), id=rel)
    for manifest in ("images/MANIFEST.tsv", "pdf/MANIFEST.tsv", "generated/MANIFEST.tsv")
    for rel, inner, expect in rows(manifest)
]


def corpus(rel: str) -> Path:
    path = CORPORA / rel
    if not path.exists():
        pytest.skip(f"corpora not found at {CORPORA} (expected ../shared/corpora)")
    return path


def run_admit(rel: str, mime: str, tmp_path: Path) -> Admitted | Rejected:
    return admit(corpus(rel), mime, tmp_path / "normalized")


def test_corpora_are_present() -> None:
    if not CORPORA.exists():
        pytest.skip(f"corpora not found at {CORPORA}")
    pngsuite = [c for c in CASES if "pngsuite/" in c.values[0]]
    assert len(pngsuite) == 175
    assert sum("/x" in c.values[0] for c in pngsuite) == 14


@pytest.mark.filterwarnings("ignore::UserWarning")  # Pillow warns on APNG/MPO damage
@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
@pytest.mark.parametrize(("rel", "mime", "expected"), CASES)
def test_corpus_row(rel: str, mime: str, expected: str, tmp_path: Path) -> None:
    outcome = run_admit(rel, mime, tmp_path)
    if expected == "accept":
        assert isinstance(outcome, Admitted), outcome
        if mime == "application/pdf":
            assert outcome.path == corpus(rel), "PDFs are stored unchanged"
        else:
            assert_clean_image(outcome.path.read_bytes(), mime)
    else:
        assert isinstance(outcome, Rejected)
        assert expected in ("reject", outcome.reason.value)
        assert not (tmp_path / "normalized").exists(), "a rejection leaves no output"


# --- what an accepted image may contain ---------------------------------------

_PNG_ALLOWED = {b"IHDR", b"PLTE", b"tRNS", b"IDAT", b"IEND"}
_JPEG_ALLOWED = {0xE0, 0xEE}  # APP0 JFIF, APP14 Adobe (CMYK transform flag)


def png_chunks(data: bytes) -> list[bytes]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    pos, chunks = 8, []
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        chunks.append(data[pos + 4 : pos + 8])
        pos += 12 + length
    return chunks


def jpeg_segments(data: bytes) -> list[int]:
    assert data.startswith(b"\xff\xd8")
    pos, markers = 2, []
    while data[pos] == 0xFF and data[pos + 1] != 0xDA:
        markers.append(data[pos + 1])
        pos += 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
    return markers


def assert_clean_image(data: bytes, mime: str) -> None:
    """No EXIF, GPS, COM, XMP, ICC or text chunk; nothing after the image."""
    if mime == "image/png":
        chunks = png_chunks(data)
        assert set(chunks) <= _PNG_ALLOWED, chunks
        assert chunks[-1] == b"IEND"
    else:
        markers = jpeg_segments(data)
        app_or_com = {m for m in markers if 0xE0 <= m <= 0xEF or m == 0xFE}
        assert app_or_com <= _JPEG_ALLOWED, markers
        assert data.endswith(b"\xff\xd9")
    for marker in (b"CORPUS", b"Exif", b"GPS", b"%PDF", b"<x:xmpmeta", b"ICC_PROFILE"):
        assert marker not in data


@pytest.mark.parametrize(
    "rel",
    [
        "images/pngsuite/basn0g16.png",
        "images/pngsuite/basn2c08.png",
        "images/pngsuite/basn3p04.png",
        "images/pngsuite/basn6a16.png",
        "images/pngsuite/tbbn3p08.png",
        "images/pngsuite/tp1n3p08.png",
        "images/pngsuite/g10n2c08.png",
        "images/pngsuite/basi4a08.png",
    ],
    ids=lambda rel: Path(rel).stem,
)
def test_png_reencode_keeps_every_pixel(rel: str, tmp_path: Path) -> None:
    outcome = run_admit(rel, "image/png", tmp_path)
    assert isinstance(outcome, Admitted)
    with Image.open(corpus(rel)) as before, Image.open(outcome.path) as after:
        assert after.size == before.size
        assert after.convert("RGBA").tobytes() == before.convert("RGBA").tobytes()


def test_exif_orientation_is_applied_before_metadata_is_dropped(tmp_path: Path) -> None:
    outcome = run_admit("generated/images/jpeg_exif_orientation6.jpg", "image/jpeg", tmp_path)
    assert isinstance(outcome, Admitted)
    with Image.open(outcome.path) as image:
        assert image.size == (48, 64), "64x48 rotated by orientation 6"
        assert image.getexif().get(0x0112) is None


def test_icc_profile_is_applied_then_dropped(tmp_path: Path) -> None:
    outcome = run_admit("images/pillow/icc_profile.png", "image/png", tmp_path)
    assert isinstance(outcome, Admitted)
    with Image.open(outcome.path) as image:
        assert image.mode == "RGBA"
        assert "icc_profile" not in image.info


@pytest.mark.parametrize(
    ("rel", "mime", "reason"),
    [
        (
            "generated/misc/polyglot_png_with_pdf_after_iend.png",
            "application/pdf",
            "magic_mismatch",
        ),
        ("generated/misc/polyglot_png_magic_then_pdf.bin", "application/pdf", "magic_mismatch"),
        ("generated/misc/polyglot_pdf_magic_then_png.bin", "application/pdf", "pdf_invalid"),
        ("images/pngsuite/basn2c08.png", "image/jpeg", "magic_mismatch"),
        ("images/pillow/hopper.jpg", "image/png", "magic_mismatch"),
        ("pdf/pypdf/crazyones.pdf", "image/png", "magic_mismatch"),
    ],
    ids=[
        "png-pdf-trailer",
        "png-magic-pdf",
        "pdf-magic-png",
        "png-as-jpeg",
        "jpeg-as-png",
        "pdf-as-png",
    ],
)
def test_magic_must_match_the_claim(rel: str, mime: str, reason: str, tmp_path: Path) -> None:
    outcome = run_admit(rel, mime, tmp_path)
    assert isinstance(outcome, Rejected)
    assert outcome.reason == reason


@pytest.mark.parametrize(
    ("mime", "head", "reason"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n", None),
        ("image/png", b"\x89PNG\r\n\x1a", "magic_mismatch"),
        ("image/jpeg", b"\xff\xd8\xff", None),
        ("image/jpeg", b"\xff\xd8", "magic_mismatch"),
        ("application/pdf", b"%PDF-", None),
        ("application/pdf", b"%PDF", "magic_mismatch"),
        ("image/gif", b"GIF89a", "unsupported_mime_type"),
    ],
    ids=["png", "png-short", "jpeg", "jpeg-short", "pdf", "pdf-short", "gif"],
)
def test_check_magic(mime: str, head: bytes, reason: str | None) -> None:
    assert check_magic(mime, head) == reason


def test_reencode_over_the_item_limit_is_image_too_large(tmp_path: Path) -> None:
    """A 9 MiB noise JPEG (quality 60) re-encodes at quality 95 past 20 MiB."""
    noise = Image.frombytes("RGB", (4472, 4472), os.urandom(4472 * 4472 * 3))
    src = tmp_path / "noise.jpg"
    noise.save(src, format="JPEG", quality=60)
    outcome = admit(src, "image/jpeg", tmp_path / "normalized")
    assert outcome == Rejected(reason=Reason.IMAGE_TOO_LARGE)
    assert not (tmp_path / "normalized").exists()


def test_runtime_qualifies() -> None:
    assert qualify_runtime() is None


_BOMB_SCRIPT = """
import json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (768 * 1024 * 1024, 768 * 1024 * 1024))
from agentx.media.admission import admit
results = {}
for rel, mime in json.loads(sys.argv[1]):
    outcome = admit(Path(sys.argv[2]) / rel, mime, Path(sys.argv[3]) / "out")
    results[rel] = getattr(outcome, "reason", "accept")
print(json.dumps(results))
"""


def test_bombs_stay_within_time_and_memory(tmp_path: Path) -> None:
    """Decompression bombs, deep nesting and loops under a 768 MiB address
    space limit and a 60 s timeout: no RecursionError or MemoryError escapes."""
    bombs = {
        "generated/images/png_bomb_30000x30000_1bit.png": ("image/png", "image_pixels_exceeded"),
        "images/pillow/png_decompression_dos.png": ("image/png", "image_invalid"),
        "images/pillow/decompression_bomb.gif": ("image/png", "magic_mismatch"),
        "generated/pdf/pdf_flate_bomb_content.pdf": ("application/pdf", "accept"),
        "generated/pdf/pdf_deep_nesting.pdf": ("application/pdf", "accept"),
        "generated/pdf/pdf_xref_prev_self_loop.pdf": ("application/pdf", "accept"),
        "generated/pdf/pdf_pages_tree_cycle.pdf": ("application/pdf", "pdf_invalid"),
    }
    corpus("generated/pdf/pdf_deep_nesting.pdf")
    job = json.dumps([[rel, mime] for rel, (mime, _) in bombs.items()])
    done = subprocess.run(
        [sys.executable, "-c", _BOMB_SCRIPT, job, str(CORPORA), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == {
        rel: reason for rel, (_, reason) in bombs.items()
    }


def test_normalized_output_is_a_new_file_for_images(tmp_path: Path) -> None:
    outcome = run_admit("images/pillow/hopper.png", "image/png", tmp_path)
    assert isinstance(outcome, Admitted)
    assert outcome.path == tmp_path / "normalized"
    with Image.open(io.BytesIO(outcome.path.read_bytes())) as image:
        assert image.format == "PNG"
        assert image.size == (128, 128)
