"""Judging trigger runs: per query, per suite, and between two descriptions.

**How runs count.** A run ends ``fired``, ``not-fired`` (it ended on its own without the
skill), ``budget`` (stopped at its tool-call budget), ``timeout`` (its time limit cut it off
while a tool call the agent made was still running) or ``error`` (it could not run: the CLI
crashed, the API failed, or the time limit fell while the run waited on the model API or the
CLI itself). ``budget`` and ``timeout`` runs are *scored as not fired*: the agent had its chances
and did not use the skill. They are still shown as such in each row, the summary and the results
file, so that a too-small budget or a command that hangs is visible, never a silent "did not
fire". ``error`` runs are *unscored*: left out of every rate. A query with fewer than half of its
runs scored is an ``error``, as in the other layers.

**Per query.** The firing rate is fired / scored runs, with its exact Clopper-Pearson interval;
the query's ``verdict`` is read from that interval against the suite's ``threshold``
(:func:`interval_verdict`): ``pass`` when it lies wholly on the expected side (at or above the
threshold for a should-trigger query, below it for a should-not one), ``fail`` when it lies
wholly on the other side, and ``inconclusive`` while it straddles the threshold. Each bound is
one-sided at 2.5%, as in the other layers: a ``pass`` (or a ``fail``) is wrong at most 2.5% of
the time. Under an adaptive plan (:class:`~skilltest.repetitions.Repetitions`, ``-k auto``) the
query runs until its verdict is decided or the plan's ``max_k``, and each look reads its bounds
at the level the plan spends there, so the 2.5% holds over every look together. At threshold 0.5
even 3 of 3 is ``inconclusive`` (its lower bound is 0.29): a claim needs 6 runs at a fixed K,
and 8 under ``-k auto`` (3 to 20). A query *passes* when its verdict is ``pass``; a failing
should-trigger query is a ``miss``, a failing should-not query a ``false-trigger``
(:attr:`QueryResult.result`).

**Per suite.** Counts are per run (every scored run is one trial): TP = fired runs of
should-trigger queries, FN = their other scored runs, FP = fired runs of should-not queries, TN =
their other scored runs. Precision = TP / (TP + FP), recall = TP / (TP + FN), accuracy = (TP +
TN) / scored runs, each with the Wilson interval of that count (figures shown, not decided on).
Runs of one query are not independent trials of the description (the query is the same), so
these intervals are narrower than the truth when K is large and the queries few; more queries
help more than more runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skilltest.decision import delta_verdict
from skilltest.fields import field_dict
from skilltest.repetitions import Repetitions
from skilltest.revision import ERROR, MIN_DELTA, PREVIOUS, Against
from skilltest.stats import (
    CONFIDENCE,
    DIGITS,
    EMPTY,
    Interval,
    clopper_pearson,
    exact_difference,
    level,
    most_extreme_rate,
    wilson,
)
from skilltest.transcript import AnsweredBy
from skilltest.transcript.origin import ScriptRule
from skilltest.triggers.suite import TriggerQuery
from skilltest.triggers.watch import ENDINGS, Ended, SeenCall

SCORED: frozenset[Ended] = frozenset({"fired", "not-fired", "budget", "timeout"})
"""Endings that count in the rates (``error`` does not)."""


@dataclass(frozen=True)
class TriggerRun:
    """One run of one query, as it ended."""

    rep: int
    """Repetition number, from 0."""
    ended: Ended
    """How it ended."""
    reason: str | None = None
    """What stopped it (the firing call, the budget, the time limit) or why it failed."""
    first_calls: tuple[SeenCall, ...] = ()
    """Its first tool calls."""
    duration_s: float = 0.0
    """Wall time of the CLI process."""
    requests: int | None = None
    """Model requests of the run, when the backend counts them (the emulator)."""
    tokens: Mapping[str, int] | None = None
    """Token usage the CLI reported, when it did."""
    cost_usd: float | None = None
    """What the CLI estimated the run cost, when it reported it."""
    transcript: str | None = None
    """The raw stream-json output, as kept."""
    warnings: tuple[str, ...] = ()
    """Isolation problems seen in the run."""
    trace: str | None = None
    """The run's trace, written beside the kept transcript; ``None`` when none was kept."""
    models: tuple[str, ...] = ()
    """The models the API named in its answers (empty when none answered)."""
    answered_by: AnsweredBy | None = None
    """What answered its model requests (where they went, the emulator's mark); ``None`` when
    the run could not tell."""
    emulator_rules: tuple[ScriptRule, ...] = ()
    """Offline: the rules of the emulator's model script that answered the run's requests."""

    @property
    def scored(self) -> bool:
        """Whether the run counts in the rates."""
        return self.ended in SCORED

    def to_dict(self) -> dict[str, Any]:
        """The run as the results file lists it."""
        return {
            "rep": self.rep,
            "ended": self.ended,
            "reason": self.reason,
            "duration_s": round(self.duration_s, 3),
            "requests": self.requests,
            "tokens": dict(self.tokens) if self.tokens is not None else None,
            "cost_usd": self.cost_usd,
            "first_tool_calls": [
                {"name": c.name, "input": _shortened(dict(c.input))} for c in self.first_calls
            ],
            "transcript": self.transcript,
            "trace": self.trace,
            "warnings": list(self.warnings),
            "models": list(self.models),
            "answered_by": None if self.answered_by is None else self.answered_by.to_dict(),
            "emulator_rules": [rule.to_dict() for rule in self.emulator_rules],
        }


SHOWN_INPUT_CHARS = 500
"""Longest string argument of a tool call the results file keeps whole."""


def _shortened(value: Any) -> Any:
    """A tool call's arguments with long strings cut (a Write's content is not the point)."""
    if isinstance(value, str) and len(value) > SHOWN_INPUT_CHARS:
        return value[: SHOWN_INPUT_CHARS - 1] + "…"
    if isinstance(value, dict):
        return {key: _shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shortened(item) for item in value]
    return value


def firing_rate(fired: int, scored: int) -> Interval:
    """A query's firing rate with its exact 95% Clopper-Pearson interval (empty without scored
    runs)."""
    return clopper_pearson(fired, scored)


PASS, FAIL, INCONCLUSIVE, ERROR_VERDICT = "pass", "fail", "inconclusive", "error"
"""What :func:`interval_verdict` (and :attr:`QueryResult.verdict`) says of a query."""
DECIDED = frozenset({PASS, FAIL, ERROR_VERDICT})
"""Verdicts that end a query's adaptive repetitions."""


def rate_levels(
    threshold: float, k: int, repetitions: Repetitions | None = None
) -> tuple[float, float]:
    """The two-sided levels a query's bounds are read at after ``k`` runs: the lower bound's
    (the claim "at or above ``threshold``") and the upper bound's ("below it"); 95% each at a
    fixed K, the share an adaptive plan spends at that look otherwise."""
    if repetitions is None or not repetitions.adaptive:
        return CONFIDENCE, CONFIDENCE
    # "at or above threshold" is false when the rate is below it: n of n has a chance of at
    # most threshold ** n then; "below" mirrors it.
    above = repetitions.confidence_at(k, lambda n: most_extreme_rate(threshold, n))
    below = repetitions.confidence_at(k, lambda n: most_extreme_rate(1 - threshold, n))
    return above, below


def decisive_rate(
    fired: int,
    scored: int,
    threshold: float,
    repetitions: Repetitions | None = None,
    k: int | None = None,
) -> Interval:
    """The firing rate with the exact interval its verdict reads: the Clopper-Pearson lower
    bound at the level of "at or above ``threshold``", the upper bound at the level of "below
    it" (see :func:`rate_levels`); empty without scored runs.

    Args:
        fired: Runs that fired.
        scored: Runs that count in the rate.
        threshold: The share of runs that decides the query.
        repetitions: The plan the runs came from (``None``: a fixed K, read at 95%).
        k: Runs taken at the look (scored or not; default ``scored``).
    """
    if scored <= 0:
        return EMPTY
    above, below = rate_levels(threshold, k if k is not None else scored, repetitions)
    low = clopper_pearson(fired, scored, above).low
    high = clopper_pearson(fired, scored, below).high
    return Interval(fired / scored, low, high)


def interval_verdict(
    fired: int,
    scored: int,
    threshold: float,
    should_trigger: bool,
    repetitions: Repetitions | None = None,
    k: int | None = None,
) -> str:
    """``pass``, ``fail`` or ``inconclusive`` from the exact interval of the firing rate.

    Args:
        fired: Runs that fired.
        scored: Runs that count in the rate (at least one).
        threshold: The share of runs that decides the query.
        should_trigger: Whether the skill should fire for the query.
        repetitions: The plan the runs came from: an adaptive plan reads each bound at the
            level it spends at the look after ``k`` runs; ``None`` or a fixed K reads 95%
            intervals.
        k: Runs taken at the look, unscored ones included (default ``scored``).
    """
    rate = decisive_rate(fired, scored, threshold, repetitions, k)
    assert rate.low is not None and rate.high is not None
    at_or_above = round(rate.low, DIGITS) >= threshold
    wholly_below = round(rate.high, DIGITS) < threshold
    if should_trigger:
        return PASS if at_or_above else FAIL if wholly_below else INCONCLUSIVE
    return PASS if wholly_below else FAIL if at_or_above else INCONCLUSIVE


def runs_needed(fired: int, scored: int, threshold: float, should_trigger: bool) -> int | None:
    """About how many runs would likely decide an inconclusive query at 95%, if its firing
    rate stayed as it is; ``None`` when not within the projection's limit."""
    from skilltest.scenarios.verdict import runs_to_decide

    def decides(n: int) -> bool:
        projected = round(n * fired / scored) if scored else 0
        return interval_verdict(projected, n, threshold, should_trigger) != INCONCLUSIVE

    return runs_to_decide(decides, scored)


@dataclass(frozen=True)
class Revision:
    """A query against one REF of several ``--against``: the skill's firing there and how the
    current skill compares."""

    arm: str
    """The variant that ran the skill at REF (``previous``, ``previous-2``...)."""
    against: Against
    """The firing rate minus the rate at REF, and its verdict."""
    previous: QueryResult
    """The query's runs under the skill at REF."""

    def to_dict(self) -> dict[str, Any]:
        """An entry of the query's ``revisions`` in a results file."""
        before = self.previous.rate
        return {
            "ref": self.against.ref,
            "arm": self.arm,
            "previous": {
                "fired": self.previous.fired,
                "scored": self.previous.scored,
                "total": len(self.previous.runs),
                "rate": before.value,
                "ci_low": before.low,
                "ci_high": before.high,
            },
            "against": self.against.to_dict(),
        }


@dataclass(frozen=True)
class QueryResult:
    """One query's runs, judged."""

    query: TriggerQuery
    """The query."""
    runs: tuple[TriggerRun, ...]
    """Its runs in repetition order."""
    threshold: float
    """The share of scored runs that decides it."""
    against: Against | None = None
    """``--against REF``: the firing rate minus the rate of the skill at REF, and its verdict
    (see :func:`against_previous`); ``None`` without it. With several REFs, the first one's."""
    revisions: tuple[Revision, ...] = ()
    """``--against`` given more than once: the comparison with each REF, in the order given
    (the first is also ``against``); empty with one REF or none."""
    repetitions: Repetitions | None = None
    """The plan the runs came from (``None``: a fixed K, read at 95%)."""

    @property
    def fired(self) -> int:
        """Runs that fired."""
        return sum(run.ended == "fired" for run in self.runs)

    @property
    def scored(self) -> int:
        """Runs that count in the rate."""
        return sum(run.scored for run in self.runs)

    @property
    def k(self) -> int:
        """Runs taken, scored or not."""
        return len(self.runs)

    @property
    def endings(self) -> Counter[str]:
        """How many runs ended each way."""
        return Counter(run.ended for run in self.runs)

    @property
    def levels(self) -> tuple[float, float]:
        """The levels of the rate's lower and upper bounds (:func:`rate_levels`)."""
        return rate_levels(self.threshold, self.k, self.repetitions)

    @property
    def confidence(self) -> float:
        """The two-sided level the rate's interval holds at least (95% at a fixed K)."""
        return min(self.levels)

    @property
    def rate(self) -> Interval:
        """The firing rate with the exact interval the verdict reads (empty without scored
        runs)."""
        return decisive_rate(self.fired, self.scored, self.threshold, self.repetitions, self.k)

    @property
    def error(self) -> bool:
        """Fewer than half of the runs scored: the query cannot be judged."""
        return self.scored * 2 < len(self.runs) or self.scored == 0

    @property
    def verdict(self) -> str:
        """``pass``, ``fail`` or ``inconclusive`` from the exact interval of the firing rate
        (see the module docstring); ``error`` when the query cannot be judged."""
        if self.error:
            return ERROR_VERDICT
        return interval_verdict(
            self.fired,
            self.scored,
            self.threshold,
            self.query.should_trigger,
            self.repetitions,
            self.k,
        )

    @property
    def passed(self) -> bool:
        """Whether the query's verdict is ``pass``."""
        return self.verdict == PASS

    @property
    def inconclusive(self) -> bool:
        """Whether more runs are needed before the query can pass or fail."""
        return self.verdict == INCONCLUSIVE

    @property
    def result(self) -> str:
        """``pass``, ``miss`` (should fire, credibly does not often enough), ``false-trigger``
        (should not, credibly does too often), ``inconclusive`` or ``error``."""
        verdict = self.verdict
        if verdict != FAIL:
            return verdict
        return "miss" if self.query.should_trigger else "false-trigger"

    @property
    def runs_to_decide(self) -> int | None:
        """For an inconclusive query: about how many runs would likely decide it at 95%."""
        if not self.inconclusive:
            return None
        return runs_needed(self.fired, self.scored, self.threshold, self.query.should_trigger)

    @property
    def reason(self) -> str | None:
        """Why the query fails, errors or is inconclusive; ``None`` when it passes."""
        verdict = self.verdict
        if verdict == PASS:
            return None
        if verdict == ERROR_VERDICT:
            first = next((run.reason for run in self.runs if run.ended == "error"), None)
            return f"only {self.scored} of {self.k} runs scored, fewer than half" + (
                f" ({first})" if first else ""
            )
        rate = self.rate
        assert rate.low is not None and rate.high is not None
        shown = (
            f"fired in {self.fired}/{self.scored} scored runs: the {level(self.confidence)} "
            f"exact interval of its rate, [{100 * rate.low:.0f}%–{100 * rate.high:.0f}%],"
        )
        threshold = f"the threshold {100 * self.threshold:g}%"
        if verdict == INCONCLUSIVE:
            needed = self.runs_to_decide
            return f"{shown} straddles {threshold}; " + (
                f"about {needed} runs would likely decide it"
                if needed is not None
                else "more runs would not decide it if the rate stays as it is"
            )
        side = "below" if self.query.should_trigger else "at or above"
        return f"{shown} lies {side} {threshold}"

    def to_dict(self) -> dict[str, Any]:
        """The query as the results file lists it."""
        rate = self.rate
        return {
            "id": self.query.id,
            "query": self.query.query,
            "should_trigger": self.query.should_trigger,
            "fired": self.fired,
            "scored": self.scored,
            "total": len(self.runs),
            "k": self.k,
            "repetitions": None if self.repetitions is None else self.repetitions.to_dict(),
            "rate": rate.value,
            "ci_low": rate.low,
            "ci_high": rate.high,
            "confidence": self.confidence,
            "verdict": self.verdict,
            "passed": self.passed,
            "result": self.result,
            "reason": self.reason,
            "runs_to_decide": self.runs_to_decide,
            "ended": {ending: self.endings.get(ending, 0) for ending in ENDINGS},
            "runs": [run.to_dict() for run in self.runs],
            **({} if self.against is None else {"against": self.against.to_dict()}),
            **(
                {"revisions": [revision.to_dict() for revision in self.revisions]}
                if self.revisions
                else {}
            ),
        }


@dataclass(frozen=True)
class Confusion:
    """Per-run counts of a suite (see the module docstring)."""

    tp: int = 0
    """Fired runs of should-trigger queries."""
    fn: int = 0
    """Scored runs of should-trigger queries that did not fire (budget and timeout included)."""
    fp: int = 0
    """Fired runs of should-not queries."""
    tn: int = 0
    """Scored runs of should-not queries that did not fire."""

    @classmethod
    def of(cls, queries: Sequence[QueryResult]) -> Confusion:
        """The counts over every scored run of ``queries``."""
        return cls.tally((q.query.should_trigger, q.fired, q.scored) for q in queries)

    @classmethod
    def tally(cls, queries: Iterable[tuple[bool, int, int]]) -> Confusion:
        """The counts over queries given as ``(should_trigger, fired, scored)`` (as a results
        file lists them: what ``skilltest merge`` recomputes a suite's metrics from)."""
        tp = fn = fp = tn = 0
        for should_trigger, fired, scored in queries:
            missed = scored - fired
            if should_trigger:
                tp, fn = tp + fired, fn + missed
            else:
                fp, tn = fp + fired, tn + missed
        return cls(tp=tp, fn=fn, fp=fp, tn=tn)

    @property
    def scored(self) -> int:
        """Every scored run."""
        return self.tp + self.fn + self.fp + self.tn

    @property
    def precision(self) -> Interval:
        """TP / (TP + FP): of the runs that fired, the share that should have."""
        return wilson(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> Interval:
        """TP / (TP + FN): of the should-trigger runs, the share that fired."""
        return wilson(self.tp, self.tp + self.fn)

    @property
    def accuracy(self) -> Interval:
        """(TP + TN) / scored runs."""
        return wilson(self.tp + self.tn, self.tp + self.tn + self.fp + self.fn)

    def to_dict(self) -> dict[str, Any]:
        """The counts and the three metrics as the results file lists them."""
        return {
            **field_dict(self),
            "precision": interval_dict(self.precision),
            "recall": interval_dict(self.recall),
            "accuracy": interval_dict(self.accuracy),
        }


def interval_dict(interval: Interval) -> dict[str, float | None]:
    """``{"value", "ci_low", "ci_high"}``."""
    return {"value": interval.value, "ci_low": interval.low, "ci_high": interval.high}


@dataclass(frozen=True)
class SuiteResult:
    """One suite under one description, judged."""

    suite: str
    """The suite file."""
    skill: str
    """The skill under test."""
    variant: str
    """``current`` (SKILL.md's description, or the suite's ``description:``) or ``other``
    (``--description``)."""
    description: str | None
    """The description the runs saw."""
    queries: tuple[QueryResult, ...]
    """In file order."""
    threshold: float = 0.5
    """The suite's threshold."""
    max_tool_calls: int = 3
    """The suite's tool-call budget."""
    distractors: tuple[str, ...] = ()
    """Other skills installed beside it."""

    @property
    def confusion(self) -> Confusion:
        """Per-run counts over every query."""
        return Confusion.of(self.queries)

    @property
    def passed(self) -> bool:
        """Whether every query passed."""
        return all(query.passed for query in self.queries)

    def to_dict(self) -> dict[str, Any]:
        """The suite as the results file lists it."""
        return {
            "suite": self.suite,
            "skill": self.skill,
            "variant": self.variant,
            "description": self.description,
            "threshold": self.threshold,
            "max_tool_calls": self.max_tool_calls,
            "distractors": list(self.distractors),
            "passed": self.passed,
            "metrics": self.confusion.to_dict(),
            "queries": [query.to_dict() for query in self.queries],
        }


@dataclass(frozen=True)
class Difference:
    """One rate under the other description minus under the current one."""

    name: str
    """A query id, or ``precision``, ``recall``, ``accuracy``."""
    current: Interval
    """The rate under the current description."""
    other: Interval
    """The rate under the other description."""
    counts: tuple[int, int, int, int] = (0, 0, 0, 0)
    """(successes, trials) under the other description, then under the current one."""
    difference: Interval = field(init=False)
    """Other minus current, with its exact unconditional interval."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "difference", exact_difference(*self.counts))

    def to_dict(self) -> dict[str, Any]:
        """As the results file lists it."""
        return {
            "name": self.name,
            "current": interval_dict(self.current),
            "other": interval_dict(self.other),
            "difference": interval_dict(self.difference),
        }


def compare(current: SuiteResult, other: SuiteResult) -> tuple[Difference, ...]:
    """Per-query firing-rate differences, then precision, recall and accuracy."""
    return compare_counts(
        [(query.query.id, query.fired, query.scored) for query in current.queries],
        {query.query.id: (query.fired, query.scored) for query in other.queries},
        current.confusion,
        other.confusion,
    )


def compare_counts(
    current: Sequence[tuple[str, int, int]],
    other: Mapping[str, tuple[int, int]],
    a: Confusion,
    b: Confusion,
) -> tuple[Difference, ...]:
    """:func:`compare` from each query's ``(id, fired, scored)`` under the current description
    (in its order), the same by id under the other, and each description's counts (what
    ``skilltest merge`` recomputes a comparison from)."""
    rows = [
        Difference(
            name,
            firing_rate(fired, scored),
            firing_rate(*other[name]),
            (*other[name], fired, scored),
        )
        for name, fired, scored in current
        if name in other
    ]
    rows += [
        Difference("precision", a.precision, b.precision, (b.tp, b.tp + b.fp, a.tp, a.tp + a.fp)),
        Difference("recall", a.recall, b.recall, (b.tp, b.tp + b.fn, a.tp, a.tp + a.fn)),
        Difference(
            "accuracy",
            a.accuracy,
            b.accuracy,
            (b.tp + b.tn, b.scored, a.tp + a.tn, a.scored),
        ),
    ]
    return tuple(rows)


def against_query(ref: str, current: QueryResult, previous: QueryResult) -> Against:
    """The firing rate minus the rate at REF, read per the query's kind.

    The delta is always current minus previous, with its exact unconditional interval. A
    should-trigger query improved when it fires more; a should-not query improved when it fires
    less, so its verdict reads the delta with the sign turned (previous minus current) against
    the same band as the other layers. Under ``-k auto`` each bound is read at the level the
    look spends on its claim, as the scenario layer reads its revision comparisons.
    """
    from skilltest.scenarios.verdict import pass_interval

    if current.scored == 0 or previous.scored == 0:
        return Against(ref, EMPTY, ERROR)
    now, before = (current.fired, current.scored), (previous.fired, previous.scored)
    k = max(current.k, previous.k)
    plan = current.repetitions or Repetitions(max(1, k))
    if current.query.should_trigger:
        delta = better = pass_interval(*now, *before, plan, k, MIN_DELTA)
    else:
        better = pass_interval(*before, *now, plan, k, MIN_DELTA)
        assert better.value is not None and better.low is not None and better.high is not None
        # 0.0 - x: a delta of zero reads +0%, not -0%.
        delta = Interval(0.0 - better.value, 0.0 - better.high, 0.0 - better.low)
    return Against(ref, delta, str(delta_verdict(better, MIN_DELTA)))


def against_previous(ref: str, current: SuiteResult, previous: SuiteResult) -> SuiteResult:
    """The current suite with each query's ``against`` (queries REF has not finished keep none)."""
    return against_revisions(current, ((PREVIOUS, ref, previous),))


def against_revisions(
    current: SuiteResult, revisions: Sequence[tuple[str, str, SuiteResult]]
) -> SuiteResult:
    """The current suite with each query compared with the skill at each REF of ``--against``
    (``revisions``: each REF's arm, the REF and its suite result, in the order given): the
    first REF's comparison as ``against``, and with several REFs every one in ``revisions``.
    A REF that has not finished a query gives it no comparison."""
    by_arm = [
        (arm, ref, {query.query.id: query for query in previous.queries})
        for arm, ref, previous in revisions
    ]

    def compared(query: QueryResult) -> QueryResult:
        each = tuple(
            Revision(arm, against_query(ref, query, by_id[query.query.id]), by_id[query.query.id])
            for arm, ref, by_id in by_arm
            if query.query.id in by_id
        )
        first = each[0].against if each and each[0].arm == by_arm[0][0] else None
        return replace(query, against=first, revisions=each if len(by_arm) > 1 else ())

    return replace(current, queries=tuple(compared(query) for query in current.queries))
