"""Sessions and prompts the stock TypeScript Agent SDK's way (DEC-CLI-5,
DEC-STORE-1, DEC-PROFILE-2): ``tests/e2e/ts_sdk/sessions.mjs`` runs
``sessionStore`` (``--session-mirror``), ``resumeSessionAt`` with
``forkSession``, a resume from the SDK's store on an empty ``AGENTX_HOME``,
``setModel`` and ``verbatimPrompts`` against the loopback model; each step
asserts the request the model received and what the SDK reported."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agentx.messages.transcript_mirror import project_key
from tests.e2e.agentx_process import agentx_command, write_auth
from tests.e2e.test_ts_sdk import DRIVER_DIR, _node
from tests.fakes.provider_server import (
    ProviderServer,
    RecordedRequest,
    Reply,
    anthropic_text_stream,
)

KEY = "sk-ant-ts-sessions-2b9c"
REPLIES = ("ONE", "TWO", "AGAIN", "THREE", "SWITCHED", "VERBATIM", "EXPANDED")
NOTES = "TS-NOTES-CONTENT-81d"


def _texts(request: RecordedRequest) -> list[str]:
    out: list[str] = []
    for message in request.body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(b["text"] for b in content if b.get("type") == "text")
    return out


def test_sessions_the_ts_sdk_way(tmp_path: Path) -> None:
    node = _node()
    home, other, work, config = (tmp_path / n for n in ("home", "other", "work", "cc"))
    for folder in (home, other, work):
        folder.mkdir()
    (work / "notes.txt").write_text(f"{NOTES}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    with ProviderServer([Reply(chunks=anthropic_text_stream(t)) for t in REPLIES]) as server:
        profile = {
            "id": "a",
            "type": "anthropic",
            "model": "model-x",
            "models": ["model-y"],
            "endpoint": server.url,
            "api_key": KEY,
        }
        write_auth(home, [profile])
        write_auth(other, [profile])
        done = subprocess.run(
            [
                node,
                "sessions.mjs",
                agentx_command()[0],
                str(home),
                str(other),
                str(work),
                str(config),
                project_key(os.path.realpath(work)),
            ],
            cwd=DRIVER_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        requests = list(server.requests)
    steps = {line["step"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0 and "done" in steps, (steps.get("failed"), done.stderr[-2000:])
    assert len(requests) == len(REPLIES)
    by_step = dict(zip(REPLIES, requests, strict=True))

    # sessionStore: the mirrored entries reached the SDK's store.
    stored = steps["stored"]
    assert stored["types"][0] == "session_header" and "message" in stored["types"]
    # resumeSessionAt + forkSession: the conversation up to the first answer.
    assert _texts(by_step["AGAIN"]) == ["one", "ONE", "again"]
    assert steps["resume_at"]["sessionId"] != steps["mirror"]["sessionId"]
    # A resume from the SDK's store, on an AGENTX_HOME that never saw the
    # session: the store holds what was mirrored (the second turn ran without it).
    assert _texts(by_step["THREE"]) == ["one", "ONE", "three"]
    assert steps["from_store"]["sessionId"] == steps["mirror"]["sessionId"]
    # setModel before the prompt: the request names the new model.
    assert by_step["SWITCHED"].body["model"] == "model-y"
    assert steps["set_model"]["models"] == ["model-y"]
    # verbatimPrompts: client_composed, no @file expansion; without it, expanded.
    assert NOTES not in json.dumps(by_step["VERBATIM"].body["messages"])
    assert NOTES in json.dumps(by_step["EXPANDED"].body["messages"])
    assert KEY not in done.stdout and KEY not in done.stderr
