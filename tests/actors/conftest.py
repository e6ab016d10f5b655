"""Actor test fixtures: no actor outlives its test (pykka ``examples/testing_test.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pykka
import pytest
from loguru import logger


@pytest.fixture(autouse=True)
def _stop_all_actors() -> Iterator[None]:
    yield
    pykka.ActorRegistry.stop_all()


def _logged(level: str) -> Iterator[list[str]]:
    messages: list[str] = []
    sink_id = logger.add(lambda m: messages.append(m.record["message"]), level=level)
    yield messages
    logger.remove(sink_id)


@pytest.fixture
def errors() -> Iterator[list[str]]:
    """The messages of the ERROR lines logged while the test runs."""
    yield from _logged("ERROR")


@pytest.fixture
def warnings() -> Iterator[list[str]]:
    """The messages of the WARNING (and worse) lines logged while the test runs."""
    yield from _logged("WARNING")
