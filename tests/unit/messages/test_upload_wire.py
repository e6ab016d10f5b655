"""What an upload looks like on the wire (WIRE-018, MOD-083): chunk payloads
and display names."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.attachments import Reason
from agentx.messages.upload_wire import decode_chunk, valid_display_name


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("QQ==", b"A"),
        ("QUI=", b"AB"),
        ("QUJD", b"ABC"),
        ("", Reason.CHUNK_EMPTY),
        ("QQ", Reason.CHUNK_NOT_CANONICAL_BASE64),
        ("QR==", Reason.CHUNK_NOT_CANONICAL_BASE64),
        ("QQ==QQ==", Reason.CHUNK_NOT_CANONICAL_BASE64),
        ("QU I=", Reason.CHUNK_NOT_CANONICAL_BASE64),
        ("QUI=\n", Reason.CHUNK_NOT_CANONICAL_BASE64),
        ("-_-_", Reason.CHUNK_NOT_CANONICAL_BASE64),
        ("QUJ€", Reason.CHUNK_NOT_CANONICAL_BASE64),
        ("Q===", Reason.CHUNK_NOT_CANONICAL_BASE64),
        (base64.b64encode(bytes(262_144)).decode(), bytes(262_144)),
        (base64.b64encode(bytes(262_145)).decode(), Reason.CHUNK_TOO_LARGE),
        ("A" * 349_529, Reason.CHUNK_TOO_LARGE),
    ],
    ids=[
        "pad2",
        "pad1",
        "pad0",
        "empty",
        "unpadded",
        "nonzero-trailing-bits",
        "padding-inside",
        "space",
        "newline",
        "urlsafe-alphabet",
        "non-ascii",
        "overpadded",
        "decoded-at-262144",
        "decoded-one-past-262144",
        "encoded-one-past-349528",
    ],
)
def test_decode_chunk(data: str, expected: bytes | Reason) -> None:
    assert decode_chunk(data) == expected


@given(st.binary(min_size=1, max_size=2048))
def test_decode_chunk_round_trips_canonical_base64(payload: bytes) -> None:
    assert decode_chunk(base64.b64encode(payload).decode()) == payload


@given(st.text(alphabet="ABCDQRabc0189+/=-_ \n", min_size=1, max_size=16))
def test_decode_chunk_admits_only_canonical_text(text: str) -> None:
    decoded = decode_chunk(text)
    if isinstance(decoded, bytes):
        assert base64.b64encode(decoded).decode() == text


@given(st.text(max_size=300))
def test_valid_display_name_matches_the_rule(name: str) -> None:
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        size = -1
    spoofing = {0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F)}
    spoofing |= set(range(0x2066, 0x206A))
    expected = (
        1 <= size <= 255
        and name not in (".", "..")
        and not any(
            c in "/\\" or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or ord(c) in spoofing
            for c in name
        )
    )
    assert valid_display_name(name) is expected
