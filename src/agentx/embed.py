"""A blocking Python API for synchronous applications (DEC-CLI-1, DESIGN "Ways in").

:class:`Agent` starts the same actor system the CLI runs — the same credential
guard, ordering and EOF rules — in-process over in-memory pipes, with no
subprocess. Records come back as frozen values decoded strictly from the exact
bytes the guard wrote, so an embedding application sees what a pipe client
would see::

    from agentx.embed import Agent

    with Agent() as agent:
        result = agent.prompt("What is 2 + 2?")
        answer, cost = result["result"], result["total_cost_usd"]

Permission prompts (``can_use_tool``) are answered by a plain callable
returning the decision object of WIRE-PERM-041 (``{"behavior": "allow"}`` or
``{"behavior": "deny", "message": ...}``); without one every prompt is denied
(fail closed, WIRE-PERM-002).
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Self

from agentx.actors.embedded import run_in_thread, start_daemon
from agentx.config.cli_args import parse_args
from agentx.launch import launch
from agentx.messages.encode import encode_record
from agentx.messages.frozen import FrozenDict
from agentx.messages.strict_json import loads_strict

PermissionHandler = Callable[[FrozenDict], Mapping[str, Any]]

#: Default time a blocking call waits for agentx before raising TimeoutError.
DEFAULT_TIMEOUT = 120.0
_CLOSED = FrozenDict(type="__closed__")
DUPLEX = ("--input-format", "stream-json", "--output-format", "stream-json")


class ControlError(Exception):
    """A control request was answered with a correlated error."""


def session_environment(
    home: str | Path | None, environ: Mapping[str, str] | None
) -> dict[str, str]:
    env = dict(os.environ if environ is None else environ)
    if home is not None:
        env["AGENTX_HOME"] = str(home)
    return env


class BlockingSession:
    """What both ways in share: strict decoding of each output line, permission
    answers, control correlation and the blocking record queue. Subclasses
    connect ``_put_input`` and feed ``_outbound`` with complete lines."""

    def __init__(self, can_use_tool: PermissionHandler | None) -> None:
        self._outbound: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._records: queue.SimpleQueue[FrozenDict] = queue.SimpleQueue()
        self._pending: dict[str, Future[FrozenDict]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._handler = can_use_tool
        self._closed = False
        self._exit: Future[int] = Future()

    def _put_input(self, data: bytes) -> None:
        raise NotImplementedError

    def _begin(self) -> None:
        start_daemon(self._route, name="agentx-session-router")
        self.init = self.next_record()

    def _route(self) -> None:
        """Decode each frame strictly; answer permission prompts; correlate.

        An empty frame is the end of output (the host returned, or the
        process closed stdout): no record can follow it.
        """
        # Deadline enforced elsewhere (DECISIONS section 8): the host thread
        # puts the empty frame when its session ends (or the process closes
        # stdout); the application's own waits carry a timeout.
        while frame := self._outbound.get():
            # One write may carry several complete records (the writer
            # coalesces under load); each ends with its newline.
            for line in frame.split(b"\n")[:-1]:
                self._route_record(loads_strict(line))
        self._records.put(_CLOSED)

    def _route_record(self, record: FrozenDict) -> None:
        if record.get("type") == "control_request":
            self._answer_permission(record)
            return
        if record.get("type") == "control_response":
            response = record["response"]
            with self._lock:
                waiter = self._pending.pop(response.get("request_id"), None)
            if waiter is not None:
                waiter.set_result(response)
                return
        self._records.put(record)

    def _answer_permission(self, record: FrozenDict) -> None:
        request = record["request"]
        decision: Mapping[str, Any] = {"behavior": "deny", "message": "no permission handler"}
        if self._handler is not None:
            try:
                decision = self._handler(request)
            except Exception:  # WIRE-PERM-002: a failing handler denies
                decision = {"behavior": "deny", "message": "permission handler failed"}
        self.send(
            {
                "type": "control_response",
                "response": {
                    "subtype": "success",
                    "request_id": record["request_id"],
                    "response": dict(decision),
                },
            }
        )

    # -- the API -------------------------------------------------------------------

    def send(self, record: Mapping[str, Any]) -> None:
        """Send one raw protocol record."""
        if self._closed:
            raise RuntimeError("the agent session is closed")
        self._put_input(encode_record(record))

    def next_record(self, timeout: float | None = DEFAULT_TIMEOUT) -> FrozenDict:
        """The next output record (control answers to :meth:`control` excluded)."""
        try:
            record = self._records.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no record from agentx in time") from None
        if record is _CLOSED:
            self._records.put(_CLOSED)
            raise EOFError("the agent session has ended")
        return record

    def records(self, timeout: float | None = DEFAULT_TIMEOUT) -> Iterator[FrozenDict]:
        """Every output record until the session ends."""
        while True:
            try:
                yield self.next_record(timeout)
            except EOFError:
                return

    def prompt(self, text: str, *, timeout: float | None = DEFAULT_TIMEOUT) -> FrozenDict:
        """Send a user prompt and block until its ``result`` record."""
        self.send(
            {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
            }
        )
        while True:
            record = self.next_record(timeout)
            if record.get("type") == "result":
                return record

    def control(
        self, subtype: str, *, timeout: float | None = DEFAULT_TIMEOUT, **fields: Any
    ) -> FrozenDict | None:
        """Send a control request; its success payload, or :class:`ControlError`."""
        request_id = f"embed-{next(self._ids)}"
        waiter: Future[FrozenDict] = Future()
        with self._lock:
            self._pending[request_id] = waiter
        self.send(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": subtype, **fields},
            }
        )
        response = waiter.result(timeout)
        if response["subtype"] == "error":
            raise ControlError(response.get("error", "control request failed"))
        payload: FrozenDict | None = response.get("response")
        return payload

    def interrupt(self, *, timeout: float | None = DEFAULT_TIMEOUT) -> None:
        """Abort the active turn (WIRE-010); its result still arrives as a record."""
        self.control("interrupt", timeout=timeout)

    def close(self, timeout: float | None = DEFAULT_TIMEOUT) -> int:
        """End input (DEC-EOF-1: queued turns finish) and return the exit status."""
        if not self._closed:
            self._closed = True
            self._put_input(b"")
        return self._exit.result(timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Agent(BlockingSession):
    """One agentx session embedded in this process, over in-memory pipes."""

    def __init__(
        self,
        *,
        args: Sequence[str] = (),
        home: str | Path | None = None,
        cwd: str | Path | None = None,
        environ: Mapping[str, str] | None = None,
        can_use_tool: PermissionHandler | None = None,
    ) -> None:
        super().__init__(can_use_tool)
        options = parse_args([*DUPLEX, *args])
        session = launch(
            options, environ=session_environment(home, environ), cwd=str(cwd or os.getcwd())
        )
        self._inbound: queue.SimpleQueue[bytes] = queue.SimpleQueue()

        def run() -> int:
            try:
                return session.run(read_chunk=self._inbound.get, write=self._outbound.put)
            finally:
                self._outbound.put(b"")  # end of output for the router

        self._exit = run_in_thread(run, name="agentx-embedded-host")
        self._begin()

    def _put_input(self, data: bytes) -> None:
        self._inbound.put(data)
