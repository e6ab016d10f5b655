"""``--attach`` display names: the file's own name passes MOD-083's name rule."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from agentx.media.blobs import BlobStore
from agentx.media.initial_attachments import AttachError, import_initial
from agentx.messages.attachments import CommittedManifests, Manifest

PROMPT = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (1, 2, 3)).save(out, format="PNG")
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "accepted"),
    [
        ("shot.png", True),
        ("a" * 251 + ".png", True),
        ("a\u202egnp.exe", False),
        ("a\u2066b.png", False),
        ("a\u2029b.png", False),
        ("a\u200fb.png", False),
    ],
    ids=["plain", "255-bytes", "rlo", "lri", "paragraph-separator", "rlm"],
)
def test_attach_rejects_spoofing_names_with_a_bounded_reason(
    tmp_path: Path, name: str, accepted: bool
) -> None:
    path = tmp_path / name
    path.write_bytes(_png())
    store = BlobStore(tmp_path / "blobs")

    def run() -> tuple[Manifest, ...]:
        return import_initial(
            [str(path)], prompt_uuid=PROMPT, store=store, manifests=CommittedManifests()
        )

    if accepted:
        (manifest,) = run()
        assert manifest.name == name
        return
    with pytest.raises(AttachError) as caught:
        run()
    assert str(caught.value) == "--attach #1: invalid_name"
