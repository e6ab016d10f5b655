"""cost_usd: declared pricing or unknown (WIRE-012)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.providers.base import Usage
from agentx.providers.pricing import Pricing, cost_usd

USAGE = Usage(
    input_tokens=1_000_000,
    output_tokens=500_000,
    cache_creation_input_tokens=200_000,
    cache_read_input_tokens=300_000,
)


@pytest.mark.parametrize(
    ("pricing", "usage", "cost"),
    [
        (None, USAGE, None),
        (None, Usage(), None),
        (Pricing(input_per_mtok=0.0, output_per_mtok=0.0), USAGE, 0.0),
        (Pricing(input_per_mtok=1.25, output_per_mtok=10.0), Usage(), 0.0),
        (Pricing(input_per_mtok=1.25, output_per_mtok=10.0), USAGE, 1.5 * 1.25 + 0.5 * 10.0),
        (Pricing(input_per_mtok=3.0, output_per_mtok=15.0), Usage(output_tokens=1), 15e-6),
    ],
    ids=[
        "unknown-is-none",
        "unknown-even-for-no-tokens",
        "declared-zero-is-known-zero",
        "no-tokens",
        "cache-tokens-at-input-rate",
        "one-token",
    ],
)
def test_cost_usd(pricing: Pricing | None, usage: Usage, cost: float | None) -> None:
    result = cost_usd(pricing, usage)
    if cost is None:
        assert result is None
    else:
        assert result == pytest.approx(cost)


@pytest.mark.parametrize(
    "rates",
    [(-0.01, 1.0), (1.0, -0.01), (math.inf, 1.0), (1.0, math.nan)],
    ids=["negative-input", "negative-output", "infinite", "nan"],
)
def test_pricing_rejects_invalid_rates(rates: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match="finite and non-negative"):
        Pricing(input_per_mtok=rates[0], output_per_mtok=rates[1])


@given(
    rate=st.floats(min_value=0, max_value=1000),
    a=st.integers(min_value=0, max_value=10**9),
    b=st.integers(min_value=0, max_value=10**9),
)
def test_cost_is_additive_over_usage(rate: float, a: int, b: int) -> None:
    pricing = Pricing(input_per_mtok=rate, output_per_mtok=rate)
    split = cost_usd(pricing, Usage(input_tokens=a)), cost_usd(pricing, Usage(output_tokens=b))
    whole = cost_usd(pricing, Usage(input_tokens=a, output_tokens=b))
    assert whole is not None and None not in split
    assert whole == pytest.approx(sum(c for c in split if c is not None))
    assert whole >= 0
