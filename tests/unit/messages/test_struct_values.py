"""Message types are frozen ``msgspec.Struct`` values (DESIGN "Messages are
values"): assigning a field fails, equal fields compare equal, and a field
that must not be printed (bytes of an attachment, a credential) is left out
of the repr (WIRE-013)."""

from __future__ import annotations

import pytest

from agentx.messages.frozen import repr_without
from agentx.messages.mcp.results import ImagePart
from agentx.messages.records import Emit
from agentx.messages.upload_lifecycle import AppendChunk

SECRET = b"sk-not-in-any-repr"


@pytest.mark.parametrize(
    "value",
    [
        ImagePart(mime_type="image/png", data=SECRET),
        AppendChunk(upload_id="upl_1", data=SECRET),
    ],
)
def test_hidden_fields_stay_out_of_the_repr(value: object) -> None:
    text = repr(value)
    assert "sk-not-in-any-repr" not in text
    assert text.startswith(type(value).__name__ + "(")
    assert "data=..." in text


def test_repr_without_shows_the_other_fields() -> None:
    part = ImagePart(mime_type="image/png", data=SECRET)
    assert repr_without(part, frozenset({"data"})) == "ImagePart(mime_type='image/png', data=...)"


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (ImagePart(mime_type="image/png", data=b""), "data"),
        (AppendChunk(upload_id="upl_1", data=b""), "upload_id"),
        (Emit(records=()), "records"),
    ],
)
def test_assigning_a_field_fails(value: object, field: str) -> None:
    with pytest.raises(AttributeError):
        setattr(value, field, b"x")


def test_equal_fields_compare_and_hash_equal() -> None:
    assert AppendChunk(upload_id="u", data=b"a") == AppendChunk(upload_id="u", data=b"a")
    assert hash(Emit(records=())) == hash(Emit(records=()))
    assert AppendChunk(upload_id="u", data=b"a") != AppendChunk(upload_id="u", data=b"b")
