"""The stock Python Agent SDK (``claude-agent-sdk``) as a client of the real
``agentx`` against one loopback Anthropic profile: one ``query()`` and what
it saw, for the end-to-end tests of the SDK's options (DEC-PROFILE-2)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

from tests.e2e.agentx_process import write_anthropic_auth
from tests.fakes.provider_server import ProviderServer, RecordedRequest, Reply

AGENTX = str(Path(sys.executable).with_name("agentx"))
#: A query that has not ended by then fails the test instead of hanging it.
QUERY_SECONDS = 60


def run_query(
    tmp_path: Path,
    replies: list[Reply],
    *,
    api_key: str,
    env: dict[str, str] | None = None,
    **options: Any,
) -> tuple[list[Any], list[RecordedRequest]]:
    """``query(prompt="go")`` with ``options`` in ``tmp_path/work``, agentx's
    home in ``tmp_path/home``, the loopback model answering ``replies``: the
    SDK's messages and the requests the model received."""
    import claude_agent_sdk as sdk

    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    with ProviderServer(replies) as server:
        write_anthropic_auth(home, server.url, api_key)

        async def run() -> list[Any]:
            opts = sdk.ClaudeAgentOptions(
                cli_path=AGENTX,
                cwd=str(work),
                env={"AGENTX_HOME": str(home), **(env or {})},
                **options,
            )
            with anyio.fail_after(QUERY_SECONDS):
                return [m async for m in sdk.query(prompt="go", options=opts)]

        messages = anyio.run(run)
        return messages, list(server.requests)


def offered_tools(request: RecordedRequest) -> list[str]:
    """The names of the tools one model request offered."""
    return [tool["name"] for tool in request.body.get("tools", [])]


def result_of(messages: list[Any]) -> Any:
    """The SDK's ``ResultMessage``."""
    return next(m for m in messages if type(m).__name__ == "ResultMessage")
