"""One prompt through the stock Python Agent SDK (claude-agent-sdk), hosted by agentx.

The SDK falls back to its own bundled Claude Code binary when ``cli_path`` is
``None``, which would bill a logged-in user on another host. So this resolves
``agentx`` first and stops with a sentence when it is not on PATH.

    python examples/sdk_query.py "What is 2 + 2?"
"""

from __future__ import annotations

import shutil
import sys

import anyio
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query


def agentx_path() -> str:
    path = shutil.which("agentx")
    if path is None:
        sys.exit(
            "agentx is not on PATH: install it (pip install agentx-host) or activate its "
            "virtual environment; refusing to let the SDK start another host"
        )
    return path


async def main(prompt: str) -> None:
    options = ClaudeAgentOptions(cli_path=agentx_path())
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, ResultMessage):
            print(message.result)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "What is 2 + 2?")
