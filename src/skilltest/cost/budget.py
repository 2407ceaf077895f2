"""``--max-cost-usd``: no new run starts once the cost would pass the limit.

Before each run the layer asks :meth:`Budget.start` with the run's estimate. The run starts when
the cost spent so far, plus the estimates of the runs in flight, plus its own stays within the
limit; otherwise it does not, and no other run starts after it (the runs in flight finish, and
the results say the run stopped and why). When a run ends, its estimate gives way to what it
cost: the backend's own figure when it reports one (the ``claude`` CLI does), else its token
counts at the prices of :mod:`skilltest.cost.prices`.

A run's estimate is the same as ``--dry-run``'s, so the limit holds as far as the estimates do:
a run that costs more than estimated can take the spent cost past the limit by its difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_COST = "max-cost"
"""What a results file's ``stopped.by`` says of a run the budget stopped."""


@dataclass
class Budget:
    """The cost of a run so far against its limit. Used from one event loop."""

    limit_usd: float
    """``--max-cost-usd``."""
    spent_usd: float = 0.0
    """What the finished runs cost."""
    in_flight_usd: float = 0.0
    """The estimates of the runs under way."""
    runs: int = 0
    """Runs started."""
    refused: str | None = None
    """Why the first run refused was refused; ``None`` while every run may start."""
    named: str | None = None
    """The limit as the refusal names it (default ``--max-cost-usd X``): a budget that is a
    share of a larger one says so."""

    def start(self, estimate_usd: float) -> bool:
        """Whether a run estimated at ``estimate_usd`` may start (it is then in flight)."""
        if self.refused is not None:
            return False
        if self.spent_usd + self.in_flight_usd + estimate_usd > self.limit_usd:
            self.refused = (
                f"{self.named or f'--max-cost-usd {self.limit_usd:g}'}: "
                f"${self.spent_usd:.4f} spent and "
                f"${self.in_flight_usd:.4f} in flight after {self.runs} run(s); the next run "
                f"(about ${estimate_usd:.4f}) would pass the limit, so no more runs started"
            )
            return False
        self.in_flight_usd += estimate_usd
        self.runs += 1
        return True

    def finish(self, estimate_usd: float, cost_usd: float) -> None:
        """A run estimated at ``estimate_usd`` ended, having cost ``cost_usd``."""
        self.in_flight_usd = max(0.0, self.in_flight_usd - estimate_usd)
        self.spent_usd += cost_usd

    def stopped(self) -> dict[str, Any] | None:
        """The results file's ``stopped`` object; ``None`` when every run was let start."""
        if self.refused is None:
            return None
        return {
            "by": MAX_COST,
            "reason": self.refused,
            "limit_usd": self.limit_usd,
            "spent_usd": round(self.spent_usd, 6),
            "runs": self.runs,
        }
