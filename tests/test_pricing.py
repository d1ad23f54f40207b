"""Pricing usage the provider did not price: the user's prices, then the maintained table."""

from __future__ import annotations

import pytest

from core.config.pricing import ModelPrice, priced, table_cost
from core.model.events import UsageStats

SONNET_USAGE = UsageStats(turns=1, input=1000, output=500, cache_read=2000, cache_write=100)


def test_the_table_prices_input_output_and_both_cache_kinds() -> None:
    # Claude Sonnet 4.5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    expected = (1000 * 3 + 500 * 15 + 2000 * 0.30 + 100 * 3.75) / 1_000_000
    assert table_cost(SONNET_USAGE, "claude-sonnet-4-5") == pytest.approx(expected)


def test_provider_prefixed_names_are_found() -> None:
    assert table_cost(SONNET_USAGE, "anthropic/claude-sonnet-4-5") == table_cost(
        SONNET_USAGE, "claude-sonnet-4-5"
    )


def test_an_unknown_model_stays_unpriced_and_says_so() -> None:
    usage = UsageStats(turns=1, input=10, output=5, model="qwen2.5:7b-local", priced=False)
    result = priced(usage, {})
    assert (result.cost, result.priced) == (0.0, False)
    assert "$—" in result.line()


def test_the_users_price_comes_before_the_table() -> None:
    usage = SONNET_USAGE.model_copy(update={"model": "claude-sonnet-4-5", "priced": False})
    mine = ModelPrice(input=1.0, output=2.0, cache_read=0.5)
    result = priced(usage, {"claude-sonnet-4-5": mine})
    assert result.priced
    assert result.cost == pytest.approx((1000 * 1 + 500 * 2 + 2000 * 0.5 + 100 * 1) / 1e6)


def test_a_provider_reported_cost_is_kept() -> None:
    usage = SONNET_USAGE.model_copy(update={"model": "claude-sonnet-4-5", "cost": 0.5})
    assert priced(usage, {}).cost == 0.5


def test_an_unpriced_part_makes_the_total_a_lower_bound() -> None:
    total = UsageStats(cost=0.01, model="a") + UsageStats(model="b", priced=False)
    assert not total.priced
    assert "≥$0.0100" in total.line()


def test_a_model_the_table_lacks_is_searched_for_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A local model's every step asked the table again (an exception each time)."""
    import genai_prices

    searched: list[str] = []
    search = genai_prices.calc_price

    def counting(usage: object, model_ref: str, *, provider_id: str | None = None) -> object:
        searched.append(model_ref)
        return search(usage, model_ref, provider_id=provider_id)

    monkeypatch.setattr(genai_prices, "calc_price", counting)
    for _ in range(3):
        assert table_cost(SONNET_USAGE, "my-local-model-7b") is None
    assert searched == ["my-local-model-7b"]
    assert table_cost(SONNET_USAGE, "claude-sonnet-4-5") is not None  # a known one still is


def test_names_a_server_makes_up_do_not_pile_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.config import pricing

    monkeypatch.setattr(pricing, "_not_in_table", set())
    for number in range(pricing.MAX_MISSES_KEPT * 2):
        table_cost(SONNET_USAGE, f"made-up-{number}")
    assert len(pricing._not_in_table) <= pricing.MAX_MISSES_KEPT
