"""The price table: US dollars per million tokens, per model family. Pure.

| model (name contains)                         | input | output | cache write | cache read |
| --------------------------------------------- | ----- | ------ | ----------- | ---------- |
| ``opus-4-1``, ``opus-4-2025``, ``3-opus``     | 15.00 | 75.00  | 18.75       | 1.50       |
| ``opus``                                      |  5.00 | 25.00  |  6.25       | 0.50       |
| ``sonnet``                                    |  3.00 | 15.00  |  3.75       | 0.30       |
| ``3-5-haiku``, ``haiku-3-5``                  |  0.80 |  4.00  |  1.00       | 0.08       |
| ``haiku``                                     |  1.00 |  5.00  |  1.25       | 0.10       |

Anthropic's list prices for the Claude families; the first row whose pattern the model's name
contains prices it. A cache write is the 5-minute cache's (1.25 times input), a cache read a
tenth of input. A name no row matches (another provider's, a new family) is priced as ``opus``,
the dearest current row, and the estimate says so. Prices change: this table is what an
estimate and ``--max-cost-usd`` assume when the backend reports no cost of its own (the
``claude`` CLI reports one per run, and that one is used).

The Message Batches API halves every price (:data:`BATCH_DISCOUNT`); no layer sends batches
yet, so no estimate applies it.
"""

from __future__ import annotations

from dataclasses import dataclass

PER_TOKENS = 1_000_000
"""Prices are per million tokens."""

BATCH_DISCOUNT = 0.5
"""What the Message Batches API charges, as a share of the prices below (not applied yet)."""


@dataclass(frozen=True)
class Price:
    """One row of the table, US dollars per million tokens."""

    family: str
    """What the row is called."""
    input: float
    """Uncached input."""
    output: float
    """Generated output."""
    cache_write: float
    """Input written to the prompt cache (5 minutes)."""
    cache_read: float
    """Input read from the prompt cache."""

    def usd(
        self, *, input: int = 0, output: int = 0, cache_write: int = 0, cache_read: int = 0
    ) -> float:
        """The cost of these token counts."""
        total = (
            input * self.input
            + output * self.output
            + cache_write * self.cache_write
            + cache_read * self.cache_read
        )
        return total / PER_TOKENS


OPUS_LEGACY = Price("opus (4.1 and earlier)", 15.0, 75.0, 18.75, 1.50)
OPUS = Price("opus", 5.0, 25.0, 6.25, 0.50)
SONNET = Price("sonnet", 3.0, 15.0, 3.75, 0.30)
HAIKU_LEGACY = Price("haiku 3.5", 0.80, 4.0, 1.0, 0.08)
HAIKU = Price("haiku", 1.0, 5.0, 1.25, 0.10)

PRICES: tuple[tuple[tuple[str, ...], Price], ...] = (
    (("opus-4-1", "opus-4-2025", "3-opus"), OPUS_LEGACY),
    (("opus",), OPUS),
    (("sonnet",), SONNET),
    (("3-5-haiku", "haiku-3-5"), HAIKU_LEGACY),
    (("haiku",), HAIKU),
)
"""The table: patterns a model name contains, and its prices; the first match wins."""

UNKNOWN = OPUS
"""The price of a model no row matches: the dearest current family."""


def price_of(model: str | None) -> tuple[Price, bool]:
    """The prices of ``model`` and whether the table knows it (``False``: priced as opus)."""
    name = (model or "").lower()
    for patterns, price in PRICES:
        if any(pattern in name for pattern in patterns):
            return price, True
    return UNKNOWN, False


def usd(
    model: str | None,
    *,
    input: int = 0,
    output: int = 0,
    cache_write: int = 0,
    cache_read: int = 0,
) -> float:
    """What these token counts cost on ``model`` at list prices."""
    price, _ = price_of(model)
    return price.usd(input=input, output=output, cache_write=cache_write, cache_read=cache_read)


def run_cost(
    reported: float | None,
    model: str | None,
    *,
    input: int = 0,
    output: int = 0,
    cache_write: int = 0,
    cache_read: int = 0,
) -> float:
    """What one run cost: the backend's own figure when it reported one (the ``claude`` CLI
    does), else its token counts at list prices."""
    if reported is not None:
        return reported
    return usd(model, input=input, output=output, cache_write=cache_write, cache_read=cache_read)
