"""Judging trigger runs: per query, per suite, and between two descriptions.

**How runs count.** A run ends ``fired``, ``not-fired`` (it ended on its own without the
skill), ``budget`` (stopped at its tool-call budget), ``timeout`` or ``error`` (it could not run:
the CLI crashed, the API failed). ``budget`` and ``timeout`` runs are *scored as not fired*: the
agent had its chances and did not use the skill. They are still shown as such in each row, the
summary and the results file, so that a too-small budget is visible, never a silent "did not
fire". ``error`` runs are *unscored*: left out of every rate. A query with fewer than half of its
runs scored is an ``error``, as in the other layers.

**Per query.** The firing rate is fired / scored runs, with its Wilson interval. A
should-trigger query *passes* when the rate is at least ``threshold``; a should-not query passes
when the rate is below it. The observed rate decides, not the interval: K is small and the
interval is shown beside the rate for the reader to weigh.

**Interval verdict.** Beside it, each query has a ``verdict`` read from the exact
Clopper-Pearson interval of its firing rate (:func:`interval_verdict`): ``pass`` when the
interval lies wholly on the expected side of ``threshold`` (at or above it for a should-trigger
query, below it for a should-not one), ``fail`` when it lies wholly on the other side, and
``inconclusive`` while it straddles the threshold. Each bound is one-sided at 2.5%, as in the
other layers: a ``pass`` (or a ``fail``) is wrong at most 2.5% of the time. Under an adaptive
plan (:class:`~skilltest.repetitions.Repetitions`) each look reads its bounds at the level the
plan spends there, so the 2.5% holds over every look together. At K=3 and threshold 0.5 even
3 of 3 is ``inconclusive`` (its lower bound is 0.29): a claim needs about 6 runs.

**Per suite.** Counts are per run (every scored run is one trial): TP = fired runs of
should-trigger queries, FN = their other scored runs, FP = fired runs of should-not queries, TN =
their other scored runs. Precision = TP / (TP + FP), recall = TP / (TP + FN), accuracy = (TP +
TN) / scored runs, each with the Wilson interval of that count. Runs of one query are not
independent trials of the description (the query is the same), so these intervals are narrower
than the truth when K is large and the queries few; more queries help more than more runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skilltest.decision import delta_verdict
from skilltest.fields import field_dict
from skilltest.repetitions import Repetitions
from skilltest.revision import ERROR, MIN_DELTA, Against
from skilltest.stats import (
    CONFIDENCE,
    DIGITS,
    EMPTY,
    Interval,
    clopper_pearson,
    exact_difference,
    most_extreme_rate,
    wilson,
)
from skilltest.transcript import AnsweredBy
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
    """A query's firing rate with its Wilson interval (empty without scored runs)."""
    return wilson(fired, scored)


PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
"""What :func:`interval_verdict` says of a query."""


def interval_verdict(
    fired: int,
    scored: int,
    threshold: float,
    should_trigger: bool,
    repetitions: Repetitions | None = None,
) -> str:
    """``pass``, ``fail`` or ``inconclusive`` from the exact interval of the firing rate.

    Args:
        fired: Runs that fired.
        scored: Runs that count in the rate (at least one).
        threshold: The share of runs that decides the query.
        should_trigger: Whether the skill should fire for the query.
        repetitions: The plan the runs came from: an adaptive plan reads each bound at the
            level it spends after ``scored`` runs; ``None`` or a fixed K reads 95% intervals.
    """
    above, below = CONFIDENCE, CONFIDENCE
    if repetitions is not None and repetitions.adaptive:
        # "at or above threshold" is false when the rate is below it: n of n has a chance of
        # at most threshold ** n then; "below" mirrors it.
        above = repetitions.confidence_at(scored, lambda n: most_extreme_rate(threshold, n))
        below = repetitions.confidence_at(scored, lambda n: most_extreme_rate(1 - threshold, n))
    low = clopper_pearson(fired, scored, above).low
    high = clopper_pearson(fired, scored, below).high
    assert low is not None and high is not None
    at_or_above = round(low, DIGITS) >= threshold
    wholly_below = round(high, DIGITS) < threshold
    if should_trigger:
        return PASS if at_or_above else FAIL if wholly_below else INCONCLUSIVE
    return PASS if wholly_below else FAIL if at_or_above else INCONCLUSIVE


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
    (see :func:`against_previous`); ``None`` without it."""
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
    def endings(self) -> Counter[str]:
        """How many runs ended each way."""
        return Counter(run.ended for run in self.runs)

    @property
    def rate(self) -> Interval:
        """The firing rate with its Wilson interval (empty without scored runs)."""
        return firing_rate(self.fired, self.scored)

    @property
    def error(self) -> bool:
        """Fewer than half of the runs scored: the query cannot be judged."""
        return self.scored * 2 < len(self.runs) or self.scored == 0

    @property
    def passed(self) -> bool:
        """Whether the query behaved as expected (see the module docstring)."""
        if self.error:
            return False
        rate = round(self.fired / self.scored, DIGITS)
        return rate >= self.threshold if self.query.should_trigger else rate < self.threshold

    @property
    def result(self) -> str:
        """``pass``, ``miss`` (should fire, did not), ``false-trigger`` or ``error``."""
        if self.error:
            return "error"
        if self.passed:
            return "pass"
        return "miss" if self.query.should_trigger else "false-trigger"

    @property
    def verdict(self) -> str:
        """``pass``, ``fail`` or ``inconclusive`` from the exact interval of the firing rate
        (see the module docstring); ``error`` when the query cannot be judged."""
        if self.error:
            return "error"
        return interval_verdict(
            self.fired, self.scored, self.threshold, self.query.should_trigger, self.repetitions
        )

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
            "rate": rate.value,
            "ci_low": rate.low,
            "ci_high": rate.high,
            "passed": self.passed,
            "result": self.result,
            "verdict": self.verdict,
            "ended": {ending: self.endings.get(ending, 0) for ending in ENDINGS},
            "runs": [run.to_dict() for run in self.runs],
            **({} if self.against is None else {"against": self.against.to_dict()}),
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
    the same band as the other layers.
    """
    if current.scored == 0 or previous.scored == 0:
        return Against(ref, EMPTY, ERROR)
    delta = exact_difference(current.fired, current.scored, previous.fired, previous.scored)
    better = (
        delta
        if current.query.should_trigger
        else exact_difference(previous.fired, previous.scored, current.fired, current.scored)
    )
    return Against(ref, delta, str(delta_verdict(better, MIN_DELTA)))


def against_previous(ref: str, current: SuiteResult, previous: SuiteResult) -> SuiteResult:
    """The current suite with each query's ``against`` (queries REF has not finished keep none)."""
    by_id = {query.query.id: query for query in previous.queries}
    return replace(
        current,
        queries=tuple(
            replace(query, against=against_query(ref, query, by_id[query.query.id]))
            if query.query.id in by_id
            else query
            for query in current.queries
        ),
    )
