"""attachment_import through decode_line (WIRE-018): schema breaks are fatal."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentx.messages.decode import FatalDecodeError, InboundRecord, decode_line
from agentx.messages.framing import MAX_RECORD_BYTES, Line
from agentx.messages.inbound_import import (
    AttachmentAbort,
    AttachmentBegin,
    AttachmentChunk,
    AttachmentCommit,
)

UUID = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"
SHA = "0123456789abcdef" * 4


def decode(record: dict[str, Any] | bytes) -> InboundRecord:
    data = record if isinstance(record, bytes) else json.dumps(record).encode()
    return decode_line(Line(number=4, data=data))


# --- attachment_import (WIRE-018): schema breaks are fatal -------------------

BEGIN: dict[str, Any] = {
    "type": "attachment_import",
    "version": 1,
    "operation": "begin",
    "prompt_uuid": UUID,
    "upload_id": "upl_image1",
    "attachment_id": "att_image1",
    "name": "screen.png",
    "size_bytes": 12345,
    "mime_type": "image/png",
    "sha256": SHA,
}
CHUNK: dict[str, Any] = {
    "type": "attachment_import",
    "version": 1,
    "operation": "chunk",
    "upload_id": "upl_image1",
    "sequence": 0,
    "data": "not even base64 here",
}
COMMIT = {"type": "attachment_import", "version": 1, "operation": "commit", "upload_id": "upl_a"}
ABORT = {**COMMIT, "operation": "abort"}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param(
            BEGIN,
            AttachmentBegin(
                line=4,
                upload_id="upl_image1",
                attachment_id="att_image1",
                prompt_uuid=UUID,
                name="screen.png",
                size_bytes=12345,
                mime_type="image/png",
                sha256=SHA,
            ),
            id="begin",
        ),
        pytest.param(
            CHUNK,
            AttachmentChunk(
                line=4, upload_id="upl_image1", sequence=0, data="not even base64 here"
            ),
            id="chunk",
        ),
        pytest.param(COMMIT, AttachmentCommit(line=4, upload_id="upl_a"), id="commit"),
        pytest.param(ABORT, AttachmentAbort(line=4, upload_id="upl_a"), id="abort"),
        pytest.param(
            {**COMMIT, "upload_id": "upl_Z" + "_-9" * 20 + "xx"},
            AttachmentCommit(line=4, upload_id="upl_Z" + "_-9" * 20 + "xx"),
            id="upload-id-63-tail",
        ),
    ],
)
def test_attachment_import_forms(record: dict[str, Any], expected: InboundRecord) -> None:
    assert decode(record) == expected


def _without(record: dict[str, Any], member: str) -> dict[str, Any]:
    return {name: value for name, value in record.items() if name != member}


FATAL_IMPORTS = [
    *(
        pytest.param(_without(BEGIN, m), f"missing member {m}", id=f"begin-missing-{m}")
        for m in sorted(set(BEGIN) - {"type", "operation"})
    ),
    *(
        pytest.param(_without(CHUNK, m), f"missing member {m}", id=f"chunk-missing-{m}")
        for m in ("version", "upload_id", "sequence", "data")
    ),
    pytest.param({**COMMIT, "extra": 1}, "unknown member", id="commit-extra"),
    pytest.param({**COMMIT, "sequence": 0}, "unknown member", id="commit-with-sequence"),
    pytest.param({**ABORT, "reason": "x"}, "unknown member", id="abort-extra"),
    pytest.param(_without(COMMIT, "operation"), "operation must be", id="no-operation"),
    pytest.param({**COMMIT, "operation": "finish"}, "operation must be", id="unknown-operation"),
    pytest.param({**COMMIT, "operation": 1}, "operation must be", id="operation-int"),
    pytest.param({**COMMIT, "version": 2}, "version must be 1", id="version-2"),
    pytest.param({**COMMIT, "version": 1.0}, "version must be 1", id="version-float"),
    pytest.param({**COMMIT, "version": True}, "version must be 1", id="version-true"),
    pytest.param({**COMMIT, "version": "1"}, "version must be 1", id="version-string"),
    pytest.param({**COMMIT, "upload_id": "upl_"}, "upload_id is malformed", id="upl-empty"),
    pytest.param({**COMMIT, "upload_id": "upl_-a"}, "upload_id", id="upl-leading-dash"),
    pytest.param({**COMMIT, "upload_id": "upl_a.b"}, "upload_id", id="upl-dot"),
    pytest.param({**COMMIT, "upload_id": "upl_a\n"}, "upload_id", id="upl-newline"),
    pytest.param({**COMMIT, "upload_id": "upl_a" + "b" * 63}, "upload_id", id="upl-64-tail"),
    pytest.param({**COMMIT, "upload_id": 5}, "upload_id", id="upl-int"),
    pytest.param({**BEGIN, "attachment_id": "att_"}, "attachment_id", id="att-empty"),
    pytest.param({**BEGIN, "attachment_id": "upl_a"}, "attachment_id", id="att-prefix"),
    pytest.param({**BEGIN, "prompt_uuid": UUID.upper()}, "prompt_uuid", id="uuid-upper"),
    pytest.param({**BEGIN, "prompt_uuid": UUID.replace("-", "")}, "prompt_uuid", id="uuid-flat"),
    pytest.param(
        {**BEGIN, "prompt_uuid": "3f1e7948-5c1f-6c1f-8e2c-88bc9839ec27"},
        "prompt_uuid",
        id="uuid-version-6",
    ),
    pytest.param(
        {**BEGIN, "prompt_uuid": "3f1e7948-5c1f-0c1f-8e2c-88bc9839ec27"},
        "prompt_uuid",
        id="uuid-version-0",
    ),
    pytest.param(
        {**BEGIN, "prompt_uuid": "3f1e7948-5c1f-4c1f-ce2c-88bc9839ec27"},
        "prompt_uuid",
        id="uuid-variant",
    ),
    pytest.param({**BEGIN, "prompt_uuid": "{" + UUID + "}"}, "prompt_uuid", id="uuid-braces"),
    pytest.param({**BEGIN, "size_bytes": 0}, "size_bytes", id="size-zero"),
    pytest.param({**BEGIN, "size_bytes": -1}, "size_bytes", id="size-negative"),
    pytest.param({**BEGIN, "size_bytes": 1.0}, "size_bytes", id="size-float"),
    pytest.param({**BEGIN, "size_bytes": True}, "size_bytes", id="size-bool"),
    pytest.param({**BEGIN, "sha256": SHA.upper()}, "sha256", id="sha-upper"),
    pytest.param({**BEGIN, "sha256": SHA + "0"}, "sha256", id="sha-long"),
    pytest.param({**BEGIN, "name": None}, "name must be a string", id="name-null"),
    pytest.param({**BEGIN, "mime_type": 1}, "mime_type must be a string", id="mime-int"),
    pytest.param({**CHUNK, "sequence": -1}, "sequence", id="sequence-negative"),
    pytest.param({**CHUNK, "sequence": 0.0}, "sequence", id="sequence-float"),
    pytest.param({**CHUNK, "sequence": False}, "sequence", id="sequence-bool"),
    pytest.param({**CHUNK, "data": None}, "data must be a string", id="data-null"),
]


@pytest.mark.parametrize(("record", "reason"), FATAL_IMPORTS)
def test_attachment_import_schema_breaks_are_fatal(record: dict[str, Any], reason: str) -> None:
    with pytest.raises(FatalDecodeError) as caught:
        decode(record)
    assert caught.value.line_number == 4
    assert reason in caught.value.message


@pytest.mark.parametrize(
    "variant",
    ["3f1e7948-5c1f-1c1f-8e2c-88bc9839ec27", "3f1e7948-5c1f-5c1f-bfff-88bc9839ec27"],
)
def test_prompt_uuid_versions_and_variants_accepted(variant: str) -> None:
    record = decode({**BEGIN, "prompt_uuid": variant})
    assert isinstance(record, AttachmentBegin)
    assert record.prompt_uuid == variant


def test_attachment_import_line_limit_at_and_past() -> None:
    overhead = len(json.dumps({**CHUNK, "data": ""}, separators=(",", ":")))
    at_limit = {**CHUNK, "data": "A" * (MAX_RECORD_BYTES - overhead)}
    data = json.dumps(at_limit, separators=(",", ":")).encode()
    assert len(data) == MAX_RECORD_BYTES
    assert isinstance(decode(data), AttachmentChunk)
    past = data[:-2] + b'A"}'
    with pytest.raises(FatalDecodeError, match="exceeds 8388608 bytes"):
        decode(past)
