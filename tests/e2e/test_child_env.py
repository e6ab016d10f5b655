"""End-to-end: no child inherits a credential agentx holds (DEC-AUTH-3, DEC-HOOK-2).

A Bash ``env`` run by the model prints agentx's environment: the session
store's URL, the provider key variables, ``PGPASSWORD`` and any variable
whose value is a configured secret are not in it, and the session ends 0
(a secret in the tool result would have latched the output guard, exit 3).
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
    write_script,
)

OTHER_KEY = "sk-unselected-profile-key-93ab"
SECRETS = {
    "ANTHROPIC_API_KEY": "sk-ant-env-sentinel-1",
    "ANTHROPIC_AUTH_TOKEN": "ant-token-env-sentinel-2",
    "OPENAI_API_KEY": "sk-openai-env-sentinel-3",
    "AZURE_OPENAI_API_KEY": "azure-env-sentinel-4",
    "PGPASSWORD": "pg-env-sentinel-5",
    "MY_EXPORTED_KEY": OTHER_KEY,
}


def test_bash_env_prints_nothing_secret(home: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bash = {"tool_use": {"name": "Bash", "input": {"command": "env"}}}
    script = write_script(home / "script.json", [{"steps": [bash]}, {"steps": [{"text": "done"}]}])
    write_auth(
        home,
        [
            {"id": "s", "type": "scripted", "model": "m", "script": str(script), "default": True},
            {"id": "other", "type": "scripted", "model": "m2", "api_key": OTHER_KEY},
        ],
    )
    store = f"file://{tmp_path / 'sessions'}"
    env = {**SECRETS, "AGENTX_SESSION_STORE": store, "VISIBLE_MARKER": "plain-value"}
    proc = run_once(
        (*DUPLEX, "--permission-mode", "bypassPermissions"),
        encode(user("show env")),
        home=home,
        cwd=work,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    records = records_of(proc.stdout)
    printed = next(
        block["content"]
        for r in records
        if r["type"] == "user"
        for block in r["message"]["content"]
        if block["type"] == "tool_result"
    )
    assert "VISIBLE_MARKER=plain-value" in printed  # the command did print the environment
    for name, value in {**SECRETS, "AGENTX_SESSION_STORE": store}.items():
        assert f"{name}=" not in printed
        assert value not in printed
    assert next(r for r in records if is_result(r))["subtype"] == "success"
