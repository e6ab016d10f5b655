from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.agentx_process import AgentxProcess


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty AgentX home: the built-in offline provider."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def processes() -> Iterator[list[AgentxProcess]]:
    """Processes started by a test are killed if the test leaves them running."""
    started: list[AgentxProcess] = []
    yield started
    for proc in started:
        proc.kill()
