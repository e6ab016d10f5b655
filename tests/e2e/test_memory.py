"""End-to-end: the memory files reach the model (DEC-SET-1 sources,
``--setting-sources``): one system-reminder block with the first prompt, in
the request the loopback model received; a FIFO memory file neither hangs
the start nor reaches the model."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentx.messages.memory_block import OPEN
from tests.e2e.agentx_process import DUPLEX, encode, log_lines, run_once, user, write_auth
from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream


def _requests(
    home: Path, cwd: Path, prompts: list[str], *args: str, replies: int | None = None
) -> tuple[Any, list[Any]]:
    count = len(prompts) if replies is None else replies
    chunks = [Reply(chunks=anthropic_text_stream("ok")) for _ in range(count)]
    with ProviderServer(chunks) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-memory-files-1",
                    "endpoint": server.url,
                }
            ],
        )
        stdin = b"".join(encode(user(p)) for p in prompts)
        done = run_once(
            [*DUPLEX, *args], stdin, home=home, cwd=cwd, env={"HOME": str(home / "user")}
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    return done, requests


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [block["text"] for block in content if block.get("type") == "text"]


def _layout(home: Path, tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / ".claude").mkdir(parents=True)
    (home / "user" / ".claude").mkdir(parents=True)
    (home / "user" / ".claude" / "CLAUDE.md").write_text("USER-RULE")
    (work / "CLAUDE.md").write_text("PROJECT-RULE")
    (work / "AGENTS.md").write_text("AGENTS-RULE")
    (work / "CLAUDE.local.md").write_text("LOCAL-RULE")
    return work


def test_the_first_prompt_carries_the_memory_block(home: Path, tmp_path: Path) -> None:
    work = _layout(home, tmp_path)
    _, (first, second) = _requests(home, work, ["one", "two"])
    first_user = _texts(first.body["messages"][0])
    assert first_user[0] == "one"
    (block,) = [t for t in first_user if t.startswith(OPEN)]
    for rule in ("USER-RULE", "PROJECT-RULE", "AGENTS-RULE", "LOCAL-RULE"):
        assert rule in block
    assert f"Contents of {work / 'CLAUDE.md'} (project instructions" in block
    # Not in the system prompt, and not repeated with the next prompt.
    assert "PROJECT-RULE" not in str(first.body.get("system"))
    last_user = second.body["messages"][-1]
    assert not any(t.startswith(OPEN) for t in _texts(last_user))


def test_after_clear_the_next_prompt_carries_it_again(home: Path, tmp_path: Path) -> None:
    work = _layout(home, tmp_path)
    _, (first, after_clear) = _requests(home, work, ["one", "/clear", "two"], replies=2)
    assert any(t.startswith(OPEN) for t in _texts(first.body["messages"][0]))
    (message,) = after_clear.body["messages"]
    texts = _texts(message)
    assert texts[0] == "two" and "PROJECT-RULE" in texts[-1]


def test_setting_sources_select_the_files(home: Path, tmp_path: Path) -> None:
    work = _layout(home, tmp_path)
    _, (request,) = _requests(home, work, ["one"], "--setting-sources", "project")
    joined = "\n".join(_texts(request.body["messages"][0]))
    assert "PROJECT-RULE" in joined and "AGENTS-RULE" in joined
    assert "USER-RULE" not in joined and "LOCAL-RULE" not in joined


def test_a_fifo_memory_file_is_left_out_with_one_warning(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    os.mkfifo(work / "CLAUDE.md")
    (work / "AGENTS.md").write_text("AGENTS-RULE")
    done, (request,) = _requests(home, work, ["one"])
    joined = "\n".join(_texts(request.body["messages"][0]))
    assert "AGENTS-RULE" in joined and f"Contents of {work / 'CLAUDE.md'}" not in joined
    (line,) = log_lines(done.stderr)
    assert "memory file" in line and "not a regular file" in line
