"""What a response cost, when the provider does not say: a maintained price table.

OpenAI-compatible servers rarely report cost (OpenRouter does; OpenAI, Ollama and vLLM do not),
so Baton prices usage itself from ``genai-prices`` — Pydantic's maintained table of model
prices, cache reads and writes included — and from the user's own ``prices:`` in config.yaml,
which come first (local models, renamed deployments, negotiated rates).

A model found in neither is *unpriced*: its usage keeps the tokens, ``cost`` stays 0 and
``priced`` is False, so the window can show "—" and say why instead of a misleading $0.

Importing the table takes ~0.1 s, so it is loaded once, off the event loop
(:func:`load_price_table`), before the first response needs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from decimal import Decimal
from functools import cache
from types import ModuleType

from pydantic import BaseModel, ConfigDict, Field

from core.model.events import UsageStats

PER_MILLION = 1_000_000


class ModelPrice(BaseModel):
    """A user's price for one model, in US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    """Defaults to the input price."""
    cache_write: float | None = Field(default=None, ge=0)
    """Defaults to the input price."""

    def cost(self, usage: UsageStats) -> float:
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        dollars = (
            usage.input * self.input
            + usage.output * self.output
            + usage.cache_read * cache_read
            + usage.cache_write * cache_write
        )
        return round(dollars / PER_MILLION, 10)


@cache
def _genai_prices() -> ModuleType:
    import genai_prices

    return genai_prices


async def load_price_table() -> None:
    """Import the maintained table in a worker thread, so no response waits on it. Once
    imported, nothing is handed to a thread: every step asks, and the hop to a worker thread
    and back cost more than the rest of a step's pricing."""
    if _genai_prices.cache_info().currsize:
        return
    await asyncio.to_thread(_genai_prices)


MAX_MISSES_KEPT = 256
_not_in_table: set[tuple[str, str | None]] = set()
"""Names the table does not know (with the provider asked for): each miss was searched for
again on every step, with an exception — a local model's batch paid it twice an item."""


def table_cost(usage: UsageStats, model: str) -> float | None:
    """The maintained table's price of ``usage`` for ``model``; None when it does not know
    the model. ``provider/model`` names (OpenRouter's) are tried whole, then as provider and
    model."""
    attempts: list[tuple[str, str | None]] = [(model, None)]
    if "/" in model:
        vendor, _, bare = model.rpartition("/")
        attempts += [(bare, vendor), (bare, None)]
    attempts = [attempt for attempt in attempts if attempt not in _not_in_table]
    if not attempts:
        return None
    prices = _genai_prices()
    # The table counts cache reads and writes inside the input tokens; Baton counts them apart.
    tokens = prices.Usage(
        input_tokens=usage.input + usage.cache_read + usage.cache_write,
        output_tokens=usage.output,
        cache_read_tokens=usage.cache_read,
        cache_write_tokens=usage.cache_write,
    )
    for name, provider_id in attempts:
        try:
            calculation = prices.calc_price(tokens, name, provider_id=provider_id)
        except LookupError:
            if len(_not_in_table) >= MAX_MISSES_KEPT:  # names a server made up, one a response
                _not_in_table.clear()
            _not_in_table.add((name, provider_id))
            continue
        except ValueError:
            continue
        total: Decimal = calculation.total_price
        return round(float(total), 10)
    return None


def priced(usage: UsageStats, overrides: Mapping[str, ModelPrice]) -> UsageStats:
    """``usage`` with its cost filled in from the user's prices or the maintained table, or
    marked unpriced. Usage that already carries a provider-reported cost is returned as is."""
    if usage.priced or usage.model is None:
        return usage
    override = overrides.get(usage.model)
    cost = override.cost(usage) if override is not None else table_cost(usage, usage.model)
    if cost is None:
        return usage
    return usage.model_copy(update={"cost": cost, "priced": True})
