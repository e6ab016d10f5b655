"""``python -m agentx``."""

from agentx.cli import run

if __name__ == "__main__":
    run()
