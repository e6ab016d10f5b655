"""``rewind_files`` under the stock Python SDK (DEC-PROFILE-2):
``enable_file_checkpointing=True`` sets the variable agentx reads, the
replayed ``UserMessage.uuid`` names a checkpoint, ``client.rewind_files``
restores the files and raises on a rewind that cannot happen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agentx.messages.checkpoints import NOT_FOUND
from tests.e2e.test_claude_sdk import _options, _script
from tests.e2e.test_rewind_files import (
    AFTER_FIRST,
    AFTER_SECOND,
    ORIGINAL,
    TWO_MESSAGES,
    disk,
)

sdk = pytest.importorskip("claude_agent_sdk", reason="claude-agent-sdk is a dev extra")


def _prompt_uuid(messages: list[Any], text: str) -> str:
    """The uuid of the replayed prompt (the SDK's documented way)."""
    for message in messages:
        if isinstance(message, sdk.UserMessage) and message.uuid:
            content = message.content
            texts = (
                content
                if isinstance(content, str)
                else " ".join(getattr(block, "text", "") for block in content)
            )
            if text in texts:
                return str(message.uuid)
    raise AssertionError(f"no replayed user message with {text!r}")


def test_rewind_files_under_the_python_sdk(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name, text in ORIGINAL.items():
        (work / name).write_text(text)
    _script(home, TWO_MESSAGES)
    options = _options(
        home,
        work,
        enable_file_checkpointing=True,
        extra_args={"replay-user-messages": None},
        permission_mode="acceptEdits",
        allowed_tools=["Bash"],
    )

    async def run() -> tuple[str, str, str]:
        async with sdk.ClaudeSDKClient(options=options) as client:
            await client.query("change things")
            first = _prompt_uuid([m async for m in client.receive_response()], "change things")
            assert disk(work) == AFTER_FIRST
            await client.query("change more")
            second = _prompt_uuid([m async for m in client.receive_response()], "change more")
            assert disk(work) == AFTER_SECOND
            await client.rewind_files(first)
            assert disk(work) == ORIGINAL
            await client.rewind_files(second)
            assert disk(work) == AFTER_FIRST
            with pytest.raises(Exception) as raised:
                await client.rewind_files("00000000-0000-4000-8000-000000000000")
            return first, second, str(raised.value)

    first, second, error = anyio.run(run)
    assert first != second
    assert NOT_FOUND in error
