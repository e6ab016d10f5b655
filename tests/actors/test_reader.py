"""The reader actor, whose thread owns stdin (spec "Framing and envelopes",
scenario 1, WIRE-001, WIRE-021, WIRE-EOF-001, and backpressure: no read
before the previous chunk was routed).

The reader's owners are recording callables; every wait is on an event or a
queue; nothing sleeps.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentx.actors.reader import Reader, ReaderHandle, start_reader
from agentx.actors.supervision import EXIT_INTERNAL, ExitLatch
from agentx.messages.decode import InboundRecord, decode_line
from agentx.messages.framing import MAX_RECORD_BYTES, LineFramer
from agentx.messages.inbound import KeepAlive
from agentx.messages.inbound_control import ControlResponse
from agentx.messages.inbound_user import TextPart, UserRecord
from tests.actors.helpers import WAIT

SECRET = "sk-reader-secret-0123456789"

#: Multi-byte UTF-8 (2, 3 and 4 bytes), CRLF endings, a blank line and an
#: unterminated final record.
STREAM = (
    '{"type":"user","message":{"role":"user","content":"héllo ✓ 😀"},'
    '"parent_tool_use_id":null,"session_id":""}\r\n'
    '{"type":"keep_alive"}\n'
    "\n"
    '{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}}\r\n'
    '{"type":"user","message":{"role":"user","content":"last 😀"},'
    '"parent_tool_use_id":null,"session_id":""}'
).encode()

EOF = "eof"


@dataclass(frozen=True)
class Fatal:
    """An ``on_fatal`` report."""

    line: int
    reason: str


_HANDLES: list[ReaderHandle] = []


def started(read_chunk: Callable[[], bytes], reader: Reader) -> ReaderHandle:
    handle = start_reader(read_chunk, reader)
    _HANDLES.append(handle)
    return handle


@pytest.fixture(autouse=True)
def _stop_readers() -> Iterator[None]:
    yield
    while _HANDLES:
        assert _HANDLES.pop().stop(WAIT)


class Owners:
    """The reader's three callbacks, recorded in one queue in call order."""

    def __init__(self, *, block_first_route: bool = False) -> None:
        self.events: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.batches: list[tuple[InboundRecord, ...]] = []
        self.routed = 0
        self.entered = threading.Event()
        self.unblock = threading.Event()
        if not block_first_route:
            self.unblock.set()

    def route(self, records: tuple[InboundRecord, ...]) -> None:
        self.entered.set()
        assert self.unblock.wait(WAIT)
        assert records, "the reader never routes an empty batch"
        self.batches.append(records)
        self.routed += 1
        for record in records:
            self.events.put(record)

    def on_eof(self) -> None:
        self.events.put(EOF)

    def on_fatal(self, line_number: int, reason: str) -> None:
        self.events.put(Fatal(line_number, reason))

    def start(self, read_chunk: Callable[[], bytes]) -> ReaderHandle:
        return started(
            read_chunk, Reader(route=self.route, on_eof=self.on_eof, on_fatal=self.on_fatal)
        )

    def until_end(self) -> list[object]:
        """Every event up to and including the EOF or the fatal report."""
        seen: list[object] = []
        while not seen or (seen[-1] != EOF and not isinstance(seen[-1], Fatal)):
            seen.append(self.events.get(timeout=WAIT))
        return seen


def reads(chunks: Iterable[bytes]) -> Callable[[], bytes]:
    """A read_chunk over fixed chunks, then b"" (EOF) for ever."""
    it = iter(chunks)
    return lambda: next(it, b"")


def expected(data: bytes) -> list[object]:
    """The records one unsplit stream decodes to, in order, then EOF."""
    framer = LineFramer()
    lines = framer.feed(data) + framer.close()
    return [*(decode_line(line) for line in lines), EOF]


def split(data: bytes, cuts: Iterable[int]) -> list[bytes]:
    points = [0, *sorted(set(cuts)), len(data)]
    return [data[a:b] for a, b in itertools.pairwise(points) if b > a]


def run(chunks: list[bytes]) -> list[object]:
    return pump_through(reads(chunks))


def pump_through(read_chunk: Callable[[], bytes]) -> list[object]:
    """Pump the input through a reader; every event up to the end, checking
    that nothing at all follows it (on_eof or on_fatal runs once, last)."""
    owners = Owners()
    handle = owners.start(read_chunk)
    seen = owners.until_end()
    assert handle.ref.actor_stopped.wait(WAIT)  # it stops itself after EOF
    assert owners.events.empty()
    return seen


def test_the_reference_stream_routes_every_record_then_eof() -> None:
    whole = expected(STREAM)
    assert [type(r).__name__ for r in whole] == [
        "UserRecord",
        "KeepAlive",
        "ControlRequest",
        "UserRecord",
        "str",
    ]
    first = whole[0]
    assert isinstance(first, UserRecord)
    assert first.content == (TextPart(text="héllo ✓ 😀"),)


def _cut_inside(char: str) -> int:
    return STREAM.index(char.encode()) + 1


@pytest.mark.parametrize(
    "cuts",
    [
        [_cut_inside("é")],
        [_cut_inside("✓"), _cut_inside("✓") + 1],
        [_cut_inside("😀"), _cut_inside("😀") + 2],
        [STREAM.index(b"\r\n") + 1],
        [STREAM.index(b"\n\n") + 1],
        [len(STREAM) - 1],
        list(range(1, len(STREAM))),
    ],
    ids=[
        "inside-2-byte",
        "inside-3-byte",
        "inside-4-byte",
        "between-cr-and-lf",
        "before-blank-line",
        "inside-unterminated-tail",
        "every-byte",
    ],
)
def test_chunks_split_anywhere_route_the_same_records(cuts: list[int]) -> None:
    """Spec "Framing and envelopes" / scenario 1: the reader accepts arbitrary
    chunks (framing is on bytes), keeps the partial tail and skips blank lines."""
    assert run(split(STREAM, cuts)) == expected(STREAM)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(min_value=1, max_value=len(STREAM) - 1), max_size=12))
def test_any_split_routes_the_same_records(cuts: list[int]) -> None:
    assert run(split(STREAM, cuts)) == expected(STREAM)


def test_the_unterminated_final_record_is_routed_before_eof() -> None:
    """WIRE-EOF-001 / scenario 13: an unterminated final control_response is
    decoded and routed first (so it resolves its waiter), then on_eof once."""
    tail = b'{"type":"control_response","response":{"subtype":"success","request_id":"r1"}}'
    seen = run([b'{"type":"keep_alive"}\n' + tail[:20], tail[20:]])
    assert seen[0] == KeepAlive(line=1)
    response = seen[1]
    assert isinstance(response, ControlResponse)
    assert (response.line, response.request_id, response.subtype) == (2, "r1", "success")
    assert seen[2:] == [EOF]


def test_after_a_fatal_error_stdin_keeps_draining_until_eof() -> None:
    """WIRE-001 ends the input, but later chunks are still taken and dropped:
    a host that keeps writing never blocks on a full pipe."""
    later = 40
    chunks = [b"not json\n", *([b'{"type":"keep_alive"}\n'] * later)]
    read = reads(chunks)
    calls = 0

    def counting_read() -> bytes:
        nonlocal calls
        calls += 1
        return read()

    seen = pump_through(counting_read)
    assert len(seen) == 1 and isinstance(seen[0], Fatal)  # nothing routed
    assert calls == len(chunks) + 1  # every chunk, then EOF


def test_a_read_error_ends_input_like_eof() -> None:
    """A failing read closes input: the tail is routed, then on_eof."""
    chunks = iter([b'{"type":"keep_alive"}\n{"type":"keep_alive"}'])

    def read() -> bytes:
        chunk = next(chunks, None)
        if chunk is None:
            raise OSError(5, "EIO")
        return chunk

    assert pump_through(read) == [KeepAlive(line=1), KeepAlive(line=2), EOF]


LONGEST = b'{"type":"keep_alive","pad":"' + b"x" * (MAX_RECORD_BYTES - 30) + b'"}'
assert len(LONGEST) == MAX_RECORD_BYTES


@pytest.mark.parametrize(
    ("chunks", "before", "fatal_line", "reason"),
    [
        (
            [b'{"type":"keep_alive"}\n{"type":"keep_alive"}\n{"k":"' + SECRET.encode() + b'"\n'],
            2,
            3,
            "invalid JSON",
        ),
        (
            [b'{"type":"keep_alive"}\n', b'["' + SECRET.encode() + b'"]\n{"type":"keep_alive"}\n'],
            1,
            2,
            "a record must be a JSON object",
        ),
        ([b'{"type":"keep_alive"}\n{"x":"\xff' + SECRET.encode() + b'"}'], 1, 2, "invalid UTF-8"),
        (
            [b'{"type":"keep_alive"}\n' + LONGEST + b'x\n{"type":"keep_alive"}\n'],
            1,
            2,
            f"record exceeds {MAX_RECORD_BYTES} bytes",
        ),
        (
            [b'{"type":"keep_alive"}\n' + LONGEST[:-1], b"xx", b'\n{"type":"keep_alive"}\n'],
            1,
            2,
            f"record exceeds {MAX_RECORD_BYTES} bytes",
        ),
    ],
    ids=[
        "invalid-json",
        "not-an-object",
        "invalid-utf8-in-tail",
        "one-byte-past-the-limit",
        "unterminated-one-byte-past-the-limit",
    ],
)
def test_a_fatal_line_routes_what_preceded_it_then_reports_once(
    chunks: list[bytes], before: int, fatal_line: int, reason: str
) -> None:
    """WIRE-001 / WIRE-021: the lines framed before the fatal one are routed, then one
    on_fatal naming the line with a content-free reason; nothing after it,
    not even on_eof."""
    seen = run(chunks)
    assert seen[:-1] == [KeepAlive(line=n) for n in range(1, before + 1)]
    fatal = seen[-1]
    assert isinstance(fatal, Fatal)
    line, text = fatal.line, fatal.reason
    assert line == fatal_line
    assert text.startswith(reason)
    assert SECRET not in text and "x" * 64 not in text


def test_a_record_at_the_limit_is_routed() -> None:
    """The framing limit: a record of exactly MAX_RECORD_BYTES is accepted."""
    seen = run([LONGEST[: len(LONGEST) // 2], LONGEST[len(LONGEST) // 2 :] + b"\n"])
    assert seen == [KeepAlive(line=1), EOF]


def test_stdin_is_read_only_after_the_previous_chunk_was_routed() -> None:
    """Backpressure: the reader actor routes each chunk before it reads the
    next, so stdin is never read ahead of the framing."""
    total = 6
    owners = Owners()
    calls: list[tuple[int, int]] = []  # (read number, chunks routed by then)

    def read() -> bytes:
        calls.append((len(calls) + 1, owners.routed))
        return b'{"type":"keep_alive"}\n' if len(calls) <= total else b""

    owners.start(read)
    assert owners.until_end() == [*(KeepAlive(line=n) for n in range(1, total + 1)), EOF]
    assert calls == [(n, n - 1) for n in range(1, total + 2)]


def test_after_stop_nothing_is_routed_and_the_actor_ends() -> None:
    """An endless input: once ``stop`` returned True no record is routed, and
    the actor ends after its next read."""
    owners = Owners()
    handle = owners.start(lambda: b'{"type":"keep_alive"}\n')
    assert owners.events.get(timeout=WAIT) == KeepAlive(line=1)
    assert handle.stop(WAIT)
    routed = owners.routed
    assert handle.ref.actor_stopped.wait(WAIT)
    assert owners.routed == routed


def test_stop_waits_for_the_chunk_being_routed() -> None:
    """``stop`` cannot finish while a chunk is being routed; once it returns
    True, not even the EOF that follows is reported."""
    owners = Owners(block_first_route=True)
    eof_read = threading.Event()
    chunks = iter([b'{"type":"keep_alive"}\n'])

    def read() -> bytes:
        chunk = next(chunks, None)
        if chunk is not None:
            return chunk
        assert eof_read.wait(WAIT)
        return b""

    handle = owners.start(read)
    assert owners.entered.wait(WAIT)
    assert not handle.stop(0)  # the first route is held: stop cannot finish
    owners.unblock.set()
    assert owners.events.get(timeout=WAIT) == KeepAlive(line=1)
    assert handle.stop(WAIT)
    eof_read.set()
    assert handle.ref.actor_stopped.wait(WAIT)
    assert owners.events.empty()


def test_a_read_blocked_on_an_open_stdin_never_holds_stop() -> None:
    """The host stops the reader while stdin stays open (an output failure, a
    fatal line): stop returns at once and nothing read later is routed."""
    owners = Owners()
    release = threading.Event()
    chunks = iter([b'{"type":"keep_alive"}\n'])

    def read() -> bytes:
        chunk = next(chunks, None)
        if chunk is not None:
            return chunk
        assert release.wait(WAIT)
        return b'{"type":"keep_alive"}\n'

    handle = owners.start(read)
    assert owners.events.get(timeout=WAIT) == KeepAlive(line=1)
    assert handle.stop(0)
    release.set()
    assert handle.ref.actor_stopped.wait(WAIT)
    assert owners.routed == 1


def test_a_routing_defect_is_the_readers_failure_and_routes_nothing_more() -> None:
    """A raising owner is an internal failure (DECISIONS section 8): the
    supervision tree hears of it as the reader's, with the exception itself,
    and no later chunk is routed (a chunk is never dropped silently)."""
    owners = Owners()
    defect = RuntimeError("defect")

    def route(records: tuple[InboundRecord, ...]) -> None:
        raise defect

    latch = ExitLatch()
    reader = Reader(route=route, on_eof=owners.on_eof, on_fatal=owners.on_fatal)
    handle = start_reader(
        reads([b'{"type":"keep_alive"}\n', b'{"type":"keep_alive"}\n']), reader, latch
    )
    assert latch.wait(WAIT) == EXIT_INTERNAL
    assert handle.ref.actor_stopped.wait(WAIT)
    assert owners.events.empty()


@pytest.mark.parametrize(
    ("chunks", "batches"),
    [
        ([b'{"type":"keep_alive"}\n' * 3], [[1, 2, 3]]),
        (
            [b'{"type":"keep_alive"}\n{"type":"keep', b'_alive"}\n{"type":"keep_alive"}'],
            [[1], [2], [3]],
        ),
        (
            [b'{"type":"keep_alive"}\n\n{"type":"keep_alive"}\n{"type":', b'"keep_alive"}\n'],
            [[1, 3], [4]],
        ),
        ([b'{"type":"keep_alive"}\n' * 2 + b'{"type":1}\n{"type":"keep_alive"}\n'], [[1, 2]]),
    ],
    ids=["one-chunk-one-batch", "tail-at-eof", "split-record", "fatal-line-ends-the-batch"],
)
def test_each_chunk_routes_its_records_as_one_batch(
    chunks: list[bytes], batches: list[list[int]]
) -> None:
    """The records one chunk completes reach ``route`` in one call, in arrival
    order (the router answers a run of control requests with one write); the
    unterminated tail is its own batch at EOF, and records before a fatal
    line are one batch before the report."""
    owners = Owners()
    owners.start(reads(chunks))
    seen = owners.until_end()
    assert [[record.line for record in batch] for batch in owners.batches] == batches
    assert len(seen) == sum(map(len, batches)) + 1
