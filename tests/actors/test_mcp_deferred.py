"""DeferredMcp (DEC-PROFILE-2, DEC-SET-2, DEC-CLI-3): the sdk profile's MCP
manager with no server at start is started by the first operation that
needs it, once, and is then the real manager; before that the engine sees
an empty table's tools. Against the real McpHandle, its actor and the fake
MCP server (tests/fakes/mcp_server.py); waits are on futures and events."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentx.actors.mcp_deferred import DeferredMcp
from agentx.actors.mcp_manager import McpHandle
from agentx.messages.mcp.config import StdioServer
from agentx.tools.process import ChildProcesses
from agentx.turns.cancel import CancelScope

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
WAIT = 20.0


class Starts:
    """Builds real handles and counts them; stops them all at the end."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.made: list[McpHandle] = []
        self._lock = threading.Lock()

    def __call__(self) -> McpHandle:
        handle = McpHandle(
            configured={},
            scopes={},
            literals=frozenset(),
            cwd=self.cwd,
            media=None,
            children=ChildProcesses(),
        )
        with self._lock:
            self.made.append(handle)
        return handle


@pytest.fixture
def starts(tmp_path: Path) -> Iterator[Starts]:
    made = Starts(tmp_path)
    yield made
    for handle in made.made:
        handle.ref.stop(block=True, timeout=WAIT)


def test_nothing_starts_until_an_operation_needs_the_manager(starts: Starts) -> None:
    mcp = DeferredMcp(starts)
    assert mcp.tools() == ()
    mcp.tools.wait_ready(CancelScope())  # returns at once: nothing is connecting
    assert mcp.media.take("toolu_1") == ()
    assert mcp.ref is None and mcp.started is None
    assert starts.made == []
    # The first operation starts the real manager and is answered by it.
    assert mcp.status() == {"mcpServers": ()}
    assert len(starts.made) == 1
    assert mcp.ref is starts.made[0].ref and mcp.ref.is_alive()
    assert mcp.reconnect("nope") == "no MCP server named 'nope'"
    assert mcp.toggle("nope", False) == "no MCP server named 'nope'"
    assert len(starts.made) == 1


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(lambda mcp: mcp.status(), id="status"),
        pytest.param(lambda mcp: mcp.set_servers({}), id="set_servers"),
        pytest.param(lambda mcp: mcp.reconnect("x"), id="reconnect"),
        pytest.param(lambda mcp: mcp.toggle("x", True), id="toggle"),
        pytest.param(lambda mcp: mcp.add_initial({}), id="add_initial"),
    ],
)
def test_every_operation_starts_the_manager_once_from_any_thread(
    starts: Starts, first: Callable[[DeferredMcp], Any]
) -> None:
    mcp = DeferredMcp(starts)
    barrier = threading.Barrier(4)
    failures: list[BaseException] = []

    def call() -> None:
        try:
            barrier.wait(WAIT)
            first(mcp)
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert failures == []
    assert len(starts.made) == 1


def test_a_server_added_later_offers_its_tools_through_the_deferred_ports(
    starts: Starts,
) -> None:
    """``initialize``'s servers: the engine's ports, built before the manager
    started, wait for the first connection and then offer its tools."""
    mcp = DeferredMcp(starts)
    mcp.add_initial({"calc": StdioServer(command=sys.executable, args=(str(FAKE),))})
    mcp.tools.wait_ready(CancelScope())
    names = {tool.name for tool in mcp.tools()}
    assert "mcp__calc__add" in names, names
    assert mcp.status()["mcpServers"][0]["status"] == "connected"
