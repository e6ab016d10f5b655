"""The output guard: whole-record credential validation and callback containment.

WIRE-013: every structured record is encoded completely in memory (separator
escaping and the newline included), and those exact final bytes are checked
against the credential union before the first byte is written. A rejection
writes nothing, latches the encoder, and never falls back to unvalidated output.
The validator is immutable once encoding begins; with no credential material
the output is the ordinary encoding, byte for byte.

WIRE-015: the validator and the writer are callbacks. They run outside the
guard's state lock while complete-record writes stay serialized, so a callback
that re-enters the guard gets the normal rejection rather than a deadlock. A
callback's exception is never formatted, traversed or kept: it is reduced to a
sealed :data:`FailureKindName` decided by exact type identity, and every later
write raises a fresh :class:`OutputFailure` of that kind without invoking
either callback again.

This module starts no threads and imports no threading primitives: the two
locks are injected (``threading.Lock()`` and ``threading.RLock()`` in the
writer actor), keeping :mod:`agentx.messages` free of concurrency machinery.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from agentx.messages.encode import encode_record, string_spellings

#: A whole-record validator: True means the exact frame is safe to write.
Validator = Callable[[bytes], bool]
#: The output writer: returns the number of bytes written, or None for all.
Writer = Callable[[bytes], int | None]


# One JSON string token, quotes included. In well-formed JSON a quote occurs
# only inside string tokens, so scanning left to right meets every member name
# and value occurrence, duplicates included, at any nesting depth. Compiled on
# first use: only a frame with an escape is scanned (start-up, DEC-CLI-3).
@cache
def _string_token() -> re.Pattern[bytes]:
    return re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


_Needle = TypeVar("_Needle", str, bytes)


def minimal_needles(needles: Iterable[_Needle]) -> tuple[_Needle, ...]:
    """Drop every needle that contains another one: finding the shorter suffices."""
    ordered = sorted(set(needles), key=len)
    kept: list[_Needle] = []
    for needle in ordered:
        if not any(shorter in needle for shorter in kept):
            kept.append(needle)
    return tuple(kept)


class CredentialValidator:
    """The credential union of DEC-AUTH-3 as a whole-frame check (WIRE-013).

    Built from literal strings (empty ones are ignored; no minimum length, so a
    tiny credential makes the encoder fail closed). :meth:`check` returns True
    when the frame is safe:

    * the raw frame bytes are searched for every spelling of every literal
      (raw, as :func:`~agentx.messages.encode.encode_record` escapes it, and
      ASCII ``\\uXXXX``-escaped), so a literal reconstructed across field
      boundaries or from the suffix plus the newline is caught;
    * only when the frame holds a backslash, every string token is decoded and
      searched, so an escaped spelling such as ``\\u0061`` cannot hide a literal
      in any member name or value occurrence. Without a backslash each decoded
      string is its raw bytes, which the first search already covered.

    The search is one ``bytes.__contains__`` per needle: for unions of 3 to 40
    literals on 4 KB frames it measured 2 to 8 times faster than one compiled
    alternation regex, and the union is small (DEC-AUTH-3). Needles that
    contain another needle are dropped at construction.

    The literals are never exposed: ``repr`` shows only how many there are.
    """

    __slots__ = ("_count", "_frame_needles", "_text_needles")

    def __init__(self, literals: Iterable[str]) -> None:
        kept = {literal for literal in literals if literal}
        self._count = len(kept)
        self._text_needles = minimal_needles(kept)
        self._frame_needles = minimal_needles(
            s for literal in kept for s in string_spellings(literal)
        )

    def __len__(self) -> int:
        """How many distinct non-empty literals the union holds."""
        return self._count

    def __repr__(self) -> str:
        return f"CredentialValidator(<{self._count} literals>)"

    def __call__(self, frame: bytes) -> bool:
        return self.check(frame)

    def check_spelled(self, pieces: Iterable[bytes]) -> bool:
        """True when no literal of the union occurs in the concatenation of
        ``pieces``: bytes whose every JSON string (member names included) was
        spelled by :func:`~agentx.messages.encode.encode_value`, as the
        session store spells its lines (DEC-AUTH-6: nothing the guard would
        refuse is persisted), so the text is never joined whole.

        That spelling escapes each code point on its own, so a literal inside
        a string is always spelled as one frame needle (its
        :func:`~agentx.messages.encode.string_spellings` member): the raw
        search alone covers what :meth:`check`'s decoding covers for frames
        of other encoders. A literal across two pieces is found in the last
        ``longest - 1`` bytes carried over from before each piece.
        """
        keep = max(map(len, self._frame_needles), default=1) - 1
        carried = b""
        for piece in pieces:
            edge = carried + piece[:keep]
            for needle in self._frame_needles:
                if needle in piece or needle in edge:
                    return False
            if keep:
                carried = piece[-keep:] if len(piece) >= keep else (carried + piece)[-keep:]
        return True

    def check(self, frame: bytes) -> bool:
        """True when no literal of the union can be read out of ``frame``."""
        for needle in self._frame_needles:
            if needle in frame:
                return False
        if not self._text_needles or b"\\" not in frame:
            return True
        # lazy: start-up, WIRE-026 (only frames with an escape get here)
        import json  # noqa: PLC0415

        for token in _string_token().finditer(frame):
            raw = token.group()
            if b"\\" not in raw:
                continue
            try:
                decoded = json.loads(raw)
            except ValueError:
                return False  # an undecodable string cannot be proven safe
            if any(needle in decoded for needle in self._text_needles):
                return False
        return True


def _frame_check(validator: Validator) -> Validator:
    """What the guard calls on each frame (WIRE-013, WIRE-015). A
    :class:`CredentialValidator` (exact type) only reads the frame, so its
    ``check`` gets the frame itself; any other validator gets its own copy:
    whatever it does to it, the frame is what was validated and written."""
    if type(validator) is CredentialValidator:
        return validator.check
    return lambda frame: validator(bytes(memoryview(frame)))


#: Sealed classification of a latched output failure (WIRE-015).
#:
#: Decided only by what the guard observed and, for the writer, by exact type
#: identity of trusted standard-library leaf errors; the exit policy
#: (DECISIONS section 8, status 3) reads it without any callback object.
FailureKindName = Literal[
    "credential", "validator", "broken_pipe", "writer", "short_write", "stream_limit"
]


class FailureKind:
    """The :data:`FailureKindName` values by name: constants, not a StrEnum,
    whose class costs about 0.15 ms to define before the ``initialize``
    response (start-up, DEC-CLI-3); the ``Literal`` keeps the set sealed."""

    CREDENTIAL: Final = "credential"
    VALIDATOR: Final = "validator"
    BROKEN_PIPE: Final = "broken_pipe"
    WRITER: Final = "writer"
    SHORT_WRITE: Final = "short_write"
    #: DEC-AUTH-6: a stream the stream guard cannot follow (too many open
    #: streams, or a delta nested too deep) is refused, not written unchecked.
    STREAM_LIMIT: Final = "stream_limit"


_FAILURE_MESSAGES: Final[Mapping[FailureKindName, str]] = {
    FailureKind.CREDENTIAL: "output encoder failed: record rejected by credential validator",
    FailureKind.VALIDATOR: "output encoder failed: credential validator failed",
    FailureKind.BROKEN_PIPE: "output encoder failed: output pipe closed",
    FailureKind.WRITER: "output encoder failed: writer failed",
    FailureKind.SHORT_WRITE: "output encoder failed: short write",
    FailureKind.STREAM_LIMIT: "output encoder failed: stream too wide for the credential guard",
}


class OutputFailure(Exception):
    """The encoder has latched; its message is fixed and credential-free."""

    def __init__(self, kind: FailureKindName) -> None:
        super().__init__(_FAILURE_MESSAGES[kind])
        self.kind = kind


class GuardConfigError(RuntimeError):
    """The guard refused a configuration or re-entrant call; nothing latched."""


VALIDATOR_IMMUTABLE: Final = "validator is immutable after encoding begins"
VALIDATOR_INSTALLED: Final = "validator is already installed"
VALIDATOR_MISSING: Final = "no validator installed before the first write"
WRITE_REENTERED: Final = "write_record re-entered from a guard callback"


if TYPE_CHECKING:  # a Protocol only annotations use: not defined at start-up (DEC-CLI-3)
    from typing import Protocol

    class Mutex(Protocol):
        """The part of ``threading.Lock``/``threading.RLock`` the guard uses."""

        def __enter__(self) -> object: ...

        def __exit__(
            self,
            exc_type: type[BaseException] | None,
            exc: BaseException | None,
            tb: TracebackType | None,
            /,
        ) -> object: ...


class OutputGuard:
    """The encoder state machine of WIRE-013/015 in front of one writer.

    ``write`` receives each complete frame once and returns the byte count (or
    None for "all of it"); any other count is a short write. ``state_lock``
    guards the state and is never held while a callback runs; ``write_lock``
    serializes whole records and must be reentrant (``threading.RLock``) so a
    callback that re-enters :meth:`write_record` is refused instead of
    deadlocking. The re-entry flag is read only by a ``write_lock`` holder.

    ``encode`` turns one record into its complete frame (newline included);
    whatever it produces, those exact bytes are what the validator checks.

    Rule 1: a validator must be installed (``None`` for a credential-free
    profile) before the first write, and cannot change afterwards.
    Rule 2: once failed, always failed: no callback runs again.
    """

    __slots__ = (
        "_busy",
        "_encode",
        "_failure",
        "_installed",
        "_started",
        "_state_lock",
        "_validator",
        "_write",
        "_write_lock",
    )

    def __init__(
        self,
        write: Writer,
        *,
        state_lock: Mutex,
        write_lock: Mutex,
        encode: Callable[[Mapping[str, Any]], bytes] = encode_record,
    ) -> None:
        self._write = write
        self._encode = encode
        self._state_lock = state_lock
        self._write_lock = write_lock
        self._validator: Validator | None = None
        self._installed = False
        self._started = False
        self._busy = False
        self._failure: FailureKindName | None = None

    @property
    def started(self) -> bool:
        """True once the first write has begun (the validator is then fixed)."""
        with self._state_lock:
            return self._started

    @property
    def failure(self) -> FailureKindName | None:
        """The latched failure, if any."""
        with self._state_lock:
            return self._failure

    def install_validator(self, validator: Validator | None) -> None:
        """Install the validator once, before the first write (WIRE-013).

        ``None`` or a :class:`CredentialValidator` with no literals means the
        ordinary byte-identical output with no check. Raises
        :class:`GuardConfigError` after encoding began (also when called from a
        guard callback) or on a second installation.
        """
        with self._state_lock:
            if self._started:
                raise GuardConfigError(VALIDATOR_IMMUTABLE)
            if self._installed:
                raise GuardConfigError(VALIDATOR_INSTALLED)
            self._installed = True
            if isinstance(validator, CredentialValidator) and len(validator) == 0:
                validator = None
            self._validator = None if validator is None else _frame_check(validator)

    def write_record(self, record: Mapping[str, Any]) -> None:
        """Encode, validate and write one complete record, or write nothing.

        Raises :class:`OutputFailure` when this or an earlier record latched
        the guard, :class:`~agentx.messages.encode.EncodeError` (nothing
        latched, nothing written) when the record has no JSON spelling, and
        :class:`GuardConfigError` before installation or on re-entry.
        """
        with self._write_lock:
            with self._state_lock:
                if self._failure is not None:
                    raise OutputFailure(self._failure)
                if self._busy:
                    raise GuardConfigError(WRITE_REENTERED)
                if not self._installed:
                    raise GuardConfigError(VALIDATOR_MISSING)
                self._started = self._busy = True
                validator = self._validator
            try:
                failure = self._deliver(self._encode(record), validator)
            finally:
                # Only a holder of ``write_lock`` reads ``_busy``, and this
                # thread holds it: the reset needs no state lock.
                self._busy = False
            if failure is not None:
                with self._state_lock:
                    self._failure = failure
                raise OutputFailure(failure)

    def _deliver(self, frame: bytes, validator: Validator | None) -> FailureKindName | None:
        """Run the callbacks on one frame; return what latched, if anything.

        Every exception a callback raises, ``BaseException`` included, is
        caught here and dropped on return: only its exact type is looked at.
        """
        if validator is not None:
            try:
                verdict = validator(frame)
            except BaseException:
                return FailureKind.VALIDATOR
            if verdict is not True:
                return FailureKind.CREDENTIAL
        return deliver(self._write, frame)

    def latch(self, kind: FailureKindName) -> None:
        """Latch a failure found downstream of the write callback (a buffering
        sink whose later flush failed): from now on no callback runs again
        (WIRE-015 rule 2). The first latched kind stays."""
        with self._state_lock:
            if self._failure is None:
                self._failure = kind


def deliver(write: Writer, data: bytes) -> FailureKindName | None:
    """Hand ``data`` to ``write`` once; return what latches, if anything.

    Every exception, ``BaseException`` included, is dropped on return: only
    its exact type is looked at (WIRE-015's sealed classification)."""
    try:
        written = write(data)
    except BaseException as exc:
        return FailureKind.BROKEN_PIPE if type(exc) is BrokenPipeError else FailureKind.WRITER
    if written is None or (type(written) is int and written == len(data)):
        return None
    return FailureKind.SHORT_WRITE
