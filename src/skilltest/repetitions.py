"""How many runs per arm: a fixed K, or adaptive repetitions that stop once the verdict is known.

**Fixed K** (a suite's ``repetitions: N`` or ``-k N``): every arm runs K times and the verdict
reads 95% intervals once: each claim (improved, regressed, steers, no-steer, ...) is wrong at
most 2.5% of the time.

**Adaptive** (``-k auto``, and the default when neither the suite nor the command line fixes K):
each scenario runs ``min_k`` repetitions per arm (default 3), then one more per arm at a time,
and stops as soon as its verdict is decided, or at ``max_k`` (default 10; 20 for the pressure
layer, whose runs are one turn each, and for trigger queries, whose runs end at the call that
decides them), where a verdict still undecided is ``inconclusive``. A trigger query runs the same
way, its descriptions (or revisions) as its arms.

Looking after every round is a chance, at every look, to make a claim that is wrong, and the
error rate of each claim holds over all the looks together:

* **Mean scores** are read from confidence sequences by betting
  (:mod:`skilltest.stats.betting`), which are valid at every number of runs at once: every look
  reads its 95% sequence and nothing is spent per look.
* **Pass rates** are read from exact intervals (:mod:`skilltest.stats.exact`), valid at one
  number of runs. Each claim's one-sided 2.5% is spent over the looks by a union bound
  (Bonferroni-type alpha spending: Jennison & Turnbull, *Group Sequential Methods with
  Applications to Clinical Trials*, 2000, ch. 7; Lan & DeMets, Biometrika 70:659, 1983): every
  look has an equal share, and a look at which even the most extreme outcome could not make the
  claim within its share (3/3 against 0/3 has a chance of up to 2.1% of a false ``improved``,
  more than a share of 2.5%/8) spends nothing and passes its share on to the next. Which looks
  can spend depends only on the plan, never on the runs, so the shares spent add up to at most
  2.5% whatever the looks see and wherever the scenario stops. With the defaults, a clean
  separation is ``improved`` after 4 runs per arm.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from skilltest.limits import MAX_REPETITIONS
from skilltest.stats import CONFIDENCE

DEFAULT_MIN_K = 3
"""Runs per arm before the first look."""
DEFAULT_MAX_K = 10
"""Runs per arm after which an undecided scenario is ``inconclusive``."""
PRESSURE_MAX_K = 20
"""The pressure layer's ``max_k``: its runs are one turn each, and a with-skill pass rate
credibly near a threshold of 0.8 takes a dozen runs whatever the method."""
TRIGGERS_MAX_K = 20
"""The trigger layer's ``max_k``: a trigger run ends at the call that decides it, and a query
that fires in 9 runs of 10 shows a rate credibly at or above a threshold of 0.5 within 20 runs
89% of the time (within 10, 48%); one that always (or never) fires is decided at 8."""
ERROR_RATE = 1 - CONFIDENCE
"""The chance, over all looks, that some claim is wrong: each direction gets half of it."""
CLAIM_ERROR = ERROR_RATE / 2
"""The chance, over all looks, that one claim (``improved``, ``steers``, ...) is wrong."""

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

    def claim_error_at(self, k: int, extreme: Callable[[int], float] | None = None) -> float:
        """The one-sided error rate a pass-rate claim may spend at the look after ``k`` runs.

        Args:
            k: Runs per arm at the look.
            extreme: The chance, at ``n`` runs per arm, of the outcome most in favour of the
                claim when the claim is false (the smallest p-value any runs can give): a
                look where it exceeds the share passes the share on (see the module
                docstring). ``None``: every look spends its share.
        """
        if self.fixed is not None or self.looks == 1:
            return CLAIM_ERROR
        share = CLAIM_ERROR / self.looks
        carried = 0.0
        for look in range(self.min_k, min(k, self.max_k)):
            budget = share + carried
            carried = budget if extreme is not None and extreme(look) > budget else 0.0
        return share + carried

    def confidence_at(self, k: int, extreme: Callable[[int], float] | None = None) -> float:
        """The two-sided level of a pass-rate interval read at the look after ``k`` runs per
        arm: one minus twice :meth:`claim_error_at`."""
        return 1 - 2 * self.claim_error_at(k, extreme)

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

    @classmethod
    def from_dict(cls, data: object) -> Repetitions | None:
        """The plan :meth:`to_dict` recorded; ``None`` for anything else."""
        if not isinstance(data, dict):
            return None
        try:
            if data.get("mode") == "fixed" and isinstance(data.get("k"), int):
                return cls(data["k"])
            low, high = data.get("min_k"), data.get("max_k")
            if data.get("mode") == AUTO and isinstance(low, int) and isinstance(high, int):
                return cls(None, low, high)
        except ValueError:
            return None
        return None


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


def run_number(layer: object, rep: object) -> object:
    """The number a run is shown by, from 1 in every layer: a pressure run's stored ``rep``
    counts from 1, a scenario's and a trigger query's from 0 (results files, output folders and
    cassettes keep those as they are; only what a person reads is numbered alike)."""
    if layer in ("scenarios", "triggers") and isinstance(rep, int) and not isinstance(rep, bool):
        return rep + 1
    return rep
