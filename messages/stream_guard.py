"""The stream-aware output guard (DEC-AUTH-6).

WIRE-013 checks each record alone, and each ``stream_event`` delta is safe on
its own; but every streaming UI joins the deltas of one content block, so
``"SENTINEL_"`` then ``"KEY_123"`` shows the credential ``SENTINEL_KEY_123``.
:class:`StreamGuard` reads the ``stream_event`` records in the order they are
written and refuses the record whose delta would complete a literal of the
credential union in any joined stream. The writer applies it before the
per-record check; a refusal latches the encoder like a WIRE-013 rejection
(exit 3, credential-free diagnostic).

What a UI joins (the streams). Each ``stream_event``'s ``event`` is read in
the shape of the provider that produced it, separately per
``parent_tool_use_id``:

* Messages API events (``type``). ``content_block_start`` opens block
  ``index`` afresh, seeded with the string members of ``content_block``;
  ``content_block_delta`` (every delta type) appends each string member of
  ``delta`` to the stream of that block and member path (``text``,
  ``thinking``, ``signature``, ``partial_json``, ``citation/cited_text``...);
  ``content_block_stop`` ends the block; ``message_start`` and
  ``message_stop`` end every block. The ``text_delta`` texts of all blocks
  of one message are one more stream: agentx joins them into the
  ``assistant`` record's text, which WIRE-013 refuses if it holds a literal,
  so refusing the delta that completes one there first ends the session no
  more often, and keeps the second half off a UI that prints text deltas in
  a row.
* Chat Completions chunks (``choices``). Each choice ``index`` is a block and
  each string member of its ``delta`` a stream (``content``,
  ``reasoning_content``, ``refusal``; tool calls keyed by their own ``index``:
  ``tool_calls/<index>/function/arguments``). A ``finish_reason`` does not end
  the choice: a later chunk of the same choice still joins it (a UI keyed on
  the choice index keeps appending). A chunk of another completion (a new
  ``id``) ends the choices of the one before.
* Any other shape (the Responses API's ``response.output_text.delta``, a
  provider not written yet): shape-agnostic. Every string member of the event
  (nested ones too, up to :data:`MAX_DELTA_DEPTH`) joins one stream per member
  path of its owner, whatever the event, so ``{"delta": "SENTINEL_"}`` then
  ``{"delta": "KEY_123"}`` is refused in any shape; and the same again per
  *channel*, the event's identifiers (members named ``...id`` with a string,
  ``...index`` with an integer: ``item_id``, ``output_index``...), so deltas
  of two items interleaved are joined per item as a UI joins them. An event
  whose ``type`` ends in ``done``, ``completed``, ``stop``, ``end`` or
  ``finished`` is not joined (it repeats what came before, and the per-record
  check reads it whole) and ends its channel, or, with no identifiers, every
  stream of this shape of its owner. At most :data:`MAX_CHANNELS` channels
  are followed per writer; the least recently used is dropped (the per-path
  streams are never dropped).

Members named ``type`` are discriminators, never joined. The Messages events
that carry no delta (``message_delta``, ``ping``, ``error``) are left to the
per-record check.

Each stream is searched in two views, only across the new delta and the tail
kept before it (so a delta refused here would have completed the literal):

1. the joined decoded text, for every spelling of every literal: raw, as the
   encoder escapes it, and ``\\uXXXX``-escaped (``string_spellings``);
2. the joined text with every JSON escape decoded wherever it occurs (a split
   ``\\u00`` + ``41`` included), for every literal: what a UI sees that parses
   the joined tool input JSON, or un-escapes text. Kept only once the stream
   has held a backslash; before that it equals view 1. ``\\uXXXX`` escapes
   decode to UTF-16 code units, so when a literal holds a character beyond
   U+FFFF both sides are compared as UTF-16 code units.

Memory is bounded: per stream, the last ``longest needle - 1`` characters of
each view plus an incomplete escape (at most 5 characters); at most
:data:`MAX_OPEN_STREAMS` streams; member paths at most
:data:`MAX_DELTA_DEPTH` deep. Past either bound the record is refused: a
stream the guard cannot follow is not written (fail closed).

Sans-IO: records in, a verdict out; one instance belongs to one writer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from functools import cache
from typing import Any, Final

from agentx.messages.encode import string_spellings
from agentx.messages.guard import FailureKind, FailureKindName, minimal_needles

#: Open streams (block x member path) held at once; one more is refused.
MAX_OPEN_STREAMS: Final = 1024
#: Deepest member path followed inside a delta; one level more is refused.
MAX_DELTA_DEPTH: Final = 8
#: Channels of unknown-shape events followed at once; the least recently used goes.
MAX_CHANNELS: Final = 64
#: Chat Completions owners whose last chunk ``id`` is remembered.
MAX_OWNERS: Final = 1024

#: The Messages API events; any other ``type`` is an unknown shape.
_MESSAGES_EVENTS: Final = frozenset(
    {"message_start", "message_delta", "message_stop", "ping", "error"}
    | {"content_block_start", "content_block_delta", "content_block_stop"}
)
#: An unknown-shape event whose ``type`` ends so closes its channel.
_ENDINGS: Final = ("done", "completed", "stop", "end", "finished")


@cache
def _escape() -> re.Pattern[str]:
    """One JSON escape, or an incomplete one at the very end of the text;
    compiled on first use, not at import (start-up, DEC-CLI-3)."""
    return re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt])|(u[0-9a-fA-F]{0,3})?\Z)')


_SIMPLE: Final[Mapping[str, str]] = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}

#: The block key of a message's text across blocks (an index key is an int
#: or a ``repr``, never this).
_MESSAGE: Final = "message"

Path = tuple[str | int, ...]
#: A block: its owner and its key: a Messages block index, the message text,
#: ``("choice", index)``, ``("path",)`` or ``("channel", identifiers)``.
Block = tuple[str | None, Hashable]


def unescape(text: str) -> tuple[str, str]:
    """``text`` with every complete JSON escape decoded, and the incomplete
    escape it ends with (``\\``, ``\\u``, ... ``\\uABC``), which is left out.

    Escapes are read left to right, so ``\\\\u0041`` is a backslash and
    ``u0041``. An invalid escape (``\\x``) stays as written, as do lone
    surrogates: each ``\\uXXXX`` is one UTF-16 code unit."""
    pending = ""

    def one(match: re.Match[str]) -> str:
        nonlocal pending
        unit, simple = match.group(1), match.group(2)
        if unit is not None:
            return chr(int(unit, 16))
        if simple is not None:
            return _SIMPLE[simple]
        pending = match.group()
        return ""

    return _escape().sub(one, text), pending


def utf16_units(text: str) -> str:
    """``text`` with every character beyond U+FFFF as its surrogate pair."""
    if text.isascii():
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(map(chr, memoryview(data).cast("H")))


class _Stream:
    """The tails of one joined stream (see the module docstring)."""

    __slots__ = ("decoded", "pending", "raw")

    def __init__(self) -> None:
        self.raw = ""
        self.decoded: str | None = None
        self.pending = ""


def _key(value: Any, default: int) -> str | int:
    """A block or list index as a stream key, read as the provider clients
    read it (``int(...)``; a missing index is ``default``)."""
    if value is None:
        return default
    if type(value) is int:
        return value
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return repr(value)


class StreamGuard:
    """DEC-AUTH-6 over the ``stream_event`` records one writer emits.

    Built from the credential union's literals (empty ones ignored); with
    none, :func:`stream_guard` returns None and the writer skips the check.
    :meth:`check` is called on every record about to be written, in order:
    None means write it, a :data:`FailureKindName` means refuse it (and every
    later record: the verdict latches). The literals are never exposed.
    """

    __slots__ = (
        "_astral",
        "_blocks",
        "_channels",
        "_chunk_ids",
        "_decoded_keep",
        "_literal_needles",
        "_max_streams",
        "_open",
        "_raw_keep",
        "_refused",
        "_spelled_needles",
    )

    def __init__(self, literals: Iterable[str], *, max_streams: int = MAX_OPEN_STREAMS) -> None:
        kept = {literal for literal in literals if literal}
        spelled = set(kept)
        for literal in kept:
            spelled.update(s.decode("utf-8") for s in string_spellings(literal))
        self._astral = any(ord(ch) > 0xFFFF for literal in kept for ch in literal)
        decoded = {utf16_units(literal) for literal in kept} if self._astral else kept
        self._spelled_needles = minimal_needles(spelled)
        self._literal_needles = minimal_needles(decoded)
        longest = max((len(n) for n in self._literal_needles), default=0)
        self._decoded_keep = max(longest - 1, 0)
        spelled_longest = max((len(n) for n in self._spelled_needles), default=0)
        # View 2 starts from view 1's tail: keep enough of it for either.
        self._raw_keep = max(spelled_longest, longest) - 1 if kept else 0
        self._max_streams = max_streams
        self._blocks: dict[Block, dict[Path, _Stream]] = {}
        #: Unknown-shape channels, least recently used first.
        self._channels: dict[Block, None] = {}
        #: Per owner, the ``id`` of its last Chat Completions chunk.
        self._chunk_ids: dict[str | None, object] = {}
        self._open = 0
        self._refused: FailureKindName | None = None

    def __repr__(self) -> str:
        return f"StreamGuard(<{len(self._literal_needles)} needles>, {self._open} open streams)"

    @property
    def has_literals(self) -> bool:
        """False for an empty union: then nothing can ever be refused."""
        return bool(self._literal_needles)

    @property
    def open_streams(self) -> int:
        """How many streams hold a tail now."""
        return self._open

    @property
    def held_chars(self) -> int:
        """How many characters the open streams' tails hold (the memory bound)."""
        return sum(
            len(s.raw) + len(s.decoded or "") + len(s.pending)
            for streams in self._blocks.values()
            for s in streams.values()
        )

    def check(self, record: Mapping[str, Any]) -> FailureKindName | None:
        """The verdict on writing ``record`` next (DEC-AUTH-6): None to write
        it, else the failure to latch. Records other than ``stream_event``
        pass untouched; a refusal is final."""
        if self._refused is not None:
            return self._refused
        if record.get("type") != "stream_event":
            return None
        event = record.get("event")
        if not isinstance(event, dict):
            return None
        parent = record.get("parent_tool_use_id")
        owner = parent if isinstance(parent, str) else None
        verdict = self._event(owner, event)
        self._refused = verdict
        return verdict

    # --- event shapes ------------------------------------------------------

    def _event(self, owner: str | None, event: Mapping[str, Any]) -> FailureKindName | None:
        kind = event.get("type")
        if kind is None and isinstance(event.get("choices"), list | tuple):
            return self._chunk(owner, event.get("id"), event["choices"])
        if kind not in _MESSAGES_EVENTS:
            return self._unknown(owner, kind, event)
        if kind == "content_block_delta":
            delta = event.get("delta")
            if not isinstance(delta, dict):
                return None
            text = delta.get("text")
            if isinstance(text, str) and text and delta.get("type") == "text_delta":
                # The message's text across its blocks: the assistant record's text.
                verdict = self._join((owner, _MESSAGE), ("text",), text)
                if verdict is not None:
                    return verdict
            index = event.get("index")
            return self._feed((owner, index if type(index) is int else _key(index, 0)), delta)
        if kind == "content_block_start":
            block = (owner, _key(event.get("index"), 0))
            self._close(block)
            start = event.get("content_block")
            return self._feed(block, start) if isinstance(start, dict) else None
        if kind == "content_block_stop":
            self._close((owner, _key(event.get("index"), 0)))
        elif kind in ("message_start", "message_stop"):
            self._close_owner(owner)
        return None

    def _chunk(
        self, owner: str | None, chunk_id: object, choices: Iterable[Any]
    ) -> FailureKindName | None:
        """One Chat Completions chunk: each choice's delta joins its choice,
        across a ``finish_reason`` too; a new completion ``id`` ends the last."""
        if isinstance(chunk_id, str):
            last = self._chunk_ids.pop(owner, None)
            if last is not None and last != chunk_id:
                self._close_where(owner, lambda key: isinstance(key, tuple) and key[0] == "choice")
            self._chunk_ids[owner] = chunk_id
            if len(self._chunk_ids) > MAX_OWNERS:
                del self._chunk_ids[next(iter(self._chunk_ids))]
        for position, choice in enumerate(choices):
            if not isinstance(choice, dict):
                continue
            index = choice.get("index")
            block = (owner, ("choice", index if type(index) is int else _key(index, position)))
            delta = choice.get("delta")
            if isinstance(delta, dict):
                verdict = self._feed(block, delta)
                if verdict is not None:
                    return verdict
        return None

    def _unknown(
        self, owner: str | None, kind: object, event: Mapping[str, Any]
    ) -> FailureKindName | None:
        """An event of no shape the guard knows: every string member joins its
        path's stream of the owner, and its channel's (see the module docstring)."""
        identifiers = tuple(
            sorted((name, value) for name, value in event.items() if _identifier(name, value))
        )
        channel = (owner, ("channel", identifiers))
        if isinstance(kind, str) and kind.lower().endswith(_ENDINGS):
            if identifiers:
                self._close(channel)
                self._channels.pop(channel, None)
            else:
                self._close_where(
                    owner, lambda key: isinstance(key, tuple) and key[0] in ("path", "channel")
                )
            return None
        members = {name: value for name, value in event.items() if not _identifier(name, value)}
        verdict = self._feed((owner, ("path",)), members)
        if verdict is not None or not identifiers:
            return verdict
        self._channels.pop(channel, None)
        self._channels[channel] = None
        if len(self._channels) > MAX_CHANNELS:
            oldest = next(iter(self._channels))
            del self._channels[oldest]
            self._close(oldest)
        return self._feed(channel, members)

    # --- streams -----------------------------------------------------------

    def _feed(self, block: Block, value: Mapping[str, Any]) -> FailureKindName | None:
        """Append every string member of ``value`` to its stream of ``block``.

        The members of ``value`` itself first (a delta is nearly always flat),
        then anything nested, walked with an explicit stack."""
        todo: list[tuple[Path, Any]] | None = None
        for name, node in value.items():
            if type(node) is str:
                if node and name != "type" and (verdict := self._join(block, (name,), node)):
                    return verdict
            elif name != "type" and isinstance(node, dict | list | tuple):
                todo = todo or []
                todo.append(((name,), node))
        while todo:
            path, node = todo.pop()
            if len(path) > MAX_DELTA_DEPTH:
                return FailureKind.STREAM_LIMIT
            if isinstance(node, dict):
                todo.extend(((*path, name), v) for name, v in node.items() if name != "type")
            elif isinstance(node, list | tuple):
                for position, item in enumerate(node):
                    index = item.get("index") if isinstance(item, dict) else None
                    todo.append(((*path, _key(index, position)), item))
            elif (
                isinstance(node, str)
                and node
                and (verdict := self._join(block, path, node)) is not None
            ):
                return verdict
        return None

    def _join(self, block: Block, path: Path, text: str) -> FailureKindName | None:
        """Append ``text`` to the stream ``path`` of ``block`` (opening it);
        CREDENTIAL when that completes a literal in either view."""
        streams = self._blocks.get(block)
        if streams is None:
            streams = self._blocks[block] = {}
        stream = streams.get(path)
        if stream is None:
            if self._open >= self._max_streams:
                return FailureKind.STREAM_LIMIT
            stream = streams[path] = _Stream()
            self._open += 1
        joined = stream.raw + text
        for needle in self._spelled_needles:
            if needle in joined:
                return FailureKind.CREDENTIAL
        keep = self._raw_keep
        if stream.decoded is None:
            if "\\" not in text:
                stream.raw = joined[-keep:] if keep else ""
                return None
            # No backslash before: the decoded view so far is the raw one.
            before = utf16_units(stream.raw) if self._astral else stream.raw
        else:
            before = stream.decoded
        piece, pending = unescape(stream.pending + text)
        decoded = before + (utf16_units(piece) if self._astral else piece)
        for needle in self._literal_needles:
            if needle in decoded:
                return FailureKind.CREDENTIAL
        stream.raw = joined[-keep:] if keep else ""
        dkeep = self._decoded_keep
        stream.decoded = decoded[-dkeep:] if dkeep else ""
        stream.pending = pending
        return None

    def _close(self, block: Block) -> None:
        streams = self._blocks.pop(block, None)
        if streams is not None:
            self._open -= len(streams)

    def _close_owner(self, owner: str | None) -> None:
        """``message_start``/``message_stop``: every Messages block of ``owner``."""
        self._close_where(
            owner, lambda key: not (isinstance(key, tuple) and key[0] in ("path", "channel"))
        )

    def _close_where(self, owner: str | None, which: Callable[[Hashable], bool]) -> None:
        for block in [b for b in self._blocks if b[0] == owner and which(b[1])]:
            self._close(block)


def _identifier(name: object, value: object) -> bool:
    """A member naming an unknown-shape event's channel: ``...id`` with a
    string, ``...index`` with an integer."""
    if not isinstance(name, str):
        return False
    if type(value) is int:
        return name.endswith("index")
    return isinstance(value, str) and name.endswith("id")


def stream_guard(literals: Iterable[str]) -> StreamGuard | None:
    """The writer's stream guard for this credential union, or None when the
    union is empty (no check at all: ordinary output, near-zero cost)."""
    guard = StreamGuard(literals)
    return guard if guard.has_literals else None
