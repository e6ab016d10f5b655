"""``python -m agentx``."""

from agentx.cli import run

run()
