"""The system prompt the stock TypeScript Agent SDK's way (DEC-PROFILE-2):
``tests/e2e/ts_sdk/prompt.mjs`` runs one ``query()`` per case; each case
asserts the system prompt and first user message the loopback model got."""

from __future__ import annotations

import json
from pathlib import Path

from agentx.messages.system_prompt import IDENTITY
from tests.e2e.test_ts_sdk import run_driver
from tests.fakes.provider_server import Reply, anthropic_text_stream

KEY = "sk-ts-prompt-sentinel"


def _system(body: dict[str, object]) -> str:
    system = body.get("system", "")
    if isinstance(system, list):
        return "\n\n".join(block["text"] for block in system)
    assert isinstance(system, str)
    return system


def test_system_prompt_fields_the_ts_sdk_way(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    replies = [Reply(chunks=anthropic_text_stream(step)) for step in ("c", "a", "e")]
    steps, done, requests = run_driver("prompt.mjs", replies, home, work, api_key=KEY)
    assert done.returncode == 0 and "done" in steps, (steps.get("failed"), done.stderr[-2000:])
    assert [steps[s]["subtype"] for s in ("custom", "append", "exclude")] == ["success"] * 3
    custom, append, exclude = (r.body for r in requests)

    assert _system(custom) == "You are the TS custom prompt."
    assert "<env>" not in json.dumps(custom["messages"])

    system = _system(append)
    assert system.startswith(IDENTITY) and system.endswith("TS appended text.")
    assert "<env>" in system and f"Working directory: {work}" in system

    system = _system(exclude)
    assert system.startswith(IDENTITY) and "<env>" not in system
    first = json.dumps(exclude["messages"][0])
    assert "<env>" in first and "Working directory:" in first and "go" in first
    assert KEY not in done.stdout and KEY not in done.stderr
