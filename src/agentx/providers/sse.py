"""The ``text/event-stream`` decoder the provider clients read their streams with."""

from __future__ import annotations

import codecs
from typing import Final

from msgspec import Struct

#: The most characters one event's data may hold (DECISIONS section 8: a
#: bounded error, never unbounded memory). A provider's events are a few
#: KiB; a web search result a few hundred.
MAX_EVENT_CHARS: Final = 16 * 1024 * 1024
#: An unfinished line may also hold its field name and a line ending.
_LINE_SLACK: Final = 64


class EventTooLarge(ValueError):
    """An event (or one line of it) passed :data:`MAX_EVENT_CHARS`."""


class ServerSentEvent(Struct, frozen=True, kw_only=True):
    event: str
    data: str


class SSEDecoder:
    """Incremental ``text/event-stream`` decoder (WHATWG HTML, "event stream").

    Lines end at CRLF, LF or CR; ``data`` lines join with LF; an event is
    dispatched at a blank line when it has data. Comments and ``id``/``retry``
    fields are ignored. Call :meth:`end` at end of stream.

    Each chunk is decoded and split into lines in bulk (``str.split`` at LF,
    after CRLF and CR are turned into LF when the text holds a CR), so the
    per-byte work stays in C; only whole lines reach Python code. A line
    that spans many chunks is kept as its pieces until it ends (joining at
    every chunk would copy it once per chunk), and an event larger than
    :data:`MAX_EVENT_CHARS` raises :class:`EventTooLarge`.
    """

    def __init__(self) -> None:
        self._text = codecs.getincrementaldecoder("utf-8")(errors="strict")
        self._pieces: list[str] = []
        self._held = 0
        self._event = ""
        self._data: list[str] = []
        self._data_chars = 0

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Decode ``chunk``; raise ``UnicodeDecodeError`` on invalid UTF-8 and
        :class:`EventTooLarge` past the bound."""
        text = self._text.decode(chunk)
        # A held CR ends its line once the next text shows it is no CRLF.
        held_cr = bool(self._pieces) and self._pieces[-1].endswith("\r")
        if "\n" not in text and "\r" not in text and not held_cr:
            self._hold(text)
            return []
        return self._lines(self._joined(text), final=False)

    def end(self) -> list[ServerSentEvent]:
        """At end of stream a pending CR ends its line; a partial event is dropped."""
        return self._lines(self._joined(self._text.decode(b"", final=True)), final=True)

    def _hold(self, text: str) -> None:
        self._pieces.append(text)
        self._held += len(text)
        if self._held > MAX_EVENT_CHARS + _LINE_SLACK:
            raise EventTooLarge(f"provider stream event over {MAX_EVENT_CHARS} characters")

    def _joined(self, text: str) -> str:
        if not self._pieces:
            return text
        self._pieces.append(text)
        joined = "".join(self._pieces)
        self._pieces, self._held = [], 0
        return joined

    def _lines(self, text: str, *, final: bool) -> list[ServerSentEvent]:
        # A CR at the end may be the first half of CRLF: held back unless final.
        held = "\r" if text.endswith("\r") and not final else ""
        if "\r" in text:
            text = text.removesuffix(held).replace("\r\n", "\n").replace("\r", "\n")
        lines = text.split("\n")
        rest = lines.pop() + held
        events: list[ServerSentEvent] = []
        for line in lines:
            if line:
                name, _, value = line.partition(":")
                if name == "data":
                    value = value.removeprefix(" ")
                    # The event's data joins its lines with LF.
                    self._data_chars += len(value) + (1 if self._data else 0)
                    if self._data_chars > MAX_EVENT_CHARS:
                        raise EventTooLarge(
                            f"provider stream event over {MAX_EVENT_CHARS} characters"
                        )
                    self._data.append(value)
                elif name == "event":
                    self._event = value.removeprefix(" ")
            elif self._data:
                event = ServerSentEvent(event=self._event or "message", data="\n".join(self._data))
                events.append(event)
                self._event, self._data, self._data_chars = "", [], 0
            else:
                self._event = ""
        if rest:
            self._hold(rest)
        return events
