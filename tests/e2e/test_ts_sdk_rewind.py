"""``rewindFiles`` under the stock TypeScript Agent SDK (DEC-PROFILE-2):
``tests/e2e/ts_sdk/rewind.mjs`` changes files across two prompts on a
scripted model, then rewinds to the first (a dry run first)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agentx.messages.checkpoints import NOT_FOUND
from tests.e2e.agentx_process import agentx_command, write_auth, write_script
from tests.e2e.test_rewind_files import AFTER_SECOND, ORIGINAL, TWO_MESSAGES, disk
from tests.e2e.test_ts_sdk import DRIVER_DIR, _node


def test_rewind_files_the_ts_sdk_way(tmp_path: Path) -> None:
    node = _node()
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    for name, text in ORIGINAL.items():
        (work / name).write_text(text)
    script = write_script(home / "script.json", TWO_MESSAGES)
    write_auth(home, [{"id": "s", "type": "scripted", "model": "m", "script": str(script)}])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTX_", "CLAUDE_"))}
    done = subprocess.run(
        [node, "rewind.mjs", agentx_command()[0], str(home), str(work)],
        cwd=DRIVER_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    steps = {line["step"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0 and "done" in steps, (steps.get("failed"), done.stderr[-2000:])
    assert steps["first"]["subtype"] == steps["second"]["subtype"] == "success"
    assert steps["first"]["uuid"] and steps["first"]["uuid"] != steps["second"]["uuid"]

    dry = steps["dry"]["answer"]
    assert dry["canRewind"] is True
    assert sorted(dry["filesChanged"]) == sorted(
        str(work / n) for n in ("a.txt", "b.txt", "c.txt", "d.txt")
    )
    rewound = steps["rewound"]["answer"]
    assert rewound["canRewind"] is True and rewound["filesChanged"] == dry["filesChanged"]
    assert disk(work) == ORIGINAL and disk(work) != AFTER_SECOND
    assert steps["unknown_dry"]["answer"] == {"canRewind": False, "error": NOT_FOUND}
    assert steps["unknown"]["rejected"] is True and NOT_FOUND in steps["unknown"]["error"]
