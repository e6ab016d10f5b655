"""End-to-end: routing data is private, not secret (DEC-AUTH-3, DEC-AUTH-3a).

The model may write the endpoint, deployment or api_version of the selected
profile without ending the session (only secret values are in the streaming
union), while the api_key still ends it with exit 3.
"""

from __future__ import annotations

from pathlib import Path

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

KEY = "sk-routing-sentinel-key"
API_VERSION = "2025-04-01-preview"
DEPLOYMENT = "dep-routing-x"


def _azure(home: Path, url: str) -> None:
    write_auth(
        home,
        [
            {
                "id": "azure",
                "type": "azure_openai",
                "model": "model-x",
                "endpoint": url,
                "deployment": DEPLOYMENT,
                "api_version": API_VERSION,
                "api_key": KEY,
            }
        ],
    )


def test_model_text_may_carry_the_routing_data(home: Path) -> None:
    """DEC-AUTH-3a: the endpoint, deployment, api_version and the auth.json
    path in model text are ordinary text; the result carries them."""
    with ProviderServer([]) as server:
        said = f"see {server.url} {DEPLOYMENT} {API_VERSION} {home / 'auth.json'}"
        server.script(Reply(chunks=openai_text_stream(said)))
        _azure(home, server.url)
        proc = run_once((*DUPLEX, "--include-partial-messages"), encode(user("hi")), home=home)
    assert proc.returncode == 0, proc.stderr
    result = next(r for r in records_of(proc.stdout) if is_result(r))
    assert result["subtype"] == "success" and result["result"] == said


def test_model_text_carrying_the_key_still_ends_the_session(home: Path) -> None:
    """DEC-AUTH-3: the api_key is a secret: exit 3, and it never reaches stdout."""
    with ProviderServer([Reply(chunks=openai_text_stream("the key is ", KEY))]) as server:
        _azure(home, server.url)
        proc = run_once(DUPLEX, encode(user("hi")), home=home)
    assert proc.returncode == 3
    assert KEY.encode() not in proc.stdout and KEY not in proc.stderr.decode()


def test_init_and_initialize_never_carry_routing_data(home: Path) -> None:
    """DEC-AUTH-3a, scenario 27: no projection agentx builds spells the route."""
    with ProviderServer([Reply(chunks=openai_text_stream("ok"))]) as server:
        _azure(home, server.url)
        init = {"type": "control_request", "request_id": "i", "request": {"subtype": "initialize"}}
        proc = run_once(DUPLEX, encode(init) + encode(user("hi")), home=home)
        url = server.url
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    framing = [r for r in records if r["type"] in ("system", "control_response")]
    assert framing
    for literal in (url, "127.0.0.1", DEPLOYMENT, API_VERSION, str(home / "auth.json")):
        assert literal not in str(framing)
        assert literal not in proc.stderr.decode()
