"""A subagent's conversation is stored as sidechain entries beside its
parent's, on both stores (DEC-STORE-1, DEC-TURN-3); a ``--resume`` of the
parent replays the parent's conversation only, with exactly one
``tool_result`` for the ``Agent`` tool use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentx.messages.frozen import thaw
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import (
    DUPLEX,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import (
    ProviderServer,
    Reply,
    anthropic_text_stream,
    anthropic_tool_use,
)


def _entries(url: str, session_id: str) -> list[dict[str, Any]]:
    store = open_store(url, Path("/nonexistent"))
    try:
        return [thaw(e) for e in store.read(session_id).entries]
    finally:
        store.close()


def test_sidechains_are_stored_and_a_resume_replays_the_parent_only(
    tmp_path: Path, url: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    call = {"description": "Look", "prompt": "SUBTASK please"}
    replies = [
        Reply(chunks=anthropic_tool_use("Agent", call, "toolu_agent")),
        Reply(chunks=anthropic_tool_use("Glob", {"pattern": "*"}, "toolu_sub_glob")),
        Reply(chunks=anthropic_text_stream("SUB FINAL")),
        Reply(chunks=anthropic_text_stream("parent done")),
        Reply(chunks=anthropic_text_stream("again")),
    ]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "m-1",
                    "api_key": "sk-test-sidechain-1",
                    "endpoint": server.url,
                }
            ],
        )
        args = (*DUPLEX, "--session-store", url)
        first = run_once(args, encode(user("go")), home=home, cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        session_id = records_of(first.stdout)[0]["session_id"]
        second = run_once(
            (*args, "--resume", session_id), encode(user("more")), home=home, cwd=tmp_path
        )
        assert second.returncode == 0, second.stderr
        requests = [r.body for r in server.requests]
    assert next(r for r in records_of(second.stdout) if is_result(r))["result"] == "again"
    entries = _entries(url, session_id)
    sidechain = [e for e in entries if e["type"] == "sidechain"]
    assert [e["message"]["role"] for e in sidechain] == ["user", "assistant", "user", "assistant"]
    assert {e["parent_tool_use_id"] for e in sidechain} == {"toolu_agent"}
    assert {e["agent_type"] for e in sidechain} == {"general-purpose"}
    assert sidechain[0]["message"]["content"][0]["text"] == "SUBTASK please"
    # The resumed request: the parent's conversation, one answer per tool use.
    resumed = requests[-1]["messages"]
    assert [m["role"] for m in resumed] == ["user", "assistant", "user", "assistant", "user"]
    assert "toolu_sub_glob" not in repr(resumed) and 'SUB FINAL"' not in repr(resumed)
    answers = [
        b
        for m in resumed
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    assert [b["tool_use_id"] for b in answers] == ["toolu_agent"]
    assert answers[0]["content"].startswith("SUB FINAL")
