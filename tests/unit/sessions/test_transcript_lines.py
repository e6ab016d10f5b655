"""The transcript's line encoder and its persist guard (DECISIONS section 1,
DEC-STORE-1, DEC-AUTH-6).

Every batch the store writes must read back identically with the strict
reader, and nothing the output guard would refuse may reach the file. These
are the cases the encoder must refuse before writing a byte, each at its
limit and one past it, and the credential spellings the persist guard must
catch, also where the text is spelled in several pieces.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentx.messages.frozen import FrozenDict, freeze
from agentx.messages.guard import CredentialValidator
from agentx.sessions.store.errors import TranscriptRefused
from agentx.sessions.store.files import TRANSCRIPT_FILE_NAME, SessionStore
from agentx.sessions.store.jsonl import (
    MAX_NESTING,
    PIECE,
    encode_entries,
    first_refused,
    parse_transcript,
)
from tests.unit.sessions.session_helpers import session_header

KEY = "sk-lines-0451-secret"


def _store(tmp_path: Path) -> tuple[SessionStore, str]:
    store = SessionStore(tmp_path)
    session_id = str(uuid.uuid4())
    store.create(session_header(session_id))
    return store, session_id


def _transcript(tmp_path: Path, session_id: str) -> bytes:
    return (tmp_path / session_id / TRANSCRIPT_FILE_NAME).read_bytes()


def _nested(depth: int) -> Any:
    """An entry whose objects and arrays nest ``depth`` deep (the entry itself
    is the first level)."""
    value: Any = "leaf"
    for _ in range(depth - 1):
        value = [value]
    return {"deep": value}


def _append(tmp_path: Path, entries: Sequence[Any], *, admit: bool = False) -> None:
    store, session_id = _store(tmp_path)
    guard = CredentialValidator([KEY])
    appender = store.appender(session_id, admit=guard.check_spelled if admit else None)
    try:
        appender.append(entries)
    finally:
        appender.close()


REFUSED = [
    pytest.param([{"n": float("nan")}], id="nan"),
    pytest.param([{"n": float("inf")}], id="infinity"),
    pytest.param([{"n": [float("-inf")]}], id="minus-infinity-in-array"),
    pytest.param([{"t": "a\ud800b"}], id="lone-surrogate-value"),
    pytest.param([{"t\udcff": 1}], id="lone-surrogate-name"),
    pytest.param([{"t": "x" * (PIECE + 5) + "\ud83d"}], id="lone-surrogate-in-a-long-text"),
    # json.dumps turns these names into text; two of them then collide and
    # the strict reader refuses the line (a duplicate member).
    pytest.param([{1: "a", "1": "b"}], id="colliding-int-name"),
    pytest.param([{True: "a", "true": "b"}], id="colliding-bool-name"),
    pytest.param([{None: "a", "null": "b"}], id="colliding-null-name"),
    pytest.param([{1: "a"}], id="non-text-name"),
    pytest.param([{"b": b"bytes"}], id="bytes"),
    pytest.param([{"s": {"a"}}], id="set"),
    pytest.param([{"o": object()}], id="object"),
    pytest.param(["not an object"], id="entry-not-an-object"),
    pytest.param([_nested(MAX_NESTING + 1)], id="nesting-one-past-the-bound"),
    pytest.param([_nested(5000)], id="runaway-nesting"),
    pytest.param([{"n": 10**5000}], id="integer-too-long"),
]


@pytest.mark.parametrize("entries", REFUSED)
def test_what_would_not_read_back_is_refused_and_nothing_is_written(
    tmp_path: Path, entries: list[Any]
) -> None:
    """DECISIONS section 1: a batch the strict reader would not read back
    identically is a ValueError and leaves the file as it was."""
    store, session_id = _store(tmp_path)
    store.append(session_id, [{"type": "first"}])
    before = _transcript(tmp_path, session_id)
    with pytest.raises(ValueError):
        store.append(session_id, [{"type": "fine"}, *entries])
    assert _transcript(tmp_path, session_id) == before


def test_nesting_at_the_bound_is_written_and_reads_back(tmp_path: Path) -> None:
    store, session_id = _store(tmp_path)
    entry = _nested(MAX_NESTING)
    store.append(session_id, [entry])
    assert store.read(session_id).entries == (freeze(entry),)


def test_large_texts_and_containers_read_back_identically(tmp_path: Path) -> None:
    """Texts and arrays longer than one piece are spelled in pieces; the line
    is the same JSON the reader reads back."""
    text = ('é\u2028\n"\\ab\x00' * (PIECE // 3)) + "end"
    entry = {
        "type": "message",
        "content": [{"type": "text", "text": text}, {"n": list(range(PIECE // 2))}],
        "small": {"a": 1.5, "b": None, "c": True, "d": 2**70},
    }
    store, session_id = _store(tmp_path)
    store.append(session_id, [entry, {"type": "after"}])
    assert store.read(session_id).entries == (freeze(entry), FrozenDict(type="after"))
    assert _transcript(tmp_path, session_id).count(b"\n") == 2


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None, max_examples=150)
@given(st.lists(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=5), max_size=4))
def test_any_json_batch_reads_back_identically(entries: list[dict[str, Any]]) -> None:
    data = b"".join(encode_entries(entries).pieces())
    assert parse_transcript(data) == (tuple(freeze(e) for e in entries), None)


# --- the persist guard (DEC-AUTH-6) ---------------------------------------------

SPLIT = PIECE - len(KEY) // 2  # the key straddles two pieces of a long text
CREDENTIAL_SPELLINGS = [
    pytest.param([{"t": f"the key is {KEY}"}], id="in-a-value"),
    pytest.param([{KEY: 1}], id="as-a-member-name"),
    pytest.param([{"t": "x" * SPLIT + KEY + "y" * PIECE}], id="across-two-pieces-of-a-text"),
    pytest.param([{"t": "\n" * (SPLIT // 2) + KEY + "\n" * PIECE}], id="across-escaped-pieces"),
    pytest.param([{"n": list(range(PIECE)), "t": KEY}], id="after-a-long-array"),
    pytest.param([{"t": "a"}, {"u": KEY}], id="in-the-second-entry"),
]


@pytest.mark.parametrize("entries", CREDENTIAL_SPELLINGS)
def test_a_batch_holding_a_credential_is_refused_and_nothing_is_written(
    tmp_path: Path, entries: list[Any]
) -> None:
    with pytest.raises(TranscriptRefused):
        _append(tmp_path, entries, admit=True)
    assert not any(KEY.encode() in f.read_bytes() for f in tmp_path.rglob("*") if f.is_file())


@pytest.mark.parametrize(
    "literal",
    [
        pytest.param("ab\ncd-9071", id="newline"),
        pytest.param('ab"cd\\-9071', id="quote-and-backslash"),
        pytest.param("ab\u2028cd-9071", id="line-separator"),
        pytest.param("ab\x01cd-9071", id="control"),
        pytest.param("clé-9071", id="non-ascii"),
    ],
)
@pytest.mark.parametrize("cut", [0, 3, PIECE - 4, PIECE - 1])
def test_escaped_spellings_are_caught_wherever_the_pieces_fall(literal: str, cut: int) -> None:
    """A literal needing escapes, at every position relative to a piece
    boundary: the store's spelling is always one of the guard's needles."""
    guard = CredentialValidator([literal])
    entry = {"t": "z" * cut + literal + "z" * PIECE}
    assert not guard.check_spelled(encode_entries([entry]).pieces())
    assert guard.check_spelled(encode_entries([{"t": "z" * cut + "z" * PIECE}]).pieces())


def test_a_literal_across_the_line_boundary_is_caught() -> None:
    """The guard searches the batch as written, newlines included."""
    guard = CredentialValidator(['x"}\n{"u'])
    assert not guard.check_spelled(encode_entries([{"t": "x"}, {"u": 1}]).pieces())
    assert guard.check_spelled(encode_entries([{"t": "y"}, {"u": 1}]).pieces())


@pytest.mark.parametrize(
    ("entries", "refused"),
    [
        pytest.param([{"t": "a"}, {"t": "b"}], None, id="none"),
        pytest.param([{"t": "a"}, {"t": KEY}, {"t": KEY}], 1, id="first-of-two"),
        pytest.param([{KEY: 1}], 0, id="member-name"),
        pytest.param([{"t": "z" * (PIECE - 3) + KEY}], 0, id="across-pieces"),
        pytest.param([], None, id="empty"),
    ],
)
def test_first_refused_names_the_first_entry_holding_a_credential(
    entries: list[dict[str, Any]], refused: int | None
) -> None:
    """DEC-AUTH-6 for a copy stored other than through an appender."""
    assert first_refused(entries, CredentialValidator([KEY]).check_spelled) == refused
    assert first_refused(entries, None) is None


def test_first_refused_a_literal_only_the_joined_lines_spell_names_the_first() -> None:
    guard = CredentialValidator(['x"}\n{"u'])
    assert first_refused([{"t": "x"}, {"u": 1}], guard.check_spelled) == 0


def test_first_refused_checks_the_encoding_without_a_guard() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        first_refused([{"t": float("nan")}], None)


def test_pieces_are_bounded_by_the_piece_size_not_the_text() -> None:
    """What the store holds at once while writing a long text is a few pieces."""
    text = "\x01" * (PIECE * 8)  # each code point spelled in six bytes
    sizes = [len(p) for p in encode_entries([{"t": text}]).pieces()]
    assert sum(sizes) > 6 * len(text)
    assert max(sizes) <= 7 * PIECE
