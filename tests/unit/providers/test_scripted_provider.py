"""The offline scripted provider (DEC-SCRIPT-1): strict scripts, echo, steps, cancellation."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.frozen import FrozenDict, freeze
from agentx.providers.base import (
    Cancelled,
    MediaBlock,
    Message,
    ModelRequest,
    ProviderError,
    RawEvent,
    Stop,
    StreamItem,
    TextBlock,
    TextDelta,
    ToolCall,
    ToolResultBlock,
    Usage,
)
from agentx.providers.scripted import (
    ScriptedClient,
    ScriptError,
    ScriptTurn,
    load_script_document,
    parse_script_document,
)
from agentx.turns.cancel import CancelScope

SECRET = "sk-do-not-echo-0123456789"


def script(*turns: dict[str, Any]) -> bytes:
    return json.dumps({"version": 1, "turns": list(turns)}).encode()


def user(*blocks: TextBlock | MediaBlock | ToolResultBlock) -> Message:
    return Message(role="user", content=blocks)


def ask(*messages: Message, system: str = "", stream_events: bool = False) -> ModelRequest:
    return ModelRequest(
        model="scripted-1", system=system, messages=messages, stream_events=stream_events
    )


def run(client: ScriptedClient, request: ModelRequest) -> list[StreamItem]:
    return list(client.stream(request, CancelScope()))


def client_for(*turns: dict[str, Any]) -> ScriptedClient:
    return ScriptedClient(model="scripted-1", turns=parse_script_document(script(*turns)).turns)


# -- parse_script_document -------------------------------------------------------------


def test_parse_valid_script() -> None:
    turns = parse_script_document(
        script(
            {
                "steps": [
                    {"text": "hi"},
                    {"tool_use": {"name": "Bash", "input": {"command": "ls", "args": [1]}}},
                    {"usage": {"input_tokens": 3, "output_tokens": 0}},
                    {"sleep_ms": 0},
                    {"error": "rate_limit"},
                ],
                "stop_reason": "max_tokens",
            },
            {"steps": [], "stop_reason": None},
            {"steps": []},
        )
    ).turns
    assert turns == (
        ScriptTurn(
            steps=(
                freeze({"text": "hi"}),
                freeze({"tool_use": {"name": "Bash", "input": {"command": "ls", "args": [1]}}}),
                freeze({"usage": {"input_tokens": 3, "output_tokens": 0}}),
                freeze({"sleep_ms": 0}),
                freeze({"error": "rate_limit"}),
            ),
            stop_reason="max_tokens",
        ),
        ScriptTurn(steps=(), stop_reason=None),
        ScriptTurn(steps=(), stop_reason=None),
    )
    assert isinstance(turns[0].steps[1]["tool_use"]["input"], FrozenDict)


def test_parse_empty_turns() -> None:
    assert parse_script_document(script()).turns == ()


def _bad(doc: Any) -> bytes:
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"{", "script is not strict JSON: invalid JSON", id="truncated"),
        pytest.param(b"\xff", "script is not strict JSON: invalid UTF-8", id="bad-utf8"),
        pytest.param(
            b'{"version":1,"version":1,"turns":[]}',
            "script is not strict JSON: ambiguous JSON: duplicate member name",
            id="duplicate-member",
        ),
        pytest.param(
            _bad([]),
            "script must be an object with version, turns and optional suggestions",
            id="array",
        ),
        pytest.param(
            _bad({"version": 1}),
            "script must be an object with version, turns and optional suggestions",
            id="no-turns",
        ),
        pytest.param(
            _bad({"version": 1, "turns": [], "model": "x"}),
            "script must be an object with version, turns and optional suggestions",
            id="extra-member",
        ),
        pytest.param(_bad({"version": 2, "turns": []}), "script version must be 1", id="v2"),
        pytest.param(_bad({"version": True, "turns": []}), "script version must be 1", id="vtrue"),
        pytest.param(_bad({"version": "1", "turns": []}), "script version must be 1", id="vstr"),
        pytest.param(
            _bad({"version": 1, "turns": {}}), "script turns must be an array", id="turns-object"
        ),
        pytest.param(
            _bad({"version": 1, "turns": [[]]}),
            "turns[0] must be an object with steps and optional stop_reason",
            id="turn-array",
        ),
        pytest.param(
            _bad({"version": 1, "turns": [{"steps": [], "model": "m"}]}),
            "turns[0] must be an object with steps and optional stop_reason",
            id="turn-extra",
        ),
        pytest.param(
            _bad({"version": 1, "turns": [{"steps": []}, {}]}),
            "turns[1].steps must be an array",
            id="steps-missing",
        ),
        pytest.param(
            _bad({"version": 1, "turns": [{"steps": "hi"}]}),
            "turns[0].steps must be an array",
            id="steps-string",
        ),
        pytest.param(
            _bad({"version": 1, "turns": [{"steps": [], "stop_reason": 3}]}),
            "turns[0].stop_reason must be a string",
            id="stop-int",
        ),
    ],
)
def test_parse_document_errors(data: bytes, message: str) -> None:
    with pytest.raises(ScriptError, match=f"^{re.escape(message)}$"):
        parse_script_document(data)


@pytest.mark.parametrize(
    ("step", "message"),
    [
        pytest.param({}, "must be an object with exactly one member", id="empty"),
        pytest.param("text", "must be an object with exactly one member", id="string"),
        pytest.param(
            {"text": SECRET, "sleep_ms": 1}, "must be an object with exactly one member", id="two"
        ),
        pytest.param({"speak": SECRET}, "is not a valid step", id="unknown-kind"),
        pytest.param({"text": 5}, "is not a valid step", id="text-int"),
        pytest.param({"tool_use": {"name": "Bash"}}, "is not a valid step", id="tool-no-input"),
        pytest.param(
            {"tool_use": {"name": "", "input": {}}}, "is not a valid step", id="tool-empty-name"
        ),
        pytest.param(
            {"tool_use": {"name": "Bash", "input": [SECRET]}},
            "is not a valid step",
            id="tool-input-array",
        ),
        pytest.param(
            {"tool_use": {"name": "Bash", "input": {}, "id": "t"}},
            "is not a valid step",
            id="tool-extra",
        ),
        pytest.param({"usage": {"tokens": 1}}, "is not a valid step", id="usage-unknown-key"),
        pytest.param({"usage": {"input_tokens": -1}}, "is not a valid step", id="usage-negative"),
        pytest.param({"usage": {"input_tokens": True}}, "is not a valid step", id="usage-bool"),
        pytest.param({"usage": {"input_tokens": 1.5}}, "is not a valid step", id="usage-float"),
        pytest.param({"sleep_ms": -1}, "is not a valid step", id="sleep-negative"),
        pytest.param({"sleep_ms": 1.5}, "is not a valid step", id="sleep-float"),
        pytest.param({"sleep_ms": False}, "is not a valid step", id="sleep-bool"),
        pytest.param({"error": "cancelled"}, "is not a valid step", id="error-unknown-category"),
        pytest.param({"error": SECRET}, "is not a valid step", id="error-content"),
    ],
)
def test_parse_step_errors_name_the_path_never_the_content(step: Any, message: str) -> None:
    data = script({"steps": [{"text": "ok"}]}, {"steps": [{"text": "ok"}, step]})
    with pytest.raises(ScriptError) as info:
        parse_script_document(data)
    assert str(info.value) == f"turns[1].steps[1] {message}"
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    "category",
    [
        "authentication_failed",
        "billing_error",
        "rate_limit",
        "invalid_request",
        "server_error",
        "unknown",
        "max_output_tokens",
    ],
)
def test_every_spec_error_category_is_a_valid_step(category: str) -> None:
    (turn,) = parse_script_document(script({"steps": [{"error": category}]})).turns
    assert turn.steps == (freeze({"error": category}),)


def test_load_script_reads_a_real_file(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_bytes(script({"steps": [{"text": "from file"}]}))
    assert load_script_document(path).turns == (
        ScriptTurn(steps=(freeze({"text": "from file"}),), stop_reason=None),
    )


@pytest.mark.parametrize(
    ("make", "says"),
    [
        pytest.param(lambda p: p / "missing.json", "cannot be read", id="missing"),
        pytest.param(lambda p: p, "is a directory, not a regular file", id="directory"),
        pytest.param(
            lambda p: Path("/dev/zero"), "is a character device, not a regular file", id="zero"
        ),
    ],
)
def test_load_script_unreadable(tmp_path: Path, make: Any, says: str) -> None:
    """DECISIONS section 8: the script's path is auth.json's, so never named."""
    with pytest.raises(ScriptError, match=rf"^script file {says}$"):
        load_script_document(make(tmp_path))


# -- echo ---------------------------------------------------------------------


def test_echo_streams_the_latest_user_text_in_deltas() -> None:
    request = ask(
        user(TextBlock(text="first")),
        Message(role="assistant", content=(TextBlock(text="ok"),)),
        user(TextBlock(text="hello  big "), TextBlock(text="world")),
    )
    chars = len("hello  big ") + len("world")  # the newest message only
    assert run(ScriptedClient(model="scripted-1"), request) == [
        TextDelta(text="hello  "),
        TextDelta(text="big "),
        TextDelta(text="world"),
        Usage(input_tokens=(chars + 3) // 4, output_tokens=(len("hello  big world") + 3) // 4),
        Stop(stop_reason="end_turn"),
    ]


def test_echo_skips_user_messages_with_only_tool_results() -> None:
    request = ask(
        user(TextBlock(text="question")),
        user(ToolResultBlock(tool_use_id="toolu_1", content="out")),
    )
    items = run(ScriptedClient(model="scripted-1"), request)
    assert [i for i in items if isinstance(i, TextDelta)] == [TextDelta(text="question")]


def test_echo_names_attachments() -> None:
    image = MediaBlock(
        kind="image",
        mime_type="image/png",
        name="a.png",
        data=b"\x89PNG",
        sha256="ab" * 32,
        size_bytes=4,
    )
    doc = MediaBlock(
        kind="document",
        mime_type="application/pdf",
        name="b.pdf",
        data=b"%PDF",
        sha256="cd" * 32,
        size_bytes=9,
    )
    items = run(ScriptedClient(model="m"), ask(user(TextBlock(text="see"), image, doc)))
    text = "".join(i.text for i in items if isinstance(i, TextDelta))
    assert text == (
        f"see\n[image a.png 4 bytes sha256={'ab' * 32}]"
        f"\n[document b.pdf 9 bytes sha256={'cd' * 32}]"
    )


def test_echo_attachment_without_text() -> None:
    image = MediaBlock(
        kind="image", mime_type="image/png", name="x.png", data=b"", sha256="00", size_bytes=0
    )
    items = run(ScriptedClient(model="m"), ask(user(image)))
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == (
        "[image x.png 0 bytes sha256=00]"
    )


def test_echo_with_no_user_text_is_one_empty_delta() -> None:
    assert run(ScriptedClient(model="m"), ask(system="abcd")) == [
        TextDelta(text=""),
        Usage(input_tokens=1, output_tokens=0),
        Stop(stop_reason="end_turn"),
    ]


def test_echo_stream_events() -> None:
    items = run(
        ScriptedClient(model="scripted-1"), ask(user(TextBlock(text="a b")), stream_events=True)
    )
    events = [i.event for i in items if isinstance(i, RawEvent)]
    assert events == [
        {
            "type": "message_start",
            "message": {
                "type": "message",
                "role": "assistant",
                "model": "scripted-1",
                "content": (),
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "a "}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "b"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 1},
        },
        {"type": "message_stop"},
    ]
    kinds = [type(i).__name__ for i in items]
    assert kinds == [
        "RawEvent",
        "RawEvent",
        "RawEvent",
        "TextDelta",
        "RawEvent",
        "TextDelta",
        "Usage",
        "RawEvent",
        "RawEvent",
        "RawEvent",
        "Stop",
    ]


# -- scripted turns -----------------------------------------------------------


@pytest.mark.parametrize(
    ("turn", "expected"),
    [
        pytest.param(
            {"steps": [{"text": "one two"}]},
            [TextDelta(text="one "), TextDelta(text="two"), Stop(stop_reason="end_turn")],
            id="text-only-ends-turn",
        ),
        pytest.param(
            {
                "steps": [
                    {"text": "run"},
                    {"usage": {"input_tokens": 7, "output_tokens": 2}},
                ],
                "stop_reason": "max_tokens",
            },
            [
                TextDelta(text="run"),
                Usage(input_tokens=7, output_tokens=2),
                Stop(stop_reason="max_tokens"),
            ],
            id="usage-and-explicit-stop",
        ),
        pytest.param(
            {"steps": [{"text": "x"}, {"error": "server_error"}, {"text": "never"}]},
            [
                TextDelta(text="x"),
                ProviderError(category="server_error", message="scripted server_error error"),
            ],
            id="error-ends-the-stream",
        ),
        pytest.param(
            {"steps": [{"sleep_ms": 0}, {"text": "after"}]},
            [TextDelta(text="after"), Stop(stop_reason="end_turn")],
            id="sleep-zero",
        ),
        pytest.param({"steps": []}, [Stop(stop_reason="end_turn")], id="no-steps"),
    ],
)
def test_scripted_turn_items(turn: dict[str, Any], expected: list[StreamItem]) -> None:
    assert run(client_for(turn), ask(user(TextBlock(text="hi")))) == expected


@pytest.mark.parametrize(
    ("stop_reason", "expected"),
    [pytest.param(None, "tool_use", id="default"), pytest.param("end_turn", "end_turn", id="set")],
)
def test_tool_use_step(stop_reason: str | None, expected: str) -> None:
    turn: dict[str, Any] = {
        "steps": [
            {"tool_use": {"name": "Read", "input": {"file_path": "a"}}},
            {"tool_use": {"name": "Bash", "input": {"command": "ls"}}},
        ]
    }
    if stop_reason is not None:
        turn["stop_reason"] = stop_reason
    items = run(client_for(turn), ask(user(TextBlock(text="hi"))))
    calls = [i for i in items if isinstance(i, ToolCall)]
    assert [(c.name, c.input) for c in calls] == [
        ("Read", {"file_path": "a"}),
        ("Bash", {"command": "ls"}),
    ]
    assert all(re.fullmatch(r"toolu_[0-9a-f]{24}", c.id) for c in calls)
    assert calls[0].id != calls[1].id
    assert all(isinstance(c.input, FrozenDict) for c in calls)
    assert items[-1] == Stop(stop_reason=expected)


def test_turn_i_answers_request_i_then_echo() -> None:
    client = client_for({"steps": [{"text": "first"}]}, {"steps": [{"text": "second"}]})
    request = ask(user(TextBlock(text="echoed")))
    texts = [
        "".join(i.text for i in run(client, request) if isinstance(i, TextDelta)) for _ in range(4)
    ]
    assert texts == ["first", "second", "echoed", "echoed"]


def test_scripted_stream_events_use_the_scripted_stop_reason() -> None:
    client = client_for(
        {"steps": [{"text": "t"}, {"usage": {"output_tokens": 5}}], "stop_reason": "max_tokens"}
    )
    items = run(client, ask(user(TextBlock(text="x")), stream_events=True))
    events = [i.event for i in items if isinstance(i, RawEvent)]
    assert events[-2] == {
        "type": "message_delta",
        "delta": {"stop_reason": "max_tokens"},
        "usage": {"output_tokens": 5},
    }
    assert events[2] == {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "t"},
    }


# -- cancellation -------------------------------------------------------------


def test_already_cancelled_raises_and_still_consumes_the_turn() -> None:
    client = client_for({"steps": [{"text": "first"}]}, {"steps": [{"text": "second"}]})
    scope = CancelScope()
    scope.cancel()
    with pytest.raises(Cancelled):
        next(client.stream(ask(user(TextBlock(text="x"))), scope))
    items = run(client, ask(user(TextBlock(text="x"))))
    assert items[0] == TextDelta(text="second")


def test_cancel_between_steps() -> None:
    client = client_for({"steps": [{"text": "one"}, {"text": "two"}]})
    scope = CancelScope()
    stream = client.stream(ask(user(TextBlock(text="x"))), scope)
    assert next(stream) == TextDelta(text="one")
    scope.cancel()
    with pytest.raises(Cancelled):
        next(stream)


class _ObservedScope(CancelScope):
    """A real CancelScope that reports when a sleep starts waiting on it."""

    __slots__ = ("sleeping",)

    def __init__(self) -> None:
        super().__init__()
        self.sleeping = threading.Event()

    def wait(self, timeout: float) -> bool:
        self.sleeping.set()
        return super().wait(timeout)


def test_sleep_honours_a_cancel_from_another_thread() -> None:
    """DEC-SCRIPT-1: a one-minute sleep ends as soon as another thread cancels."""
    client = client_for({"steps": [{"text": "before"}, {"sleep_ms": 60_000}, {"text": "after"}]})
    scope = _ObservedScope()
    stream: Iterator[StreamItem] = client.stream(ask(user(TextBlock(text="x"))), scope)
    assert next(stream) == TextDelta(text="before")

    def cancel_when_sleeping() -> None:
        if scope.sleeping.wait(timeout=30):
            scope.cancel()

    canceller = threading.Thread(target=cancel_when_sleeping)
    canceller.start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        next(stream)
    elapsed = time.monotonic() - started
    canceller.join()
    assert scope.sleeping.is_set()
    assert elapsed < 5.0
