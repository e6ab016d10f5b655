"""``@file`` mentions (DEC-PROFILE-2) and the ``sdk`` profile's
``client_composed`` member of the user record (the standalone record stays
closed, WIRE-017): tables against the cores."""

from __future__ import annotations

import json

import pytest

from agentx.messages.decode import decode_line
from agentx.messages.framing import Line
from agentx.messages.inbound_user import InvalidUserRecord, UserRecord
from agentx.messages.mentions import MAX_MENTIONS, attachment_text, mentioned_paths


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        ("look at @notes.txt please", ("notes.txt",)),
        ("@a.py and @src/b.py", ("a.py", "src/b.py")),
        ('see @"my notes.txt"', ("my notes.txt",)),
        ("@/etc/passwd", ("/etc/passwd",)),  # found here; the Read permission decides
        ("mail me@example.com", ()),  # not after whitespace
        ("@ alone and @", ()),
        ("twice @x and @x", ("x",)),
        ("line\n@next", ("next",)),
        ('@"unterminated', ()),
        ("", ()),
    ],
)
def test_mentioned_paths(text: str, paths: tuple[str, ...]) -> None:
    assert mentioned_paths(text) == paths


def test_at_most_max_mentions() -> None:
    text = " ".join(f"@f{n}" for n in range(MAX_MENTIONS + 1))
    found = mentioned_paths(text)
    assert len(found) == MAX_MENTIONS and f"f{MAX_MENTIONS}" not in found
    assert len(mentioned_paths(" ".join(f"@f{n}" for n in range(MAX_MENTIONS)))) == MAX_MENTIONS


def test_attachment_text_names_the_read_call() -> None:
    text = attachment_text('a "b".txt', "     1\tx")
    assert text.startswith(
        'Called the Read tool with the following input: {"file_path": "a \\"b\\".txt"}'
    )
    assert text.endswith("Result of calling the Read tool:      1\tx")


def _decode(record: dict[str, object], *, sdk: bool) -> object:
    data = json.dumps(record).encode()
    return decode_line(Line(number=1, data=data), sdk=sdk)


USER = {"type": "user", "message": "hi @x", "parent_tool_use_id": None}


@pytest.mark.parametrize(
    ("extra", "sdk", "composed", "reason"),
    [
        ({}, True, False, None),
        ({"client_composed": True}, True, True, None),
        ({"client_composed": False}, True, False, None),
        ({"client_composed": None}, True, False, None),
        ({"client_composed": "yes"}, True, None, "user record: client_composed must be a bool"),
        ({"client_composed": True}, False, None, "user record: unknown member"),
        ({"client_composed": False}, False, None, "user record: unknown member"),
    ],
    ids=["absent", "true", "false", "null", "not-a-bool", "standalone-true", "standalone-false"],
)
def test_client_composed(
    extra: dict[str, object], sdk: bool, composed: bool | None, reason: str | None
) -> None:
    decoded = _decode({**USER, **extra}, sdk=sdk)
    if reason is None:
        assert isinstance(decoded, UserRecord) and decoded.client_composed is composed
    else:
        assert isinstance(decoded, InvalidUserRecord) and decoded.reason == reason
