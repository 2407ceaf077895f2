"""The dry run's table: per suite, the runs and requests a run would make, their tokens and
their cost. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skilltest.cost.estimate import Tokens


@dataclass(frozen=True)
class SuiteEstimate:
    """What one suite would take."""

    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    suite: str
    """The suite file."""
    units: int
    """Scenarios (trigger queries) that would run."""
    runs: tuple[int, int]
    """Runs: the fewest and the most (``-k auto`` stops between them)."""
    least: Tokens
    """The fewest runs' requests, tokens and cost."""
    most: Tokens
    """The most runs' requests, tokens and cost."""
    models: tuple[str, ...] = ()
    """The models priced that the price table does not know (priced as opus)."""

    def __add__(self, other: SuiteEstimate) -> SuiteEstimate:
        return SuiteEstimate(
            self.layer,
            "total",
            self.units + other.units,
            (self.runs[0] + other.runs[0], self.runs[1] + other.runs[1]),
            self.least + other.least,
            self.most + other.most,
            tuple(sorted(set(self.models) | set(other.models))),
        )


DRY_RUN_LINE = (
    "dry run: nothing was called; what the run would make, estimated from the suites' text "
    "at list prices (skilltest.cost.prices; no batch discount)"
)
"""The line a dry run's table follows."""
TOKENS_LINE = (
    "input tokens: every token the requests read (from the prompt cache too); a range: the "
    "fewest and the most runs (-k auto stops between them)"
)
"""What the table's token figures and ranges are."""
FIGURE_HEADERS = ("runs", "requests", "input tokens", "output tokens", "cost (USD)")
"""The headers of :func:`figures`, after the units' own."""


def total_of(estimates: Sequence[SuiteEstimate]) -> SuiteEstimate:
    """The estimates summed (at least one)."""
    total = estimates[0]
    for each in estimates[1:]:
        total = total + each
    return total


def _span(low: float, high: float, shown: str) -> str:
    return format(low, shown) if low == high else f"{format(low, shown)}–{format(high, shown)}"


def _usd(low: float, high: float) -> str:
    return f"${low:.4f}" if low == high else f"${low:.4f}–${high:.4f}"


def figures(estimate: SuiteEstimate) -> list[str]:
    """A row's figures: units, runs, requests, tokens read and written, dollars."""
    return [
        str(estimate.units),
        _span(*estimate.runs, ","),
        _span(estimate.least.requests, estimate.most.requests, ","),
        _span(estimate.least.read, estimate.most.read, ","),
        _span(estimate.least.output, estimate.most.output, ","),
        _usd(estimate.least.usd, estimate.most.usd),
    ]


def render_estimate(
    estimates: Sequence[SuiteEstimate], *, noun: str, notes: Sequence[str] = ()
) -> str:
    """The table, a total line, and what the estimate assumes."""
    from tabulate import tabulate

    rows = []
    for each in estimates:
        rows.append([each.layer, each.suite, *figures(each)])
    if estimates:
        rows.append(["", "total", *figures(total_of(estimates))])
    headers = [
        "layer",
        "suite",
        noun,
        *FIGURE_HEADERS,
    ]
    lines = [
        DRY_RUN_LINE,
        tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True),
        TOKENS_LINE,
    ]
    unknown = sorted({m for e in estimates for m in e.models})
    if unknown:
        lines.append(f"priced as opus (not in the price table): {', '.join(unknown)}")
    lines += list(notes)
    return "\n".join(lines)
