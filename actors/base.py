"""Shared actor plumbing: the inbox every agentx actor uses.

pykka's ThreadingActor defaults to ``queue.Queue``, whose per-message locking
costs several times a ``queue.SimpleQueue`` on this hardware; pykka lets an
actor choose its inbox (only ``put``/``get``/``empty`` are used).
"""

from __future__ import annotations

import queue
from typing import TYPE_CHECKING, Any

import pykka

if TYPE_CHECKING:
    from pykka._actor import ActorInbox


class Actor(pykka.ThreadingActor):
    """A ThreadingActor with a SimpleQueue inbox."""

    @staticmethod
    def _create_actor_inbox() -> ActorInbox:
        inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        return inbox
