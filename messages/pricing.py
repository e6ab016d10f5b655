"""Declared provider prices (WIRE-012, DEC-AUTH-2 ``pricing``).

A module of its own so the registry (and with it prelaunch discovery,
WIRE-026) gets the type without importing the turn accounting machinery.
A ``NamedTuple`` rather than a dataclass: the two rates are plain floats,
nothing iterates, indexes or encodes a price, and ``typing.NamedTuple`` keeps
``dataclasses`` (and ``inspect``) off the start-up path (issue 4).
"""

# No ``from __future__ import annotations``: typing.NamedTuple would turn the
# string annotations into ForwardRefs, whose first compile() costs ~1 ms.
from typing import NamedTuple


class Pricing(NamedTuple):
    """Declared prices in USD per million tokens."""

    input_per_mtok: float
    output_per_mtok: float
