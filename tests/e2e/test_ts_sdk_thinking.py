"""The thinking and model options the stock TypeScript Agent SDK's way
(DEC-CLI-5): ``tests/e2e/ts_sdk/thinking.mjs`` runs one ``query()`` per option
(``thinking``, ``maxThinkingTokens``, ``effort``, ``model``, ``fallbackModel``,
``betas``) against the loopback model; each case asserts the Messages API
request the model received and what the SDK reported."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agentx.config.models import ALIAS_MODELS
from tests.e2e.agentx_process import agentx_command
from tests.e2e.test_model_requests import OVERLOADED
from tests.e2e.test_ts_sdk import DRIVER_DIR, _node
from tests.fakes.provider_server import ProviderServer, Reply, anthropic_text_stream

KEY = "sk-ant-ts-thinking-77c1"
STEPS = ("adaptive", "enabled", "disabled", "max_thinking_tokens", "effort", "model", "betas")


def test_thinking_and_model_options_the_ts_sdk_way(tmp_path: Path) -> None:
    node = _node()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    replies = [Reply(chunks=anthropic_text_stream(step)) for step in STEPS]
    replies += [OVERLOADED, OVERLOADED, OVERLOADED, Reply(chunks=anthropic_text_stream("saved"))]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    env.pop("OPENAI_API_KEY", None)
    with ProviderServer(replies) as server:
        env |= {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": server.url}
        done = subprocess.run(
            [node, "thinking.mjs", agentx_command()[0], str(home), str(work)],
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
    assert len(requests) == len(STEPS) + 4
    by_step = dict(zip(STEPS, requests, strict=False))
    for step in STEPS:
        assert steps[step]["result"] == step and steps[step]["subtype"] == "success"

    assert by_step["adaptive"].body["thinking"] == {"type": "adaptive"}
    assert by_step["enabled"].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert by_step["enabled"].body["max_tokens"] == 8192 + 2048
    assert by_step["disabled"].body["thinking"] == {"type": "disabled"}
    assert by_step["max_thinking_tokens"].body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 4096,
    }
    assert "thinking" not in by_step["effort"].body
    assert by_step["effort"].body["output_config"] == {"effort": "max"}
    assert by_step["model"].body["model"] == ALIAS_MODELS["opus"]
    assert steps["model"]["model"] == steps["model"]["answeredBy"] == ALIAS_MODELS["opus"]
    assert "context-1m-2025-08-07" in by_step["betas"].headers["anthropic-beta"].split(",")
    assert "anthropic-beta" not in by_step["adaptive"].headers

    fallback = steps["fallback"]
    assert [r.body["model"] for r in requests[len(STEPS) :]] == [ALIAS_MODELS["opus"]] * 3 + [
        ALIAS_MODELS["sonnet"]
    ]
    assert fallback["fallbackModel"] == ALIAS_MODELS["sonnet"]
    assert fallback["answeredBy"] == ALIAS_MODELS["sonnet"] and fallback["result"] == "saved"
    assert fallback["subtypes"].count("api_retry") == 2
    assert "model_fallback" in fallback["subtypes"]
    assert KEY not in done.stdout and KEY not in done.stderr
