"""How many runs per arm: a fixed K, or adaptive repetitions that stop once the verdict is known.

**Fixed K** (a suite's ``repetitions: N`` or ``-k N``): every arm runs K times and the verdict
uses 95% intervals.

**Adaptive** (``-k auto``, and the default when neither the suite nor the command line fixes K):
each scenario runs ``min_k`` repetitions per arm (default 3), then one more per arm at a time,
and stops as soon as its interval decides its verdict, or at ``max_k`` (default 10), where a
verdict still undecided is ``inconclusive``.

Looking after every round means looking at the data up to ``max_k - min_k + 1`` times, and each
look is a chance to call an effect that is not there. The rule spends its error rate over the
looks by a union bound (Bonferroni-type alpha spending: Jennison & Turnbull, *Group Sequential
Methods with Applications to Clinical Trials*, 2000, ch. 2 and 7; Lan & DeMets, Biometrika
70:659, 1983): half of the 5% goes to the last look, so that a scenario which runs to ``max_k``
is judged almost as a fixed run of ``max_k`` would be (97.5% intervals instead of 95%), and the
other half is shared equally by the earlier looks (99.64% intervals with the defaults). Whatever
the looks see, the chance that a scenario with no effect is ever called improved or regressed
(or ``steers``/``no-steer`` when the truth sits on the other side) is at most 5%.
"""

from __future__ import annotations

from dataclasses import dataclass

from skilltest.limits import MAX_REPETITIONS
from skilltest.stats import CONFIDENCE

DEFAULT_MIN_K = 3
"""Runs per arm before the first look."""
DEFAULT_MAX_K = 10
"""Runs per arm after which an undecided scenario is ``inconclusive``."""
ERROR_RATE = 1 - CONFIDENCE
"""The chance, over all looks, of calling an effect that is not there."""
LAST_LOOK_SHARE = 0.5
"""The share of the error rate spent on the last look."""

AUTO = "auto"
"""What ``-k`` takes for adaptive repetitions."""


@dataclass(frozen=True)
class Repetitions:
    """A scenario's repetition plan."""

    fixed: int | None = None
    """K runs per arm; ``None`` for adaptive repetitions."""
    min_k: int = DEFAULT_MIN_K
    """Adaptive: runs per arm before the first look."""
    max_k: int = DEFAULT_MAX_K
    """Adaptive: the most runs per arm."""

    def __post_init__(self) -> None:
        if self.fixed is not None and not 1 <= self.fixed <= MAX_REPETITIONS:
            raise ValueError(f"K must be between 1 and {MAX_REPETITIONS}, got {self.fixed}")
        if not 1 <= self.min_k <= self.max_k <= MAX_REPETITIONS:
            raise ValueError(
                f"need 1 <= min_k <= max_k <= {MAX_REPETITIONS}, got {self.min_k}..{self.max_k}"
            )

    @property
    def adaptive(self) -> bool:
        """Whether the scenario stops once its verdict is decided."""
        return self.fixed is None

    @property
    def first(self) -> int:
        """Runs per arm of the first round."""
        return self.fixed if self.fixed is not None else self.min_k

    @property
    def most(self) -> int:
        """The most runs per arm this plan can take."""
        return self.fixed if self.fixed is not None else self.max_k

    @property
    def looks(self) -> int:
        """How many times the verdict is looked at."""
        return 1 if self.fixed is not None else self.max_k - self.min_k + 1

    def confidence_at(self, k: int) -> float:
        """The confidence level of the intervals judged after ``k`` runs per arm."""
        if self.fixed is not None or self.looks == 1:
            return CONFIDENCE
        if k >= self.max_k:
            return 1 - ERROR_RATE * LAST_LOOK_SHARE
        return 1 - ERROR_RATE * (1 - LAST_LOOK_SHARE) / (self.looks - 1)

    def more_after(self, k: int) -> bool:
        """Whether another round may follow a look after ``k`` runs per arm."""
        return self.fixed is None and k < self.max_k

    def describe(self) -> str:
        """``K=3`` or ``K auto 3-10``."""
        if self.fixed is not None:
            return f"K={self.fixed}"
        return f"K auto {self.min_k}-{self.max_k}"

    def to_dict(self) -> dict[str, object]:
        """How the results file records the plan."""
        if self.fixed is not None:
            return {"mode": "fixed", "k": self.fixed}
        return {"mode": AUTO, "min_k": self.min_k, "max_k": self.max_k}


def plan_for(
    command_line: int | str | None,
    suite: int | None,
    *,
    min_k: int = DEFAULT_MIN_K,
    max_k: int = DEFAULT_MAX_K,
) -> Repetitions:
    """The plan for one scenario: ``-k`` wins, then the suite's ``repetitions``, then adaptive.

    Args:
        command_line: ``-k``: a number, ``"auto"``, or ``None`` when not given.
        suite: The scenario's (or its suite's) ``repetitions``, or ``None``.
        min_k: ``--min-k``.
        max_k: ``--max-k``.
    """
    if command_line == AUTO:
        return Repetitions(None, min_k, max_k)
    if isinstance(command_line, int):
        return Repetitions(command_line)
    if suite is not None:
        return Repetitions(suite)
    return Repetitions(None, min_k, max_k)
