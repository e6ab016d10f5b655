"""Cost of a model call from the profile's declared pricing (WIRE-012, DEC-AUTH-2).

The auth.json ``pricing`` object declares USD per million input and output
tokens. No declaration means the cost is unknown: :func:`cost_usd` returns
None, which the result records emit as JSON null (never a guessed zero).
Declared zeros are a known zero cost. The declaration has no cache rates, so
cache-creation and cache-read tokens are charged at the input rate: an upper
bound rather than an undercount, since providers bill cache reads below it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentx.providers.base import Usage

TOKENS_PER_RATE_UNIT = 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class Pricing:
    """Declared USD rates per million tokens (auth.json ``pricing``)."""

    input_per_mtok: float
    output_per_mtok: float

    def __post_init__(self) -> None:
        for rate in (self.input_per_mtok, self.output_per_mtok):
            if not math.isfinite(rate) or rate < 0:
                raise ValueError("pricing rates must be finite and non-negative")


def cost_usd(pricing: Pricing | None, usage: Usage) -> float | None:
    """USD cost of ``usage`` under ``pricing``; None when pricing is unknown (WIRE-012)."""
    if pricing is None:
        return None
    input_tokens = (
        usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    )
    return (
        input_tokens * pricing.input_per_mtok + usage.output_tokens * pricing.output_per_mtok
    ) / TOKENS_PER_RATE_UNIT
