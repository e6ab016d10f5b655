"""``@file`` mentions and ``client_composed`` over the real process
(DEC-PROFILE-2, DEC-PERM-PATH, WIRE-017): in the ``sdk`` profile a mentioned
file is read into the prompt through the Read tool's permission path, unless
the record is ``client_composed``; a denied, outside or linked-out path is
not read and nobody is asked; the standalone profile expands nothing and
refuses the member."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

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
    RecordedRequest,
    Reply,
    anthropic_text_stream,
)

KEY = "sk-ant-mentions-4c1b"
INSIDE = "NOTES-INSIDE-5e2"
SECRET = "SECRET-OUTSIDE-9a7"
DENIED = "DENIED-INSIDE-3f0"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "notes.txt").write_text(f"{INSIDE}\n")
    (work / "my notes.txt").write_text(f"{INSIDE}-spaced\n")
    (work / "private.txt").write_text(f"{DENIED}\n")
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (work / "link.txt").symlink_to(outside / "secret.txt")
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(private.txt)"]}})
    )
    return work


def _run(
    home: Path, work: Path, records: list[dict[str, object]], *args: str
) -> tuple[list[dict[str, object]], list[RecordedRequest], str]:
    replies = [Reply(chunks=anthropic_text_stream("ok")) for _ in records]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "endpoint": server.url,
                    "api_key": KEY,
                }
            ],
        )
        stdin = b"".join(encode(r) for r in records)
        proc = run_once((*DUPLEX, *args), stdin, home=home, cwd=work)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr
    return records_of(proc.stdout), requests, proc.stderr.decode()


def _sent(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"][-1])


def test_sdk_reads_a_mentioned_file_inside(home: Path, work: Path) -> None:
    records, (request,), _ = _run(
        home, work, [user('look at @notes.txt and @"my notes.txt"')], "--control-profile", "sdk"
    )
    sent = _sent(request)
    assert INSIDE in sent and f"{INSIDE}-spaced" in sent
    assert "Called the Read tool with the following input" in sent
    assert not any(r["type"] == "control_request" for r in records)


@pytest.mark.parametrize(
    ("mention", "absent"),
    [
        ("@private.txt", DENIED),  # a deny rule
        ("@../outside/secret.txt", SECRET),  # outside the working directories
        ("@link.txt", SECRET),  # a link out
    ],
    ids=["denied", "outside", "link-out"],
)
def test_sdk_does_not_read_what_read_may_not(
    home: Path, work: Path, mention: str, absent: str
) -> None:
    records, (request,), _ = _run(home, work, [user(f"see {mention}")], "--control-profile", "sdk")
    sent = _sent(request)
    assert absent not in sent and mention in sent
    assert "Called the Read tool" not in sent
    assert not any(r["type"] == "control_request" for r in records)  # nobody is asked


def test_client_composed_is_sent_as_written(home: Path, work: Path) -> None:
    _, (request,), _ = _run(
        home, work, [user("look at @notes.txt", client_composed=True)], "--control-profile", "sdk"
    )
    assert INSIDE not in _sent(request) and "@notes.txt" in _sent(request)


def test_standalone_expands_nothing_and_refuses_the_member(home: Path, work: Path) -> None:
    records, requests, _ = _run(
        home, work, [user("look at @notes.txt"), user("again", client_composed=True)]
    )
    assert len(requests) == 1 and INSIDE not in _sent(requests[0])
    (refused,) = [r for r in records if is_result(r) and r["is_error"]]
    assert refused["errors"] == ["input_error: user record: unknown member"]


def test_the_python_sdk_verbatim_prompts_sets_client_composed(home: Path, work: Path) -> None:
    sdk = pytest.importorskip("claude_agent_sdk")
    import anyio

    agentx = str(Path(sys.executable).with_name("agentx"))
    replies = [Reply(chunks=anthropic_text_stream("ok")), Reply(chunks=anthropic_text_stream("ok"))]
    with ProviderServer(replies) as server:
        write_auth(
            home,
            [
                {
                    "id": "a",
                    "type": "anthropic",
                    "model": "model-x",
                    "endpoint": server.url,
                    "api_key": KEY,
                }
            ],
        )

        async def run(verbatim: bool) -> None:
            opts = sdk.ClaudeAgentOptions(
                cli_path=agentx,
                cwd=str(work),
                env={"AGENTX_HOME": str(home)},
                verbatim_prompts=verbatim,
            )
            [m async for m in sdk.query(prompt="look at @notes.txt", options=opts)]

        anyio.run(run, True)
        anyio.run(run, False)
        verbatim, expanded = list(server.requests)
    assert INSIDE not in _sent(verbatim) and INSIDE in _sent(expanded)
