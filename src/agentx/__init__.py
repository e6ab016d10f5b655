"""agentx: a host process for the Structured SDK Wire Protocol."""

__version__ = "0.1.0"
