"""Provider prices (WIRE-012, DEC-AUTH-2 ``pricing``).

A module of its own so the registry (and with it prelaunch discovery,
WIRE-026) gets the type without importing the turn accounting machinery.
A ``NamedTuple`` rather than a dataclass: nothing iterates, indexes or
encodes a price, and ``typing.NamedTuple`` keeps ``dataclasses`` (and
``inspect``) off the start-up path (WIRE-026).

Declared pricing carries the two rates. ``"pricing": "catalog"`` carries a
:class:`CatalogPrice` instead (the rates are then unused): it prices one
request's tokens for the profile's exact provider and model, or says None
when the catalog does not know them (WIRE-012: no guess, no partial price).
"""

# No ``from __future__ import annotations``: typing.NamedTuple would turn the
# string annotations into ForwardRefs, whose first compile() costs ~1 ms.
from typing import NamedTuple, Protocol


class CatalogPrice(Protocol):
    """A price catalog's answer for one provider and model."""

    def cost(
        self,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_creation_input_tokens: int,
        cache_read_input_tokens: int,
    ) -> float | None:
        """USD for one request's tokens (input excludes the cache tokens), or
        None when the catalog has no complete price for them."""


class Pricing(NamedTuple):
    """Prices in USD per million tokens, or a catalog's (``catalog`` set)."""

    input_per_mtok: float
    output_per_mtok: float
    catalog: CatalogPrice | None = None
