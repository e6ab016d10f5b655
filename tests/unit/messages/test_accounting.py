"""Usage and cost accounting (WIRE-012 null vs 0 vs numbers, DECISIONS section 11)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentx.messages.accounting import Pricing, TokenUsage, TurnAccounting, cost_usd

PRICED = Pricing(input_per_mtok=3.0, output_per_mtok=15.0)
FREE = Pricing(input_per_mtok=0.0, output_per_mtok=0.0)


@pytest.mark.parametrize(
    ("pricing", "usage", "expected"),
    [
        pytest.param(None, TokenUsage(input_tokens=10, output_tokens=5), None, id="unknown-null"),
        pytest.param(None, TokenUsage(), None, id="unknown-even-with-no-tokens"),
        pytest.param(FREE, TokenUsage(input_tokens=10, output_tokens=5), 0.0, id="declared-zero"),
        pytest.param(PRICED, TokenUsage(), 0.0, id="priced-no-tokens-is-zero"),
        pytest.param(
            PRICED, TokenUsage(input_tokens=1_000_000), 3.0, id="one-million-input-tokens"
        ),
        pytest.param(
            PRICED, TokenUsage(output_tokens=1_000_000), 15.0, id="one-million-output-tokens"
        ),
        pytest.param(
            PRICED,
            TokenUsage(input_tokens=2_000, output_tokens=1_000),
            0.021,
            id="mixed",
        ),
        pytest.param(
            PRICED,
            TokenUsage(cache_creation_input_tokens=500, cache_read_input_tokens=700),
            0.0,
            id="cache-tokens-are-not-priced",
        ),
    ],
)
def test_cost_usd(pricing: Pricing | None, usage: TokenUsage, expected: float | None) -> None:
    got = cost_usd(pricing, usage)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected)
        assert got is not None


def test_token_usage_adds_every_field() -> None:
    a = TokenUsage(
        input_tokens=1, output_tokens=2, cache_creation_input_tokens=3, cache_read_input_tokens=4
    )
    b = TokenUsage(
        input_tokens=10,
        output_tokens=20,
        cache_creation_input_tokens=30,
        cache_read_input_tokens=40,
    )
    assert (a + b).to_wire() == {
        "input_tokens": 11,
        "output_tokens": 22,
        "cache_creation_input_tokens": 33,
        "cache_read_input_tokens": 44,
    }
    assert list((a + b).to_wire()) == [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]


def test_empty_turn() -> None:
    """No model call: zero usage, empty modelUsage; cost null without pricing, 0 with it."""
    unknown = TurnAccounting(None)
    assert unknown.total == TokenUsage()
    assert unknown.model_usage() == {}
    assert unknown.total_cost_usd() is None
    assert TurnAccounting(PRICED).total_cost_usd() == 0


@pytest.mark.parametrize(
    ("pricing", "total", "per_model"),
    [
        pytest.param(None, None, {"m1": None, "m2": None}, id="unknown-pricing-all-null"),
        pytest.param(FREE, 0.0, {"m1": 0.0, "m2": 0.0}, id="declared-zero-all-zero"),
        pytest.param(PRICED, 0.024, {"m1": 0.021, "m2": 0.003}, id="priced"),
    ],
)
def test_per_model_usage_and_cost(
    pricing: Pricing | None, total: float | None, per_model: dict[str, float | None]
) -> None:
    acct = TurnAccounting(pricing)
    acct.add("m1", TokenUsage(input_tokens=1_000, output_tokens=400, cache_read_input_tokens=7))
    acct.add("m2", TokenUsage(input_tokens=1_000, cache_creation_input_tokens=9))
    acct.add("m1", TokenUsage(input_tokens=1_000, output_tokens=600))
    assert acct.total == TokenUsage(
        input_tokens=3_000,
        output_tokens=1_000,
        cache_creation_input_tokens=9,
        cache_read_input_tokens=7,
    )
    usage = acct.model_usage()
    assert list(usage) == ["m1", "m2"]
    with pytest.raises(TypeError):  # a record value: frozen all the way down
        usage["m1"]["inputTokens"] = 0
    expected_tokens = {
        "m1": {
            "inputTokens": 2_000,
            "outputTokens": 1_000,
            "cacheReadInputTokens": 7,
            "cacheCreationInputTokens": 0,
        },
        "m2": {
            "inputTokens": 1_000,
            "outputTokens": 0,
            "cacheReadInputTokens": 0,
            "cacheCreationInputTokens": 9,
        },
    }
    for model, entry in usage.items():
        assert list(entry) == [
            "inputTokens",
            "outputTokens",
            "cacheReadInputTokens",
            "cacheCreationInputTokens",
            "costUSD",
        ]
        assert {k: v for k, v in entry.items() if k != "costUSD"} == expected_tokens[model]
        want = per_model[model]
        if want is None:
            assert entry["costUSD"] is None
        else:
            assert entry["costUSD"] == pytest.approx(want)
    got_total = acct.total_cost_usd()
    if total is None:
        assert got_total is None
    else:
        assert got_total == pytest.approx(total)


_usage = st.builds(
    TokenUsage,
    input_tokens=st.integers(0, 10**7),
    output_tokens=st.integers(0, 10**7),
    cache_creation_input_tokens=st.integers(0, 10**7),
    cache_read_input_tokens=st.integers(0, 10**7),
)


@given(st.lists(st.tuples(st.sampled_from(("a", "b", "c")), _usage), max_size=8))
def test_total_cost_is_the_sum_of_model_costs(calls: list[tuple[str, TokenUsage]]) -> None:
    acct = TurnAccounting(PRICED)
    for model, usage in calls:
        acct.add(model, usage)
    costs = [entry["costUSD"] for entry in acct.model_usage().values()]
    assert acct.total_cost_usd() == pytest.approx(sum(costs))
    assert sum(e["inputTokens"] for e in acct.model_usage().values()) == acct.total.input_tokens


class TieredCatalog:
    """A catalog that prices input above 100 tokens per request double, and
    knows no price for cache writes (a ``CatalogPrice``)."""

    def cost(
        self,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_creation_input_tokens: int,
        cache_read_input_tokens: int,
    ) -> float | None:
        if cache_creation_input_tokens:
            return None
        rate = 2.0 if input_tokens > 100 else 1.0
        return (rate * input_tokens + output_tokens) / 1_000_000


CATALOG = Pricing(0.0, 0.0, catalog=TieredCatalog())


@pytest.mark.parametrize(
    ("pricing", "requests", "total", "per_model"),
    [
        pytest.param(PRICED, [("a", None)], None, {"a": None}, id="one-request-without-usage"),
        pytest.param(
            PRICED,
            [("a", TokenUsage(input_tokens=1_000_000)), ("a", None)],
            None,
            {"a": None},
            id="second-of-two-without-usage",
        ),
        pytest.param(
            PRICED,
            [("a", TokenUsage(input_tokens=1_000_000)), ("b", None)],
            None,
            {"a": 3.0, "b": None},
            id="other-model-keeps-its-cost",
        ),
        pytest.param(FREE, [("a", None)], None, {"a": None}, id="declared-zero-unknown-usage"),
        pytest.param(None, [("a", TokenUsage(input_tokens=5))], None, {"a": None}, id="no-pricing"),
        pytest.param(
            CATALOG,
            [("a", TokenUsage(input_tokens=100)), ("a", TokenUsage(input_tokens=101))],
            (100 + 202) / 1_000_000,
            {"a": (100 + 202) / 1_000_000},
            id="catalog-priced-per-request-at-the-tier-and-one-past",
        ),
        pytest.param(
            CATALOG,
            [("a", TokenUsage(input_tokens=10)), ("a", TokenUsage(cache_creation_input_tokens=1))],
            None,
            {"a": None},
            id="catalog-without-a-complete-price-is-null",
        ),
    ],
)
def test_unknown_usage_or_price_is_null_never_partial(
    pricing: Pricing | None,
    requests: list[tuple[str, TokenUsage | None]],
    total: float | None,
    per_model: dict[str, float | None],
) -> None:
    """WIRE-012: a request whose usage or price is unknown makes its model's
    ``costUSD`` and the turn's ``total_cost_usd`` null."""
    acct = TurnAccounting(pricing)
    for model, usage in requests:
        acct.add(model, usage)
    got = acct.total_cost_usd()
    assert got == (pytest.approx(total) if total is not None else None)
    costs = {model: entry["costUSD"] for model, entry in acct.model_usage().items()}
    assert costs == {
        model: (pytest.approx(cost) if cost is not None else None)
        for model, cost in per_model.items()
    }
