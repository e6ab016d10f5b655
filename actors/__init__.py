"""Thin pykka actor shells around the cores in :mod:`agentx.messages`."""
