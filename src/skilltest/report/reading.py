"""How to read a report: what each layer's verdicts mean, and whether each is good news. Pure.

The meanings are the README's verdict tables in one line each; the HTML report shows them under
"How to read this" and colours each verdict by its :data:`TONES` entry, so that a reader sees
at a glance which scenarios need a look.
"""

from __future__ import annotations

GOOD = "good"
"""The outcome wanted."""
WARN = "warn"
"""Not a failure of the skill, but not an answer either: more runs, or a test to fix."""
BAD = "bad"
"""The skill does not do what the test asks, or the run could not tell."""
PLAIN = "plain"
"""Neither: skipped, or a comparison that moved nothing."""

MEANINGS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "pressure": (
        (
            "steers",
            GOOD,
            "the lift's interval lies above 0 (the skill credibly changes the answer) and the "
            "with-skill pass rate's interval lies at or above the threshold less 0.1",
        ),
        (
            "not-red",
            WARN,
            "the baseline's RED rate interval lies below 0.5: without the skill the model "
            "credibly passes most of the time, so the test measures nothing",
        ),
        (
            "no-steer",
            BAD,
            "the with-skill pass rate's interval lies below the threshold: with the skill the "
            "model credibly misses the bar",
        ),
        (
            "inconclusive",
            WARN,
            "nothing is decided yet; the detail says what straddles and about how many runs "
            "per arm would likely decide it",
        ),
        ("error", BAD, "an arm has fewer than half of its runs judged"),
        ("skipped", PLAIN, "the suite says skip"),
    ),
    "scenarios": (
        (
            "improved",
            GOOD,
            "the delta's whole interval lies above +0.05 (the pass rates' delta, or the mean "
            "scores' with decide_by: mean)",
        ),
        (
            "neutral",
            PLAIN,
            "the delta's whole interval lies inside the band [min_delta, +0.05]: the skill "
            "neither helps nor hurts measurably",
        ),
        ("regressed", BAD, "the delta's whole interval lies below min_delta (-0.05 by default)"),
        (
            "inconclusive",
            WARN,
            "the delta's interval straddles an edge of the band: more runs would tell (the "
            "reason says about how many)",
        ),
        ("error", BAD, "an arm has fewer than half of its runs scored"),
        (
            "skill-only",
            PLAIN,
            "only the with-skill arm ran: it passes when its mean score's interval lies at or "
            "above min_score",
        ),
        ("skipped", PLAIN, "the suite skips it"),
    ),
    "triggers": (
        (
            "pass",
            GOOD,
            "the firing rate's exact interval lies at or above the threshold (a should-trigger "
            "query) or wholly below it (a should-not query)",
        ),
        (
            "miss",
            BAD,
            "a should-trigger query's firing rate interval lies wholly below the threshold: it "
            "credibly does not fire often enough",
        ),
        (
            "false-trigger",
            BAD,
            "a should-not query's firing rate interval lies at or above the threshold: it "
            "credibly fires too often",
        ),
        (
            "inconclusive",
            WARN,
            "the firing rate's interval straddles the threshold: more runs would tell (the "
            "reason says about how many)",
        ),
        ("error", BAD, "fewer than half of the query's runs were scored"),
    ),
}
"""Per layer, each verdict with its tone and meaning, in the order the README lists them."""

TONES: dict[str, dict[str, str]] = {
    layer: {verdict: tone for verdict, tone, _ in meanings} for layer, meanings in MEANINGS.items()
}


BY_OUTCOME = frozenset({"skill-only"})
"""Verdicts that pass or fail by a bar rather than by their name: their tone is the outcome."""


def tone(layer: str, verdict: str, *, failed: bool | None) -> str:
    """The tone of a verdict in a layer, for a scenario that ``failed`` (``None``: not one
    scenario, as in a count). A verdict that passes or fails by a bar (``skill-only``), or one
    this code does not know, takes its tone from whether the scenario failed."""
    known = TONES.get(layer, {}).get(verdict)
    if known is not None and (verdict not in BY_OUTCOME or failed is None):
        return known
    if failed is None:
        return PLAIN
    return BAD if failed else GOOD


INTERVALS = (
    "Each scenario runs K times with the skill and K times without it (the baseline). A figure "
    "in brackets is its 95% interval (with -k auto, at the level of the look that decided): "
    "where the true rate or mean likely lies, given only K runs. Pass rates get exact "
    "intervals, mean scores confidence sequences; a verdict is given only when the interval "
    "decides it, so a small K gives wide intervals and inconclusive verdicts (3 passes out of "
    "3 are only known to be above 29%; 2 runs per arm never decide a comparison)."
)
LIFT = (
    "Lift (delta) is the with-skill figure minus the without-skill one: pass rates in the "
    "pressure layer; in the scenario layer pass rates too (a run passes when it reaches the "
    "scenario's min_score with no veto), or mean rubric scores for a scenario that says "
    "decide_by: mean. A layer's card pools every run of the layer with an approximate "
    "(Newcombe) interval, shown and never decided on; runs of one scenario are alike, so the "
    "pooled interval is narrower than the truth when there are few scenarios."
)
RED = (
    "RED baselines (pressure): a pressure test is worth running only when the model gets it "
    "wrong without the skill. A baseline run that fails is RED, the outcome wanted, and is "
    "shown as RED (as wanted); a baseline that already passes makes the verdict not-red. The "
    "table's without-skill column is the baseline's pass rate (1 minus its RED rate)."
)
CONSISTENCY = (
    "pass^k is the chance that k runs in a row all pass (pass@k: that at least one does): a "
    "skill whose rate clears the bar while pass^k is low is not one a user can rely on every "
    "time. Cost per passing run is what all of an arm's runs cost, failing ones included, "
    "over its passing runs."
)
FIRING = (
    "Triggers: each query runs K times with the skill installed beside the suite's other skills, "
    "and no run without it: there is no baseline, lift or pass^k. A run fires when the agent "
    "loads the skill; one that ends without loading it (budget and timeout included) does not, "
    "and one that errors is left out. The firing rate is the share of scored runs that fired, "
    "in brackets its exact 95% interval (with -k auto, at the level of the look that decided). "
    "A query expected to fire passes when that interval lies at or above the suite's "
    "threshold; one expected not to fire, when it lies wholly below; an interval across the "
    "threshold is inconclusive. The layer's card pools every run into precision and recall."
)
