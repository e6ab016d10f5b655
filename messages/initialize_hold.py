"""``--await-initialize``: prompts held until the ``initialize`` request
(DEC-PROFILE-2, DECISIONS section 8).

The TypeScript Agent SDK passes ``--await-initialize`` when it sends in
``initialize`` what would otherwise be flags (MCP servers, settings); no
turn may run without them. So every prompt (a ``user`` record that runs a
turn or seeds prior context) that arrives before the first ``initialize``
control request is held, in arrival order, and carried right after that
request, behind it (in the ``sdk`` profile the router then waits until it
is applied, as for any control request before a prompt).

Bounded: the wait for ``initialize`` has :data:`AWAIT_SECONDS` (the SDKs'
own ``initialize`` timeout) from the start of input. When it passes with
no ``initialize``, or the input ends while prompts are held, the held
prompts never run: the session ends with one line and status 2 (the client
asked for a configuration it never sent: a usage error). An input that ends
with nothing held ends normally.

Sans-IO: time is an argument; the actor shell (``Router``) owns the timer.
"""

from __future__ import annotations

from typing import Generic, Literal, TypeVar

T = TypeVar("T")

#: Seconds from the start of input within which ``initialize`` must arrive.
AWAIT_SECONDS = 60.0
#: The exit status when it does not (DECISIONS section 8: a usage error).
AWAIT_STATUS = 2

Ending = Literal["deadline", "eof"]


class InitializeHold(Generic[T]):
    """The hold of one session. Not thread-safe: the shell serialises calls."""

    def __init__(self, *, armed: bool, started: float, seconds: float = AWAIT_SECONDS) -> None:
        self._waiting = armed
        self._seconds = seconds
        self._deadline = started + seconds
        self._held: list[T] = []
        self._ended = False

    @property
    def waiting(self) -> bool:
        """True while prompts are to be held (armed, no ``initialize`` yet, not ended)."""
        return self._waiting and not self._ended

    @property
    def deadline(self) -> float:
        return self._deadline

    def hold(self, item: T) -> bool:
        """Hold ``item`` when waiting (True); False: carry it now."""
        if not self.waiting:
            return False
        self._held.append(item)
        return True

    def release(self) -> tuple[T, ...]:
        """The first ``initialize`` arrived: the held items, in order, to be
        carried right behind it. Later calls release nothing."""
        if not self.waiting:
            return ()
        self._waiting = False
        held, self._held = tuple(self._held), []
        return held

    def expired(self, now: float) -> bool:
        """True at or past the deadline while still waiting."""
        return self.waiting and now >= self._deadline

    def end(self, why: Ending) -> str | None:
        """The input ended (``eof``) or the deadline passed (``deadline``):
        the one line that ends the session with :data:`AWAIT_STATUS`, or
        None when the session goes on (nothing waits: ``initialize`` came,
        or the input ended with nothing held). Held items are dropped."""
        if not self.waiting or (why == "eof" and not self._held):
            return None
        self._ended = True
        count = len(self._held)
        self._held = []
        prompts = f"{count} held prompt{'s' if count != 1 else ''} not run"
        if why == "eof":
            return (
                f"--await-initialize: the input ended before an initialize request ({prompts}); "
                f"the session ends (status {AWAIT_STATUS})"
            )
        return (
            f"--await-initialize: no initialize request within {self._seconds:g} s ({prompts}); "
            f"the session ends (status {AWAIT_STATUS})"
        )
