"""End-to-end: attachments of a session in the PostgreSQL store (DEC-STORE-1,
WIRE-022): an image attached on one machine is in the model request of the
session resumed on another (another, empty ``$AGENTX_HOME``; the same database).
"""

from __future__ import annotations

import io
import uuid
from pathlib import Path
from typing import Any

from PIL import Image

from tests.e2e.agentx_process import (
    DUPLEX,
    encode,
    is_result,
    records_of,
    run_once,
    user,
    write_auth,
)
from tests.fakes.provider_server import ProviderServer, Reply, openai_text_stream


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (24, 24), (200, 30, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


def _image_urls(body: Any) -> list[str]:
    return [
        part["image_url"]["url"]
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


def test_an_image_attached_on_one_machine_reaches_the_model_on_another(
    pg_url: str, tmp_path: Path
) -> None:
    first_home, second_home = tmp_path / "machine-a", tmp_path / "machine-b"
    first_home.mkdir()
    second_home.mkdir()
    image = tmp_path / "diagram.png"
    image.write_bytes(_png())
    session = str(uuid.uuid4())
    replies = [
        Reply(chunks=openai_text_stream("a red square")),
        Reply(chunks=openai_text_stream("still a red square")),
    ]
    with ProviderServer(replies) as server:
        for home in (first_home, second_home):
            entry = {"id": "remote", "type": "openai", "model": "m", "endpoint": server.url + "/v1"}
            write_auth(home, [entry])
        store = ("--session-store", pg_url)
        attached = run_once(
            ["-p", "describe", "--attach", str(image), "--session-id", session, *store],
            b"",
            home=first_home,
        )
        assert attached.returncode == 0, attached.stderr
        resumed = run_once(
            [*DUPLEX, "--resume", session, *store],
            encode(user("and now?")),
            home=second_home,
        )
        bodies = [request.body for request in server.requests]
    assert resumed.returncode == 0, resumed.stderr
    assert [r["result"] for r in records_of(resumed.stdout) if is_result(r)] == [
        "still a red square"
    ]
    (sent,) = _image_urls(bodies[0])
    assert sent.startswith("data:image/png;base64,")
    assert _image_urls(bodies[1]) == [sent]
    for home in (first_home, second_home):  # (blobs/tmp stages uploads on each machine)
        assert not (home / "blobs" / "sha256").exists(), "the blob lives in the database"
