"""McpManagerActor against the real fake MCP server (tests/fakes/mcp_server.py):
a stdio subprocess and streamable HTTP on loopback. Every wait is on the
actor's change callback or a future, never a sleep."""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pykka
import pytest

from agentx.actors.mcp_manager import McpManagerActor
from agentx.mcp.tools import McpTool, McpToolSet
from agentx.messages.frozen import FrozenDict
from agentx.messages.mcp.config import HttpServer, ServerConfig, StdioServer
from agentx.providers.base import Cancelled
from agentx.tools.process import ChildProcesses
from agentx.turns.cancel import CancelScope
from tests.fakes.mcp_server import HttpMcpServer

FAKE = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
WAIT = 20.0


def fake(*extra: str) -> StdioServer:
    return StdioServer(command=sys.executable, args=(str(FAKE), *extra))


class Watch:
    """Collects every status payload the actor reports; waits on a condition."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.payloads: list[FrozenDict] = []

    def __call__(self, payload: FrozenDict) -> None:
        with self._cond:
            self.payloads.append(payload)
            self._cond.notify_all()

    def until(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Statuses by server name once ``predicate`` holds for them."""

        def latest() -> dict[str, Any]:
            return _by_name(self.payloads[-1]) if self.payloads else {}

        with self._cond:
            ok = self._cond.wait_for(lambda: predicate(latest()), WAIT)
            found = latest()
        assert ok, f"timed out; last statuses: {found}"
        return found


def _by_name(payload: FrozenDict) -> dict[str, Any]:
    return {entry["name"]: entry for entry in payload["mcpServers"]}


def status_is(name: str, status: str) -> Callable[[dict[str, Any]], bool]:
    return lambda by_name: by_name.get(name, {}).get("status") == status


class Manager:
    def __init__(
        self,
        servers: dict[str, ServerConfig],
        tmp: Path,
        *,
        known: frozenset[str] = frozenset(),
        call_timeout: float = 60.0,
        children: ChildProcesses | None = None,
    ) -> None:
        self.watch = Watch()
        self.tools = McpToolSet()
        self.ref = McpManagerActor.start(
            configured=servers,
            known_literals=known,
            redact=lambda text: text.replace("s3cret-token", "[redacted]"),
            cwd=tmp,
            tool_set=self.tools,
            on_change=self.watch,
            call_timeout=call_timeout,
            children=children,
        )
        self.proxy = self.ref.proxy()

    def tool(self, name: str) -> McpTool:
        return next(t for t in self.tools() if t.name == name)


@pytest.fixture
def manager_factory(tmp_path: Path) -> Iterator[Callable[..., Manager]]:
    made: list[Manager] = []

    def make(servers: dict[str, ServerConfig], **kw: Any) -> Manager:
        manager = Manager(servers, tmp_path, **kw)
        made.append(manager)
        return manager

    yield make
    for manager in made:
        if manager.ref.is_alive():
            manager.ref.stop(block=True, timeout=WAIT)


def test_stdio_server_connects_lists_tools_and_answers_a_call(
    manager_factory: Callable[..., Manager],
) -> None:
    manager = manager_factory({"calc": fake()})
    assert _by_name(manager.proxy.status().get())["calc"]["status"] in {"pending", "connected"}
    entry = manager.watch.until(status_is("calc", "connected"))["calc"]
    assert entry["serverInfo"] == {"name": "fake", "version": "1.0.0"}
    assert {t["name"] for t in entry["tools"]} >= {"echo", "add", "slow", "image"}
    add = manager.tool("mcp__calc__add")
    assert add.spec.input_schema["required"] == ("a", "b")
    assert add.execute(FrozenDict(a=2, b=40), CancelScope()) == ("42", False)


def test_http_server_gets_the_configured_headers(manager_factory: Callable[..., Manager]) -> None:
    with HttpMcpServer() as server:
        config = HttpServer(url=server.url, headers=FrozenDict(Authorization="Bearer s3cret-token"))
        manager = manager_factory({"web": config})
        manager.watch.until(status_is("web", "connected"))
        text, is_error = manager.tool("mcp__web__echo").execute(
            FrozenDict(text="s3cret-token and more"), CancelScope()
        )
        manager.ref.stop(block=True, timeout=WAIT)
    assert (text, is_error) == ("[redacted] and more", False)
    assert server.headers and all(
        h.get("authorization") == "Bearer s3cret-token" for h in server.headers
    )


@pytest.mark.parametrize(
    ("config", "error_part"),
    [
        (StdioServer(command=sys.executable, args=("-c", "pass")), ""),
        (StdioServer(command="/nonexistent/agentx-mcp-server"), "No such file"),
        (HttpServer(url="http://127.0.0.1:9/mcp"), ""),
    ],
    ids=["exits-at-once", "bad-command", "refused-http"],
)
def test_a_server_that_cannot_connect_is_failed_with_an_error(
    manager_factory: Callable[..., Manager], config: ServerConfig, error_part: str
) -> None:
    manager = manager_factory({"broken": config, "calc": fake()})
    by_name = manager.watch.until(
        lambda s: status_is("broken", "failed")(s) and status_is("calc", "connected")(s)
    )
    assert error_part in by_name["broken"]["error"]
    assert "tools" not in by_name["broken"]
    assert manager.tools()
    assert all(t.name.startswith("mcp__calc__") for t in manager.tools())


def test_an_interrupt_cancels_a_running_call_promptly(
    manager_factory: Callable[..., Manager],
) -> None:
    manager = manager_factory({"calc": fake()})
    manager.watch.until(status_is("calc", "connected"))
    scope = CancelScope()
    outcome: list[BaseException] = []
    started = threading.Event()

    def run() -> None:
        started.set()
        try:
            manager.tool("mcp__calc__slow").execute(FrozenDict(seconds=30), scope)
        except Cancelled as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    started.wait(WAIT)
    began = time.monotonic()
    scope.cancel()
    worker.join(WAIT)
    assert outcome and isinstance(outcome[0], Cancelled)
    assert time.monotonic() - began < 2.0
    # The connection survives the cancelled call.
    assert manager.tool("mcp__calc__echo").execute(FrozenDict(text="hi"), CancelScope()) == (
        "hi",
        False,
    )


def test_a_call_past_the_timeout_is_an_error_result(
    manager_factory: Callable[..., Manager],
) -> None:
    manager = manager_factory({"calc": fake()}, call_timeout=0.3)
    manager.watch.until(status_is("calc", "connected"))
    text, is_error = manager.tool("mcp__calc__slow").execute(FrozenDict(seconds=30), CancelScope())
    assert is_error
    assert text == "MCP tool slow of server calc timed out after 0.3 s"


def test_an_image_result_goes_to_the_provider_not_into_the_text(
    manager_factory: Callable[..., Manager],
) -> None:
    manager = manager_factory({"pics": fake()})
    manager.watch.until(status_is("pics", "connected"))
    text, is_error, images = manager.tool("mcp__pics__image").run(FrozenDict(), CancelScope())
    assert not is_error
    assert len(images) == 1 and images[0].mime_type == "image/png"
    assert images[0].data.startswith(b"\x89PNG\r\n\x1a\n")
    assert text == f"[image: image/png, {len(images[0].data)} bytes]"


def test_set_servers_answers_before_connecting_then_connects(
    manager_factory: Callable[..., Manager], tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    manager = manager_factory({})
    plan = manager.proxy.plan_set_servers(
        {
            "dyn": {"command": sys.executable, "args": [str(FAKE), "--marker", str(marker)]},
            "bad": {"type": "sse"},
        }
    ).get()
    assert plan.response == {
        "added": ("dyn",),
        "removed": (),
        "errors": {"bad": 'MCP server bad: type must be "stdio", "http" or "sdk"'},
    }
    assert manager.proxy.status().get() == {"mcpServers": ()}
    assert not marker.exists()
    manager.proxy.apply(plan).get()
    manager.watch.until(status_is("dyn", "connected"))
    assert marker.exists()
    removal = manager.proxy.plan_set_servers({}).get()
    assert removal.response == {"added": (), "removed": ("dyn",), "errors": {}}
    manager.proxy.apply(removal).get()
    assert manager.proxy.status().get() == {"mcpServers": ()}
    assert manager.tools() == ()
    manager.ref.stop(block=True, timeout=WAIT)  # waits for the removed server to close
    with pytest.raises(ProcessLookupError):
        os.kill(int(marker.read_text()), 0)


def test_toggle_and_reconnect(manager_factory: Callable[..., Manager]) -> None:
    manager = manager_factory({"calc": fake()})
    manager.watch.until(status_is("calc", "connected"))
    assert manager.proxy.toggle("calc", False).get() is None
    assert _by_name(manager.proxy.status().get())["calc"]["status"] == "disabled"
    assert manager.tools() == ()
    assert manager.proxy.reconnect("calc").get() == (
        "MCP server 'calc' is disabled; enable it with mcp_toggle"
    )
    assert manager.proxy.toggle("calc", True).get() is None
    manager.watch.until(status_is("calc", "connected"))
    assert manager.proxy.reconnect("calc").get() is None
    manager.watch.until(status_is("calc", "connected"))
    assert manager.proxy.reconnect("nope").get() == "no MCP server named 'nope'"


def test_stop_reaps_every_stdio_subprocess(
    manager_factory: Callable[..., Manager], tmp_path: Path
) -> None:
    marker = tmp_path / "pids"
    manager = manager_factory(
        {"a": fake("--marker", str(marker)), "b": fake("--marker", str(marker))}
    )
    manager.watch.until(lambda s: status_is("a", "connected")(s) and status_is("b", "connected")(s))
    pids = [int(line) for line in marker.read_text().split()]
    assert len(pids) == 2
    manager.ref.stop(block=True, timeout=WAIT)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _state(pid: int) -> str:
    """A process's state letter from /proc (``Z``: exited, not yet waited for), or ``gone``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return "gone"
    return stat.rsplit(")", 1)[1].split()[0]


def _wait_ended(pid: int, timeout: float) -> None:
    """Until ``pid`` has exited (its pidfd is readable) or ``timeout``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)


def test_the_session_registry_stops_every_stdio_server(
    manager_factory: Callable[..., Manager], tmp_path: Path
) -> None:
    """DECISIONS section 8: the registry's terminate_all ends each server's
    transport (the ``mcp`` package then stops its process group) while the
    actor still runs; a server connected later is refused."""
    marker = tmp_path / "pids"
    children = ChildProcesses()
    manager = manager_factory(
        {"a": fake("--marker", str(marker)), "b": fake("--marker", str(marker))},
        children=children,
    )
    manager.watch.until(lambda s: status_is("a", "connected")(s) and status_is("b", "connected")(s))
    pids = [int(line) for line in marker.read_text().split()]
    assert children.live == 1
    children.terminate_all()
    # Ended: gone, or exited and not yet collected by the mcp package's own
    # waiter (a zombie runs nothing). On a loaded machine the package's own
    # close (stdin closed, then SIGTERM, then SIGKILL of the group) may
    # outlast terminate_all's bounded wait, which then says so in one line
    # and leaves the close running: wait for each exit on its pidfd.
    for pid in pids:
        _wait_ended(pid, WAIT)
    states = [_state(pid) for pid in pids]
    assert len(states) == 2 and all(state in ("gone", "Z") for state in states), states
    assert manager.ref.is_alive()
    assert manager.proxy.reconnect("a").get() is None
    entry = manager.watch.until(status_is("a", "failed"))["a"]
    assert entry["error"] == "the session is shutting down"
    manager.ref.stop(block=True, timeout=WAIT)
    assert children.live == 0


def test_stop_with_a_hanging_call_does_not_hang(manager_factory: Callable[..., Manager]) -> None:
    manager = manager_factory({"calc": fake()})
    manager.watch.until(status_is("calc", "connected"))
    tool = manager.tool("mcp__calc__slow")
    results: list[tuple[str, bool]] = []
    worker = threading.Thread(
        target=lambda: results.append(tool.execute(FrozenDict(seconds=30), CancelScope()))
    )
    worker.start()
    began = time.monotonic()
    manager.ref.stop(block=True, timeout=WAIT)
    worker.join(WAIT)
    assert time.monotonic() - began < 8.0
    assert results and results[0][1] is True
    with pytest.raises(pykka.ActorDeadError):
        manager.proxy.status().get()


@pytest.mark.parametrize(
    "program",
    [
        "import signal; signal.pause()",
        "import sys\nwhile True: sys.stdout.write('not json ' * 100 + '\\n')",
    ],
    ids=["hangs", "floods-stdout"],
)
def test_a_hanging_or_flooding_server_fails_by_the_connect_timeout_alone(
    tmp_path: Path, program: str
) -> None:
    watch = Watch()
    ref = McpManagerActor.start(
        configured={
            "bad": StdioServer(command=sys.executable, args=("-c", program)),
            "calc": fake(),
        },
        known_literals=frozenset(),
        redact=lambda text: text,
        cwd=tmp_path,
        tool_set=McpToolSet(),
        on_change=watch,
        connect_timeout=5.0,
    )
    try:
        by_name = watch.until(status_is("calc", "connected"))
        assert by_name["bad"]["status"] == "pending"  # the other server did not wait for it
        by_name = watch.until(status_is("bad", "failed"))
        assert by_name["bad"]["error"] == "connection timed out after 5 s"
        assert ref.proxy().status().get()["mcpServers"][1]["status"] == "connected"
    finally:
        ref.stop(block=True, timeout=WAIT)


def test_a_server_that_dies_mid_session_is_failed_at_its_next_call(
    manager_factory: Callable[..., Manager], tmp_path: Path
) -> None:
    marker = tmp_path / "pid"
    manager = manager_factory({"calc": fake("--marker", str(marker))})
    manager.watch.until(status_is("calc", "connected"))
    echo = manager.tool("mcp__calc__echo")
    os.kill(int(marker.read_text()), signal.SIGKILL)
    text, is_error = echo.execute(FrozenDict(text="anyone?"), CancelScope())
    assert is_error and text.startswith("MCP tool echo of server calc failed")
    entry = manager.watch.until(status_is("calc", "failed"))["calc"]
    assert entry["error"] == "connection closed"
    assert manager.tools() == ()


def test_a_call_after_the_loop_stopped_is_an_error_result(
    manager_factory: Callable[..., Manager],
) -> None:
    manager = manager_factory({"calc": fake()})
    manager.watch.until(status_is("calc", "connected"))
    echo = manager.tool("mcp__calc__echo")
    manager.ref.stop(block=True, timeout=WAIT)
    assert echo.execute(FrozenDict(text="late"), CancelScope()) == (
        "MCP server calc is shutting down",
        True,
    )
