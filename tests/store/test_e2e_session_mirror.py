"""``--session-mirror`` on both stores (DEC-STORE-1, DEC-PROFILE-2): every
transcript entry agentx stores is mirrored once, in order, as
``transcript_mirror`` frames the Agent SDKs read for ``session_store``,
under the ``filePath`` the SDKs derive their key from; and the stock Python
SDK's ``session_store`` receives exactly the stored entries."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from agentx.messages.frozen import thaw
from agentx.messages.transcript_mirror import project_key
from agentx.sessions.store.errors import SessionNotFound
from agentx.sessions.store.select import open_store
from tests.e2e.agentx_process import DUPLEX, encode, records_of, run_once, user


def _stored(url: str, session_id: str) -> list[dict[str, Any]]:
    store = open_store(url, Path("/nonexistent"))
    try:
        return [thaw(e) for e in store.read(session_id).entries]
    finally:
        store.close()


def test_every_stored_entry_is_mirrored_once(tmp_path: Path, url: str) -> None:
    home, work, config = tmp_path / "home", tmp_path / "work", tmp_path / "cc"
    home.mkdir()
    work.mkdir()
    stdin = encode(user("one")) + encode(user("two"))
    proc = run_once(
        (*DUPLEX, "--session-store", url, "--session-mirror"),
        stdin,
        home=home,
        cwd=work,
        env={"CLAUDE_CONFIG_DIR": str(config)},
    )
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    session_id = records[0]["session_id"]
    frames = [r for r in records if r["type"] == "transcript_mirror"]
    expected_path = (
        config / "projects" / project_key(os.path.realpath(work)) / f"{session_id}.jsonl"
    )
    assert {f["filePath"] for f in frames} == {str(expected_path)}
    mirrored = [e for f in frames for e in f["entries"]]
    assert mirrored[0]["type"] == "session_header" and mirrored[0]["session_id"] == session_id
    assert mirrored[1:] == _stored(url, session_id)
    # Each turn's entries leave before its result.
    kinds = [r["type"] for r in records if r["type"] in ("transcript_mirror", "result")]
    assert kinds == [
        "transcript_mirror",
        "transcript_mirror",
        "result",
        "transcript_mirror",
        "result",
    ]


def test_a_resume_mirrors_only_what_it_adds(tmp_path: Path, url: str) -> None:
    home, config = tmp_path / "home", tmp_path / "cc"
    home.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    first = run_once(
        (*DUPLEX, "--session-store", url, "--session-mirror"),
        encode(user("one")),
        home=home,
        env=env,
    )
    session_id = records_of(first.stdout)[0]["session_id"]
    before = len(_stored(url, session_id))
    again = run_once(
        (*DUPLEX, "--session-store", url, "--session-mirror", "--resume", session_id),
        encode(user("two")),
        home=home,
        env=env,
    )
    assert again.returncode == 0, again.stderr
    frames = [r for r in records_of(again.stdout) if r["type"] == "transcript_mirror"]
    assert [e for f in frames for e in f["entries"]] == _stored(url, session_id)[before:]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("-p", "hi", "--session-mirror"), "--session-mirror requires --output-format stream-json"),
        (
            (*DUPLEX, "--session-mirror", "--no-session-persistence"),
            "--session-mirror cannot be combined with --no-session-persistence",
        ),
    ],
    ids=["text-output", "no-persistence"],
)
def test_usage_errors(tmp_path: Path, args: tuple[str, ...], problem: str) -> None:
    proc = run_once(args, b"", home=tmp_path)
    assert proc.returncode == 2 and problem in proc.stderr.decode()


def test_the_python_sdk_session_store_receives_the_entries(tmp_path: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    import anyio

    home, work, config = tmp_path / "home", tmp_path / "work", tmp_path / "cc"
    home.mkdir()
    work.mkdir()
    store = sdk.InMemorySessionStore()

    async def run() -> tuple[Any, list[Any]]:
        opts = sdk.ClaudeAgentOptions(
            cli_path=str(Path(sys.executable).with_name("agentx")),
            cwd=str(work),
            env={"AGENTX_HOME": str(home), "CLAUDE_CONFIG_DIR": str(config)},
            session_store=store,
        )
        messages = [m async for m in sdk.query(prompt="hello", options=opts)]
        result = next(m for m in messages if type(m).__name__ == "ResultMessage")
        key = {"project_key": project_key(os.path.realpath(work)), "session_id": result.session_id}
        return result, list(await store.load(key) or [])

    result, entries = anyio.run(run)
    assert result.result == "hello"
    assert entries[0]["type"] == "session_header"
    stored = _stored(f"file://{home}/sessions", result.session_id)
    assert entries[1:] == stored and stored
    assert not any(e.get("type") == "transcript_mirror" for e in entries)


def test_a_resume_reads_the_session_the_sdk_wrote_back(tmp_path: Path, url: str) -> None:
    """A resume whose session agentx's own store lacks (another machine)
    reads the transcript the SDK wrote back from its store at the mirror's
    filePath, then goes on mirroring only what it adds."""
    home, config, work = tmp_path / "home", tmp_path / "cc", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    first = run_once(
        (*DUPLEX, "--session-mirror"), encode(user("remember me")), home=home, cwd=work, env=env
    )
    records = records_of(first.stdout)
    session_id = records[0]["session_id"]
    frames = [r for r in records if r["type"] == "transcript_mirror"]
    written = Path(frames[0]["filePath"])
    written.parent.mkdir(parents=True)
    written.write_text("".join(json.dumps(e) + "\n" for f in frames for e in f["entries"]))
    other = tmp_path / "other"
    other.mkdir()
    again = run_once(
        (*DUPLEX, "--session-store", url, "--session-mirror", "--resume", session_id),
        encode(user("and now")),
        home=other,
        cwd=work,
        env=env,
    )
    assert again.returncode == 0, again.stderr
    stored = _stored(url, session_id)
    texts = [b["text"] for e in stored if e["type"] == "message" for b in e["content"]]
    assert texts == ["remember me", "remember me", "and now", "and now"]
    added = [
        e
        for r in records_of(again.stdout)
        if r["type"] == "transcript_mirror"
        for e in r["entries"]
    ]
    assert added == stored[len(frames[0]["entries"]) + len(frames[1]["entries"]) - 1 :]


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (['{"type":"message"}'], "does not begin with this session's header"),
        (["not json"], "line 1 is not one JSON object"),
        (['{"type":"session_header","session_id":"SID"}'], "the session header cannot be read"),
    ],
    ids=["no-header", "not-json", "header-incomplete"],
)
def test_a_bad_written_back_transcript_is_refused(
    tmp_path: Path, lines: list[str], problem: str
) -> None:
    home, config, work = tmp_path / "home", tmp_path / "cc", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    session_id = "123e4567-e89b-42d3-a456-426614174000"
    folder = config / "projects" / project_key(os.path.realpath(work))
    folder.mkdir(parents=True)
    (folder / f"{session_id}.jsonl").write_text(
        "".join(line.replace("SID", session_id) + "\n" for line in lines)
    )
    proc = run_once(
        (*DUPLEX, "--session-mirror", "--resume", session_id),
        b"",
        home=home,
        cwd=work,
        env={"CLAUDE_CONFIG_DIR": str(config)},
    )
    assert proc.returncode == 2 and problem in proc.stderr.decode()


def test_the_python_sdk_resumes_from_its_session_store_elsewhere(tmp_path: Path) -> None:
    """The stock SDK's ``session_store`` round trip: the session is mirrored
    into the SDK's store, then resumed by an agentx whose own home is empty."""
    sdk = pytest.importorskip("claude_agent_sdk")
    import anyio

    from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream

    work = tmp_path / "work"
    work.mkdir()
    store = sdk.InMemorySessionStore()
    agentx = str(Path(sys.executable).with_name("agentx"))
    replies = [Reply(chunks=anthropic_text_stream(t)) for t in ("FIRST", "SECOND")]
    with ProviderServer(replies) as server:
        env = {"ANTHROPIC_API_KEY": "sk-ant-mirror-71e0", "ANTHROPIC_BASE_URL": server.url}

        async def run(home: Path, prompt: str, resume: str | None) -> Any:
            home.mkdir()
            opts = sdk.ClaudeAgentOptions(
                cli_path=agentx,
                cwd=str(work),
                env={**env, "AGENTX_HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "cc")},
                session_store=store,
                resume=resume,
            )
            messages = [m async for m in sdk.query(prompt=prompt, options=opts)]
            return next(m for m in messages if type(m).__name__ == "ResultMessage")

        first = anyio.run(run, tmp_path / "home1", "one", None)
        second = anyio.run(run, tmp_path / "home2", "two", first.session_id)
        requests = list(server.requests)
    assert second.session_id == first.session_id and second.result == "SECOND"
    sent = json.dumps(requests[-1].body["messages"])
    assert "one" in sent and "FIRST" in sent and "two" in sent


# --- DEC-AUTH-6: what is read back from the client's store passes the persist guard

KEY = "sk-ant-written-back-5d1c"


def _mirrored_session(tmp_path: Path, server_url: str, work: Path, config: Path) -> list[Any]:
    """A session of one turn in ``tmp_path/home1``, its mirrored entries in order."""
    from tests.e2e.agentx_process import write_anthropic_auth

    home = tmp_path / "home1"
    home.mkdir()
    write_anthropic_auth(home, server_url, KEY)
    first = run_once(
        (*DUPLEX, "--session-mirror"),
        encode(user("remember me")),
        home=home,
        cwd=work,
        env={"CLAUDE_CONFIG_DIR": str(config)},
    )
    assert first.returncode == 0, first.stderr
    frames = [r for r in records_of(first.stdout) if r["type"] == "transcript_mirror"]
    return [e for f in frames for e in f["entries"]]


def _user_text(entries: list[Any]) -> dict[str, Any]:
    return next(e for e in entries if e["type"] == "message" and e["role"] == "user")


@pytest.mark.parametrize("where", ["message", "header"])
def test_a_written_back_line_holding_a_credential_ends_the_resume(
    tmp_path: Path, url: str, where: str
) -> None:
    """A hostile or stale store's copy (a message, or the header's cwd, that
    holds the configured key): exit 2 naming the line, nothing stored, no
    model request, the key nowhere in the output."""
    from tests.e2e.agentx_process import write_anthropic_auth
    from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream

    config, work = tmp_path / "cc", tmp_path / "work"
    work.mkdir()
    replies = [Reply(chunks=anthropic_text_stream(t)) for t in ("FIRST", "SECOND")]
    with ProviderServer(replies) as server:
        entries = _mirrored_session(tmp_path, server.url, work, config)
        session_id = entries[0]["session_id"]
        if where == "header":
            entries[0]["cwd"] = KEY
            line = 1
        else:
            target = _user_text(entries)
            target["content"][0]["text"] = f"my key is {KEY}"
            line = entries.index(target) + 1
        path = config / "projects" / project_key(os.path.realpath(work)) / f"{session_id}.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(e) + "\n" for e in entries))
        home = tmp_path / "home2"
        home.mkdir()
        write_anthropic_auth(home, server.url, KEY)
        again = run_once(
            (*DUPLEX, "--session-store", url, "--session-mirror", "--resume", session_id),
            encode(user("and now")),
            home=home,
            cwd=work,
            env={"CLAUDE_CONFIG_DIR": str(config)},
        )
        requests = len(server.requests)
    assert again.returncode == 2 and again.stdout == b""
    assert again.stderr.decode() == (
        f"agentx: --resume: {path}: line {line} holds a configured credential; "
        "nothing of it was stored (DEC-AUTH-6)\n"
    )
    assert requests == 1  # the first session's only
    store = open_store(url, home)
    try:
        with pytest.raises(SessionNotFound):
            store.read(session_id)
    finally:
        store.close()


def test_a_fork_of_a_session_holding_a_now_configured_credential_is_refused(
    tmp_path: Path, url: str
) -> None:
    """Entries stored before a value became a credential: a fork's copy is
    stored anew, so it passes the guard too (DEC-AUTH-6); nothing is copied."""
    from tests.e2e.agentx_process import write_anthropic_auth
    from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream

    home = tmp_path / "home"
    home.mkdir()
    replies = [Reply(chunks=anthropic_text_stream(t)) for t in ("FIRST", "SECOND")]
    with ProviderServer(replies) as server:
        write_anthropic_auth(home, server.url, "sk-ant-old-0000")
        first = run_once((*DUPLEX, "--session-store", url), encode(user(f"note {KEY}")), home=home)
        assert first.returncode == 0, first.stderr
        session_id = records_of(first.stdout)[0]["session_id"]
        write_anthropic_auth(home, server.url, KEY)
        fork = run_once(
            (*DUPLEX, "--session-store", url, "--resume", session_id, "--fork-session"),
            encode(user("and now")),
            home=home,
        )
        requests = len(server.requests)
    assert fork.returncode == 2 and fork.stdout == b""
    assert fork.stderr.decode() == (
        f"agentx: --resume: session {session_id} holds a configured credential; "
        "the fork copied nothing (DEC-AUTH-6)\n"
    )
    assert requests == 1
    store = open_store(url, home)
    try:
        assert [header.session_id for header in store.headers()] == [session_id]
    finally:
        store.close()


def test_the_python_sdk_session_store_holding_a_credential_is_refused(tmp_path: Path) -> None:
    """The stock SDK's ``session_store`` resume from a store whose copy holds
    the configured key: the query fails (agentx's exit 2), the key reaches
    neither the model nor the SDK's stderr, and agentx stored nothing."""
    sdk = pytest.importorskip("claude_agent_sdk")
    import anyio

    from tests.e2e.python_sdk import run_query
    from tests.fakes.provider_server import Reply, anthropic_text_stream

    store = sdk.InMemorySessionStore()
    config = tmp_path / "cc"
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    messages, _ = run_query(
        tmp_path / "one",
        [Reply(chunks=anthropic_text_stream("FIRST"))],
        api_key=KEY,
        env=env,
        session_store=store,
    )
    session_id = next(m for m in messages if type(m).__name__ == "ResultMessage").session_id
    source = {
        "project_key": project_key(os.path.realpath(tmp_path / "one" / "work")),
        "session_id": session_id,
    }
    entries = list(anyio.run(store.load, source) or [])
    _user_text(entries)["content"][0]["text"] = f"my key is {KEY}"
    target = {
        "project_key": project_key(os.path.realpath(tmp_path / "two" / "work")),
        "session_id": session_id,
    }
    anyio.run(store.append, target, entries)
    lines: list[str] = []
    with pytest.raises(Exception, match="exit code 2"):
        run_query(
            tmp_path / "two",
            [Reply(chunks=anthropic_text_stream("SECOND"))],
            api_key=KEY,
            env=env,
            session_store=store,
            resume=session_id,
            stderr=lines.append,
        )
    assert any("holds a configured credential" in line for line in lines)
    assert not any(KEY in line for line in lines)
    with pytest.raises(SessionNotFound):
        _stored(f"file://{tmp_path / 'two' / 'home'}/sessions", session_id)
