"""A model call's text deltas kept compact (:class:`agentx.turns.model_call.TextParts`)."""

from __future__ import annotations

import tracemalloc

import pytest

from agentx.turns.model_call import JOIN_EVERY, TextParts


@pytest.mark.parametrize(
    "count", [0, 1, JOIN_EVERY - 1, JOIN_EVERY, JOIN_EVERY + 1, 3 * JOIN_EVERY]
)
def test_the_joined_text_is_every_delta_in_order(count: int) -> None:
    parts = TextParts()
    pieces = [f"<{i}>" for i in range(count)]
    for piece in pieces:
        parts.append(piece)
    assert bool(parts) is (count > 0)
    assert parts.joined() == "".join(pieces)
    assert parts.joined() is parts.joined()  # joined once
    assert bool(parts) is (count > 0)
    parts.append("more")  # a delta after the join still joins in order
    assert parts.joined() == "".join(pieces) + "more"


def test_many_small_deltas_cost_about_their_text() -> None:
    """A list of 200,000 four-character strings costs about 60 bytes each;
    the compact parts cost about the characters."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        parts = TextParts()
        for i in range(200_000):
            parts.append(f"{i % 10000:04d}")
        held = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert held < 2 * 800_000
    assert len(parts.joined()) == 800_000
