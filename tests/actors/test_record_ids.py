"""Record and request ids (``agentx.actors.host.new_uuid``): canonical RFC 4122
version-4 UUIDs, formatted by hand on the hot path."""

from __future__ import annotations

import uuid

from agentx.actors.host import new_uuid


def test_ids_are_canonical_version_4_rfc_4122_uuids_and_distinct() -> None:
    ids = [new_uuid() for _ in range(20_000)]
    for text in ids:
        parsed = uuid.UUID(text)
        assert parsed.version == 4
        assert parsed.variant == uuid.RFC_4122
        assert str(parsed) == text  # lowercase, hyphenated, zero-padded
    assert len(set(ids)) == len(ids)


def test_every_random_bit_position_varies() -> None:
    """Only the version nibble and the variant bits are fixed."""
    ints = [uuid.UUID(new_uuid()).int for _ in range(2_000)]
    fixed = (0xF << 76) | (0x3 << 62)
    ones = 0
    zeros = 0
    for value in ints:
        ones |= value
        zeros |= ~value
    varying = ones & zeros & ((1 << 128) - 1)
    assert varying == ((1 << 128) - 1) ^ fixed
