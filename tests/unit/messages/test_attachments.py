"""The input_capabilities object and WIRE-020 prompt correlation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec.structs
import pytest

from agentx.messages.attachment_limits import MIB, input_capabilities
from agentx.messages.attachments import CommittedManifests, Manifest
from agentx.messages.frozen import thaw
from agentx.messages.inbound_user import AttachmentRef

SPEC = Path(__file__).resolve().parents[3] / ".." / "shared" / "spec" / "sdk-wire-protocol.md"
PROMPT_A = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"
PROMPT_B = "5a0c4d0e-1b2c-4d3e-8f40-516273849506"


def spec_capabilities() -> Any:
    if not SPEC.exists():
        pytest.skip(f"spec not found at {SPEC}")
    text = SPEC.read_text(encoding="utf-8")
    start = text.index("For the native qualified attachment profile")
    start = text.index("{", start)
    end = text.index("This capability describes", start)
    return json.loads(text[start:end])


def test_input_capabilities_is_exactly_the_spec_object() -> None:
    """The function returns the value of the ``input_capabilities`` member."""
    assert thaw(input_capabilities()) == spec_capabilities()["input_capabilities"]


def test_input_capabilities_is_frozen() -> None:
    caps = input_capabilities()
    with pytest.raises(TypeError):
        caps["attachments"]["limits"]["max_item_bytes"] = 1
    assert isinstance(caps["attachments"]["media_types"], tuple)


def manifest(attachment_id: str, size: int = 10, **overrides: Any) -> Manifest:
    fields: dict[str, Any] = {
        "attachment_id": attachment_id,
        "kind": "image",
        "name": f"{attachment_id}.png",
        "mime_type": "image/png",
        "size_bytes": size,
        "sha256": "c" * 64,
        "storage_id": "blob_sha256_" + "c" * 64,
    }
    fields.update(overrides)
    return Manifest(**fields)


def ref(m: Manifest, **overrides: Any) -> AttachmentRef:
    fields = {f.name: getattr(m, f.name) for f in msgspec.structs.fields(Manifest)}
    fields.update(overrides)
    return AttachmentRef(**fields)


def store(*entries: tuple[str, Manifest], capacity: int = 100_000) -> CommittedManifests:
    manifests = CommittedManifests(capacity=capacity)
    for prompt, m in entries:
        assert manifests.add(prompt, m) is None
    return manifests


A1, A2, B1 = manifest("att_a1"), manifest("att_a2"), manifest("att_b1")
TWO_A = store((PROMPT_A, A1), (PROMPT_A, A2), (PROMPT_B, B1))


@pytest.mark.parametrize(
    ("uuid", "refs", "reason"),
    [
        (PROMPT_A, (ref(A1), ref(A2)), None),
        (PROMPT_A, (ref(A2), ref(A1)), None),
        (PROMPT_B, (ref(B1),), None),
        ("0b7e1c1e-6a55-4d5c-9a3e-2f0f7f0b1c2d", (), None),
        (None, (), None),
        (None, (ref(A1), ref(A2)), "prompt_uuid_missing"),
        (PROMPT_A, (ref(A1),), "attachment_omitted"),
        (PROMPT_A, (), "attachment_omitted"),
        (PROMPT_A, (ref(A1), ref(A1)), "duplicate_attachment_ref"),
        (PROMPT_A, (ref(A1), ref(manifest("att_x"))), "attachment_not_committed"),
        (PROMPT_A, (ref(A1), ref(A2), ref(B1)), "mixed_prompt_uuids"),
        (PROMPT_B, (ref(A1), ref(A2)), "prompt_uuid_mismatch"),
        (PROMPT_A, (ref(A1), ref(A2, name="other.png")), "manifest_mismatch"),
        (PROMPT_A, (ref(A1), ref(A2, kind="document")), "manifest_mismatch"),
        (PROMPT_A, (ref(A1), ref(A2, mime_type="image/jpeg")), "manifest_mismatch"),
        (PROMPT_A, (ref(A1), ref(A2, size_bytes=11)), "manifest_mismatch"),
        (PROMPT_A, (ref(A1), ref(A2, sha256="d" * 64)), "manifest_mismatch"),
        (PROMPT_A, (ref(A1), ref(A2, storage_id="blob_sha256_" + "d" * 64)), "manifest_mismatch"),
    ],
    ids=[
        "all-committed",
        "any-order",
        "other-prompt",
        "text-only-unrelated",
        "text-only-no-uuid",
        "refs-without-uuid",
        "one-omitted",
        "all-omitted",
        "same-ref-twice",
        "not-committed",
        "mixed-prompts",
        "reused-under-other-uuid",
        "name",
        "kind",
        "mime",
        "size",
        "sha256",
        "storage-id",
    ],
)
def test_check_user_refs(
    uuid: str | None, refs: tuple[AttachmentRef, ...], reason: str | None
) -> None:
    assert TWO_A.check_user_refs(uuid, refs) == reason


@pytest.mark.parametrize(("count", "reason"), [(8, None), (9, "too_many_attachments")])
def test_attachments_per_message_at_the_limit_and_one_past(count: int, reason: str | None) -> None:
    manifests = [manifest(f"att_{n}") for n in range(count)]
    committed = store(*((PROMPT_A, m) for m in manifests))
    assert committed.check_user_refs(PROMPT_A, tuple(map(ref, manifests))) == reason


@pytest.mark.parametrize(
    ("sizes", "reason"),
    [((20 * MIB, 20 * MIB), None), ((20 * MIB, 20 * MIB + 1), "aggregate_too_large")],
    ids=["at-40MiB", "one-past-40MiB"],
)
def test_aggregate_bytes_at_the_limit_and_one_past(
    sizes: tuple[int, ...], reason: str | None
) -> None:
    manifests = [manifest(f"att_{n}", size) for n, size in enumerate(sizes)]
    committed = store(*((PROMPT_A, m) for m in manifests))
    assert committed.check_user_refs(PROMPT_A, tuple(map(ref, manifests))) == reason


def test_manifest_ceiling_at_the_limit_and_one_past() -> None:
    manifests = CommittedManifests()
    for n in range(100_000):
        assert manifests.add(PROMPT_A, manifest(f"att_{n}")) is None
    assert manifests.add(PROMPT_B, manifest("att_last")) == "manifest_limit_reached"
    assert len(manifests) == 100_000
    assert "att_last" not in manifests


def test_one_attachment_id_names_one_manifest() -> None:
    manifests = store((PROMPT_A, A1))
    assert manifests.add(PROMPT_B, A1) == "duplicate_attachment_id"
    assert manifests.for_prompt(PROMPT_B) == ()
    assert manifests.get("att_a1") == A1


def test_manifest_wire_form_is_the_attachment_ref_block() -> None:
    wire = A1.to_wire()
    assert wire == {"type": "attachment_ref", **msgspec.structs.asdict(A1)}
    with pytest.raises(TypeError):
        wire["name"] = "x"
