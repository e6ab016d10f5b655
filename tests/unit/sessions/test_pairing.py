"""Every tool use answered by exactly one tool result (spec "Ordering"):
the repair a resume applies, as a table over conversations."""

from __future__ import annotations

import itertools

import pytest

from agentx.messages.frozen import FrozenDict
from agentx.providers.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentx.sessions.history import History
from agentx.sessions.pairing import NOT_RUN, pair_tool_uses
from agentx.sessions.transcript import Recorded


def ask(*ids: str, text: str = "") -> Message:
    head = (TextBlock(text=text),) if text else ()
    uses = tuple(ToolUseBlock(id=i, name="Bash", input=FrozenDict(command="x")) for i in ids)
    return Message(role="assistant", content=(*head, *uses))


def answer(*ids: str, text: str = "") -> Message:
    results = tuple(ToolResultBlock(tool_use_id=i, content=f"ran {i}") for i in ids)
    tail = (TextBlock(text=text),) if text else ()
    return Message(role="user", content=(*results, *tail))


def prompt(text: str) -> Message:
    return Message(role="user", content=(TextBlock(text=text),))


def missing(i: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=i, content=NOT_RUN, is_error=True)


def done(i: str) -> ToolResultBlock:
    return ToolResultBlock(tool_use_id=i, content=f"ran {i}")


CASES = {
    "paired": ([prompt("go"), ask("a"), answer("a")], None, (), 0),
    "no tools": (
        [prompt("go"), Message(role="assistant", content=(TextBlock(text="hi"),))],
        None,
        (),
        0,
    ),
    "last unanswered": (
        [prompt("go"), ask("a", "b")],
        [prompt("go"), ask("a", "b"), Message(role="user", content=(missing("a"), missing("b")))],
        (2,),
        2,
    ),
    "prompt after unanswered": (
        [prompt("go"), ask("a"), prompt("next")],
        [
            prompt("go"),
            ask("a"),
            Message(role="user", content=(missing("a"), TextBlock(text="next"))),
        ],
        (),
        1,
    ),
    "one of two answered": (
        [ask("a", "b"), answer("b")],
        [ask("a", "b"), Message(role="user", content=(missing("a"), done("b")))],
        (),
        1,
    ),
    "answered out of order": (
        [ask("a", "b"), answer("b", "a")],
        [ask("a", "b"), Message(role="user", content=(done("a"), done("b")))],
        (),
        0,
    ),
    "answered twice": (
        [ask("a"), answer("a", "a")],
        [ask("a"), answer("a")],
        (),
        0,
    ),
    "assistant after unanswered": (
        [ask("a"), Message(role="assistant", content=(TextBlock(text="x"),)), prompt("p")],
        [
            ask("a"),
            Message(role="user", content=(missing("a"),)),
            Message(role="assistant", content=(TextBlock(text="x"),)),
            prompt("p"),
        ],
        (1,),
        1,
    ),
}


@pytest.mark.parametrize(("given", "expected", "inserted", "repaired"), CASES.values(), ids=CASES)
def test_pairing(
    given: list[Message], expected: list[Message] | None, inserted: tuple[int, ...], repaired: int
) -> None:
    paired = pair_tool_uses(given)
    assert paired.messages == tuple(expected if expected is not None else given)
    assert (paired.inserted, paired.repaired) == (inserted, repaired)
    again = pair_tool_uses(paired.messages)  # idempotent
    assert (again.messages, again.inserted, again.repaired) == (paired.messages, (), 0)


class Sink:
    def __init__(self) -> None:
        self.appended: list[dict[str, object]] = []

    def append(self, entries: object) -> None:
        self.appended.extend(entries)  # type: ignore[call-overload]

    def sync(self) -> None: ...

    def start_new(self, session_id: str) -> None: ...

    def close(self) -> None: ...


def _history(sink: Sink) -> History:
    counter = itertools.count(1)
    return History(new_uuid=lambda: f"new-{next(counter)}", transcript=sink)


def test_a_resumed_history_ending_in_an_unanswered_tool_use_stores_the_answer() -> None:
    sink = Sink()
    history = _history(sink)
    history.restore(
        [Recorded(uuid="u1", message=prompt("go")), Recorded(uuid="u2", message=ask("a"))]
    )
    assert history.messages()[-1] == Message(role="user", content=(missing("a"),))
    history.flush()  # the answer is stored with the next turn
    assert len(sink.appended) == 1


def test_a_resumed_history_with_an_answer_missing_in_the_middle_is_repaired_in_memory() -> None:
    sink = Sink()
    history = _history(sink)
    history.restore(
        [
            Recorded(uuid="u1", message=ask("a")),
            Recorded(uuid="u2", message=prompt("next")),
            Recorded(uuid="u3", message=ask("b")),
            Recorded(uuid="u4", message=answer("b")),
        ]
    )
    assert history.messages()[1] == Message(
        role="user", content=(missing("a"), TextBlock(text="next"))
    )
    assert len(history) == 4
    history.flush()
    assert sink.appended == []  # nothing new to store: the next resume repairs it the same way
