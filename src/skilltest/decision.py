"""How an interval becomes a verdict: the bands every comparison is read against.

A delta (with-skill minus without-skill, or the current revision minus a previous one) is read
from its interval against the band [``min_delta``, +0.05]:

``improved``      the whole interval lies above +0.05
``regressed``     the whole interval lies below ``min_delta`` (-0.05 by default)
``neutral``       the whole interval lies inside the band
``inconclusive``  the interval straddles an edge of the band: more runs would tell

The default band is symmetric, so the two directions are mirror images: runs that give
``improved`` give ``regressed`` with the arms swapped, at every K. ``improved`` claims the true
delta is above +0.05 and ``regressed`` that it is below -0.05; each is wrong at most 2.5% of the
time. A suite may lower ``min_delta`` to tolerate a small drop; a regression then has to be
larger, and takes more runs to show, than an improvement.

The scenario layer's verdicts and revision A/B (``--against``) both read deltas this way. A
pressure scenario reads a rate against its threshold through an indifference zone instead
(:data:`STEER_MARGIN`).
"""

from __future__ import annotations

from enum import StrEnum

from skilltest.stats import DIGITS, Interval

IMPROVED_ABOVE = 0.05
"""The delta the whole interval must exceed for ``improved``."""
MIN_DELTA = -IMPROVED_ABOVE
"""The default lower edge of the neutral band: a delta credibly below it is a regression."""
STEER_MARGIN = 0.1
"""The indifference zone below a pressure threshold: ``steers`` needs the with-skill pass rate
credibly at or above ``threshold - STEER_MARGIN``, ``no-steer`` credibly below ``threshold``.
A true rate 0.1 or more below the threshold is called ``steers`` at most 2.5% of the time, a
rate at or above it ``no-steer`` at most 2.5%; in between either may come out."""


class Verdict(StrEnum):
    """What the comparison says about a scenario."""

    IMPROVED = "improved"
    NEUTRAL = "neutral"
    REGRESSED = "regressed"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"
    SKILL_ONLY = "skill-only"
    SKIPPED = "skipped"


def delta_verdict(delta: Interval, min_delta: float) -> Verdict:
    """``improved``, ``regressed``, ``neutral`` or ``inconclusive`` from the delta's interval."""
    assert delta.low is not None and delta.high is not None
    low, high = round(delta.low, DIGITS), round(delta.high, DIGITS)
    if low > IMPROVED_ABOVE:
        return Verdict.IMPROVED
    if high < min_delta:
        return Verdict.REGRESSED
    if low >= min_delta and high <= IMPROVED_ABOVE:
        return Verdict.NEUTRAL
    return Verdict.INCONCLUSIVE


def mean_verdict(mean: Interval, min_score: float) -> bool | None:
    """Skill-only: ``True`` when the mean's interval lies at or above ``min_score``, ``False``
    when it lies below, ``None`` while it straddles it."""
    assert mean.low is not None and mean.high is not None
    if round(mean.low, DIGITS) >= min_score:
        return True
    if round(mean.high, DIGITS) < min_score:
        return False
    return None
