"""The weighted rubric a scenario run is scored with: pure, no I/O.

Six components, each a share in [0, 1], combined with weights (by default 0.30 / 0.25 / 0.20 /
0.15 / 0.10 / 0.30, renormalised over the components a scenario defines):

``required_tools``
    Share of the listed tools called at least once (a call that never ran does not count; with
    ``require_success`` only a call that ran without an error does). ``Task`` and ``Agent`` are
    one tool, ``mcp__server__tool`` also answers to ``tool``.
``required_patterns``
    Share of the patterns that match the run's *evidence* (below), together with the
    ``text_patterns``, which must match what the user saw.
``anti_patterns``
    1 minus the share of the patterns that match the evidence (a vetoing one zeroes the run).
``tool_ordering``
    Share of the listed sequences found, in order, as a subsequence of the counted calls.
``recommended_tools``
    Share of the listed tools called at least once.
``checks``
    Share (by weight) of the outcome checks the run met (:mod:`skilltest.checks`): files, a
    command, the answer, a judge. Defined for a run when some check applied to its arm.

**Evidence is what happened.** Only *actions* are evidence for the patterns
(:mod:`skilltest.transcript.evidence`): the command a tool ran, the content it wrote, the
arguments of an MCP call, a subagent's own calls. Plans and delegations are not (a ``TodoWrite``
note, an ``Agent`` prompt, a question to the user), nor loading the skill (a ``Skill`` call,
reading the skill's own files: only the arm with the skill could), nor a call that never ran (an
unknown tool, a refused permission, rejected input). A call that ran and failed is evidence of
the attempt and is shown as failed; with ``require_success: true`` it earns no credit (required
tools, patterns, ordering), nor does a background command whose end was never reported as a
success, but anti-patterns and their vetoes still look at every attempt: ``rm -rf ./cache &&
false`` did its damage before it failed. Reading the skill's files is not evidence whatever
pipeline carries it (``grep ... SKILL.md | head``, ``sed -n``, ``python3 -c
"print(open(...).read())"``). Each action is matched in two forms: the JSON form ``name + " " +
json.dumps(input)`` (JSON nested in a string argument parsed first, so ``"op":\\s*"P99"``
matches it; ``json.dumps`` writes ``"key": "value"`` with a space after the colon and keeps
non-ASCII text as it is), and every string value of the input as written (strings that hold JSON
also through the strings inside them), so ``service_name="checkout"`` matches a command holding
exactly that, quotes unescaped. Tool results are not evidence: they are what the world answered,
not what the agent did.

**Scope.** ``pattern_scope`` says where ``required_patterns`` and ``anti_patterns`` look:
``tools`` (the default: the actions), ``text`` (what the user saw: the main agent's text,
never a subagent's internal text) or ``all`` (both). ``text_patterns`` always look at what the
user saw and count in the ``required_patterns`` component.

**Credit for doing nothing.** In a scenario that requires something (a required tool, pattern,
ordering or check), restraint is only worth something in a run that acted: a run with no action
scores 0 on ``anti_patterns`` ("no tool call: nothing to credit"), and with ``pattern_scope:
text`` a run with no text does. A scenario that requires nothing (only anti-patterns, or
``expect_no_action: true``) credits a run that took no action; ``expect_no_action`` also makes
any action a vetoing anti-pattern.

**Vetoes.** An anti-pattern written ``{pattern: ..., veto: true}`` and a check with ``veto:
true`` veto: a run that matches the one or fails the other scores 0 and fails, whatever else
it did; the card lists why (:attr:`ScoreCard.vetoes`). A run its time limit cut off while a
tool call the agent made was still running (:attr:`~skilltest.transcript.Transcript.hung`) is
vetoed too: it never finished, and the hang was its own.

**Skill requirements are indicators.** A ``Skill`` entry (``Skill`` for the scenario's skill,
``Skill(name)`` for another) in ``required_tools``, ``recommended_tools`` or ``tool_ordering`` is
taken out of the score when the suite is loaded (:func:`skill_requirement`) and joins the
expected skills, which the card reports as fired or not: only the with-skill arm can invoke the
skill, so scoring it would measure the invocation, not what it changed. A failed ``Skill`` call
(an unknown skill, a refusal) never counts as the skill fired.

A component the scenario leaves out (absent or an empty list) is ``None`` and the weights of the
others are renormalised to sum to 1. A run is *unscored* (``score`` is ``None`` and
``unscored_reason`` says why) when its transcript has an ``error`` (the run did not execute, or
was cut short by a time-out: see ``score_partial``), when a check could not be evaluated (a
judge whose every call failed), when no component is defined for its arm, or when every defined
component weighs 0. An unscored run is never a silent 0 or 1; reducers skip it.

**Honeycomb's scoring.** With ``scoring: honeycomb`` (:mod:`skilltest.scenarios.scoring`) the
five sections are always counted at their weights, a section left empty as full credit
(:data:`EMPTY_CREDIT`), nothing renormalised (the checks, when a scenario has some, count beside
them with their weight, and the sum is divided by the weights' total, 1 by default); a run with
no action earns the anti-patterns' share, and ``Skill`` entries stay in the tool lists and are
scored as tools. Evidence, vetoes and unscored runs are as above: Honeycomb's evaluator scores a
run that failed 0, skilltest leaves it unscored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skilltest.errors import SuiteError, check_schema_version
from skilltest.patterns import Pattern, snippet
from skilltest.scenarios.scoring import Scoring
from skilltest.stats import DIGITS

if TYPE_CHECKING:
    from skilltest.checks.model import Check, CheckResult
    from skilltest.transcript import ToolCall, Transcript

SCHEMA_VERSION = 1
"""Version of :meth:`ScoreCard.to_dict`'s layout."""

COMPONENTS: tuple[str, ...] = (
    "required_tools",
    "required_patterns",
    "anti_patterns",
    "tool_ordering",
    "recommended_tools",
    "checks",
)
"""The rubric's components, in the order cards and reports show them."""

PatternScope = Literal["tools", "text", "all"]
"""Where ``required_patterns`` and ``anti_patterns`` look: tool calls, assistant text, both."""

DEFAULT_PATTERN_SCOPE: PatternScope = "tools"
"""Patterns look at what the agent did unless the scenario says otherwise."""

TEXT_LABEL = "text: "
"""How a ``text_patterns`` entry is named on a card, apart from the required patterns."""

NOTHING_DONE = "no tool call: nothing to credit"
"""Why a run with no tool call gets no anti-pattern credit."""

NOTHING_SAID = "no text: nothing to credit"
"""Why a run with no text gets no anti-pattern credit when the patterns look at the text."""

EMPTY_CREDIT = "empty: full credit"
"""The note on a section a scenario leaves empty, under honeycomb's scoring."""

ANY_ACTION = "(any action)"
"""The anti-pattern ``expect_no_action: true`` adds: any action at all, and a veto."""

_NESTED_JSON_DEPTH = 8
_CLOSEST_TOOL_RATIO = 0.5
_SKILL_REQUIREMENT = re.compile(r"Skill(?:\((?P<name>[^()]*)\))?")


@dataclass(frozen=True)
class Weights:
    """How much each component counts; renormalised over the components a scenario defines."""

    required_tools: float = 0.30
    """Weight of the required tools."""
    required_patterns: float = 0.25
    """Weight of the required patterns."""
    anti_patterns: float = 0.20
    """Weight of the anti-patterns."""
    tool_ordering: float = 0.15
    """Weight of the tool ordering."""
    recommended_tools: float = 0.10
    """Weight of the recommended tools."""
    checks: float = 0.30
    """Weight of the outcome checks (what the run left behind: files, a passing command, the
    answer, a judge's verdict)."""

    def __post_init__(self) -> None:
        for name in COMPONENTS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SuiteError(f"the weight of {name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise SuiteError(
                    f"the weight of {name} must be a finite number >= 0, got {value!r}",
                    fix="use 0 to leave a component out of the score",
                )

    def of(self, component: str) -> float:
        """The weight of one component, by name."""
        return float(getattr(self, component))


@dataclass(frozen=True)
class Expected:
    """What a scenario expects of a run; an empty component is left out of the score.

    The tool lists hold no ``Skill`` entries: the suite loader moves those to
    :attr:`expected_skills` (see :func:`skill_requirement`).
    """

    required_tools: tuple[str, ...] = ()
    """Tools the agent must call."""
    required_patterns: tuple[Pattern, ...] = ()
    """Patterns the evidence in :attr:`pattern_scope` must match."""
    anti_patterns: tuple[Pattern, ...] = ()
    """Patterns the evidence in :attr:`pattern_scope` must not match."""
    tool_ordering: tuple[tuple[str, ...], ...] = ()
    """Sequences of tools that must be called in this order (other calls may come between); a
    sequence of one tool asks only that it was called."""
    recommended_tools: tuple[str, ...] = ()
    """Tools that earn a bonus when called."""
    weights: Weights = field(default_factory=Weights)
    """How much each component counts."""
    text_patterns: tuple[Pattern, ...] = ()
    """Patterns the assistant's text must match, whatever the scope; they count in the
    ``required_patterns`` component."""
    pattern_scope: PatternScope = DEFAULT_PATTERN_SCOPE
    """Where ``required_patterns`` and ``anti_patterns`` look: ``tools``, ``text`` or ``all``."""
    expected_skills: tuple[str, ...] = ()
    """Skills the with-skill arm should invoke: reported beside the score, never part of it."""
    vetoes: frozenset[str] = frozenset()
    """The anti-patterns (by source) that veto: a run matching one scores 0 and fails."""
    expect_no_action: bool = False
    """The scenario asks the agent to take no action: any action is a vetoing anti-pattern."""
    require_success: bool = False
    """Only calls that ran without an error count as evidence (a failed call then does not)."""
    checks: tuple[Check, ...] = ()
    """The outcome checks, evaluated after each run (their results are passed to :func:`score`)."""
    scoring: Scoring = "skilltest"
    """How the sections add up: ``skilltest`` renormalises over the defined ones, ``honeycomb``
    counts an empty one as full credit (:mod:`skilltest.scenarios.scoring`)."""

    @property
    def defined(self) -> tuple[str, ...]:
        """The components this scenario defines, in :data:`COMPONENTS` order."""
        return tuple(name for name in COMPONENTS if self._defines(name))

    @property
    def requires_something(self) -> bool:
        """Whether a run must do something to earn credit: a required tool, pattern, ordering
        or check. A scenario that requires nothing (only anti-patterns, or
        ``expect_no_action``) credits a run that took no action."""
        return bool(
            self.required_tools
            or self.required_patterns
            or self.text_patterns
            or self.tool_ordering
            or self.checks
        )

    def _defines(self, component: str) -> bool:
        if component == "required_patterns" and self.text_patterns:
            return True
        if component == "anti_patterns" and self.expect_no_action:
            return True
        return bool(getattr(self, component))


def skill_requirement(entry: str, skill: str) -> str | None:
    """The skill a rubric entry asks for, when the entry is a ``Skill`` requirement.

    Args:
        entry: A tool name from ``required_tools``, ``recommended_tools`` or ``tool_ordering``.
        skill: The scenario's skill, which a bare ``Skill`` means.

    Returns:
        ``skill`` for ``Skill``, ``name`` for ``Skill(name)``; ``None`` for any other tool.
    """
    match = _SKILL_REQUIREMENT.fullmatch(entry.strip())
    if match is None:
        return None
    return (match.group("name") or "").strip() or skill


def skills_fired(expected: Sequence[str], invoked: Sequence[str]) -> dict[str, bool]:
    """Whether each expected skill was invoked; ``plugin:name`` counts as ``name``."""
    seen = {name.rsplit(":", 1)[-1] for name in invoked}
    return {name: name.rsplit(":", 1)[-1] in seen for name in expected}


@dataclass(frozen=True)
class ComponentScore:
    """One component's share, and what a person needs to see why."""

    value: float
    """The share in [0, 1] this component contributes before weighting."""
    weight: float
    """Its weight after renormalisation over the defined components."""
    matched: tuple[str, ...]
    """What the run did that the component looks for: tools called, patterns matched, sequences
    found. For anti-patterns these are the hits, which cost points."""
    missing: tuple[str, ...]
    """What the component looks for that the run did not do (for anti-patterns, the ones absent,
    which is good)."""
    closest: dict[str, str] = field(default_factory=dict)
    """For a missing tool, pattern or sequence: the closest thing the run did."""
    evidence: dict[str, str] = field(default_factory=dict)
    """For a matched pattern or anti-pattern: the text around the match."""
    note: str | None = None
    """Why the component gave no credit whatever it matched (a run that did nothing)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return {
            "value": self.value,
            "weight": self.weight,
            "matched": list(self.matched),
            "missing": list(self.missing),
            "closest": dict(self.closest),
            "evidence": dict(self.evidence),
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ComponentScore:
        """Reads what :meth:`to_dict` wrote."""
        return cls(
            value=float(data["value"]),
            weight=float(data["weight"]),
            matched=tuple(data.get("matched", ())),
            missing=tuple(data.get("missing", ())),
            closest=dict(data.get("closest", {})),
            evidence=dict(data.get("evidence", {})),
            note=data.get("note"),
        )


@dataclass(frozen=True)
class ScoreCard:
    """A run's score with, per component, what matched, what was missing and what came closest."""

    score: float | None
    """The weighted score in [0, 1]; ``None`` when the run is unscored."""
    components: dict[str, ComponentScore | None]
    """Every component by name; ``None`` for one left out (or for all, when unscored)."""
    unscored_reason: str | None
    """Why there is no score; ``None`` for a scored run."""
    tool_calls: int
    """How many tool calls the run made (subagents included)."""
    skills_invoked: tuple[str, ...]
    """Skills the run invoked (failed ``Skill`` calls left out)."""
    expected_skills: tuple[str, ...] = ()
    """Skills the scenario expects the with-skill arm to invoke: an indicator, not scored."""
    vetoes: tuple[str, ...] = ()
    """Why the run was vetoed (a vetoing anti-pattern matched, a vetoing check failed): its
    score is then 0 and it fails, whatever else it did."""
    checks: tuple[CheckResult, ...] = ()
    """What each outcome check found."""

    @property
    def scored(self) -> bool:
        """Whether the run has a score."""
        return self.score is not None

    @property
    def skills_fired(self) -> dict[str, bool]:
        """Whether each expected skill was invoked in this run."""
        return skills_fired(self.expected_skills, self.skills_invoked)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping; left-out components are ``null``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "score": self.score,
            "unscored_reason": self.unscored_reason,
            "tool_calls": self.tool_calls,
            "skills_invoked": list(self.skills_invoked),
            "expected_skills": list(self.expected_skills),
            "skills_fired": self.skills_fired,
            "vetoes": list(self.vetoes),
            "checks": [check.to_dict() for check in self.checks],
            "components": {
                name: (card.to_dict() if card is not None else None)
                for name, card in self.components.items()
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoreCard:
        """Reads what :meth:`to_dict` wrote.

        Raises:
            InputError: the mapping was written by an unknown layout version.
        """
        check_schema_version(data, SCHEMA_VERSION, "score card")
        components = data.get("components") or {}
        return cls(
            score=data.get("score"),
            components={
                name: ComponentScore.from_dict(components[name])
                if components.get(name) is not None
                else None
                for name in COMPONENTS
            },
            unscored_reason=data.get("unscored_reason"),
            tool_calls=int(data.get("tool_calls", 0)),
            skills_invoked=tuple(data.get("skills_invoked", ())),
            expected_skills=tuple(data.get("expected_skills", ())),
            vetoes=tuple(data.get("vetoes", ())),
        )

    def explain(self) -> str:
        """One line a person can read: the score and, per defined component, why."""
        if self.score is None:
            return f"unscored: {self.unscored_reason}"
        vetoed = f" (vetoed: {'; '.join(self.vetoes)})" if self.vetoes else ""
        parts = [
            _explain_component(name, card)
            for name, card in self.components.items()
            if card is not None
        ]
        return f"score {self.score:.2f}{vetoed}: " + " | ".join(parts)


def score(
    transcript: Transcript, expected: Expected, checks: Sequence[CheckResult] = ()
) -> ScoreCard:
    """Scores one run against a scenario's rubric and what its outcome checks found.

    Args:
        transcript: The run.
        expected: The scenario's rubric.
        checks: The results of the checks that applied to the run's arm (the ``checks``
            component; none: the component is left out).

    Returns:
        The card; unscored (``score`` ``None`` with the reason) when the run did not execute,
        when a check could not be evaluated, when no component is defined, or when every
        defined component weighs 0. A vetoed run scores 0.

    Raises:
        PatternError: a pattern exceeded its time limit on this run's evidence.
    """
    # Indicators (``scored: false``) are shown with the run, never part of its score.
    counted = [check for check in checks if check.scored]
    honeycomb = expected.scoring == "honeycomb"
    defined = tuple(
        name
        for name in COMPONENTS
        if (counted if name == "checks" else honeycomb or name in expected.defined)
    )
    total_weight = sum(expected.weights.of(name) for name in defined)
    failed_check = next((check for check in counted if check.error is not None), None)
    reason: str | None = None
    if transcript.error is not None:
        reason = transcript.error
    elif failed_check is not None:
        reason = f"check {failed_check.name!r} could not be evaluated: {failed_check.error}"
    elif not defined:
        reason = "the scenario's rubric defines no component (" + ", ".join(COMPONENTS) + ")"
    elif total_weight <= 0:
        reason = "every component the scenario defines has weight 0: " + ", ".join(defined)
    if reason is not None:
        return ScoreCard(
            score=None,
            components=dict.fromkeys(COMPONENTS),
            unscored_reason=reason,
            tool_calls=len(transcript.tool_calls),
            skills_invoked=transcript.skills_invoked,
            expected_skills=expected.expected_skills,
            checks=tuple(checks),
        )

    evidence = run_evidence(transcript, require_success=expected.require_success)
    # Anti-patterns and their vetoes look at every attempt: a command that did its damage and
    # then exited non-zero did the damage all the same.
    attempts = run_evidence(transcript) if expected.require_success else evidence
    components: dict[str, ComponentScore | None] = dict.fromkeys(COMPONENTS)
    total = 0.0
    for name in defined:
        weight = expected.weights.of(name) / total_weight
        if name == "checks":
            card = _checks_component(counted, round(weight, DIGITS))
        elif name not in expected.defined:
            card = ComponentScore(
                value=1.0, weight=round(weight, DIGITS), matched=(), missing=(), note=EMPTY_CREDIT
            )
        else:
            seen = attempts if name == "anti_patterns" else evidence
            card = _SCORERS[name](transcript, expected, seen, round(weight, DIGITS))
        components[name] = card
        total += card.value * weight
    vetoes = _vetoes(components.get("anti_patterns"), expected, checks)
    if transcript.hung is not None:
        # The agent's own tool call outlasted the run: it never finished, whatever it did.
        vetoes = (transcript.hung, *vetoes)
    return ScoreCard(
        score=0.0 if vetoes else round(total, DIGITS),
        components=components,
        unscored_reason=None,
        tool_calls=len(transcript.tool_calls),
        skills_invoked=transcript.skills_invoked,
        expected_skills=expected.expected_skills,
        vetoes=vetoes,
        checks=tuple(checks),
    )


def _vetoes(
    anti: ComponentScore | None, expected: Expected, checks: Sequence[CheckResult]
) -> tuple[str, ...]:
    """Why the run is vetoed: each vetoing anti-pattern it matched, each vetoing check it
    failed."""
    found = []
    if anti is not None:
        for hit in anti.matched:
            if hit in expected.vetoes or hit == ANY_ACTION:
                where = anti.evidence.get(hit)
                found.append(f"anti-pattern {hit!r}" + (f" at {where!r}" if where else ""))
    found += [f"check {c.name!r} failed: {c.evidence}" for c in checks if c.vetoed]
    return tuple(found)


# --- the evidence ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallEvidence:
    """One tool call in the forms patterns are matched against."""

    name: str
    """The tool's name as called."""
    json_form: str
    """``name + " " + json.dumps(input)``, JSON nested in string arguments parsed first."""
    strings: tuple[str, ...]
    """Every string value of the input as written, then the strings inside those holding JSON."""


@dataclass(frozen=True)
class Evidence:
    """What a run's patterns are matched against: its tool calls and the assistant's text."""

    calls: tuple[CallEvidence, ...]
    """The actions in order (subagents' included; plans, delegations, skill loading and calls
    that never ran left out: :mod:`skilltest.transcript.evidence`)."""
    text: str
    """What the user saw: the main agent's text blocks joined by blank lines."""

    def forms(self, scope: PatternScope) -> Iterator[tuple[str, str]]:
        """Each string a pattern in ``scope`` is matched against, with the label its match is
        shown under (empty when the string names its call already)."""
        if scope in ("tools", "all"):
            for call in self.calls:
                yield "", call.json_form
                for value in call.strings:
                    yield call.name + " ", value
        if scope in ("text", "all") and self.text:
            yield "", self.text


def run_evidence(transcript: Transcript, *, require_success: bool = False) -> Evidence:
    """The run's evidence: every action in both its forms (with ``require_success``, only
    those that ran without an error), and the main agent's text."""
    from skilltest.transcript.evidence import actions  # scoring a run, not reading a suite

    return Evidence(
        calls=tuple(
            CallEvidence(
                name=call.name,
                json_form=(
                    f"{call.name} {json.dumps(expand_nested_json(call.input), ensure_ascii=False)}"
                ),
                strings=tuple(dict.fromkeys(s for s in input_strings(call.input) if s)),
            )
            for call in actions(transcript.tool_calls, succeeded_only=require_success)
        ),
        text=transcript.answer,
    )


def expand_nested_json(value: Any, depth: int = 0) -> Any:
    """``value`` with every string that holds a JSON object or array replaced by its parse."""
    if isinstance(value, dict):
        return {key: expand_nested_json(item, depth) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_nested_json(item, depth) for item in value]
    if isinstance(value, str) and depth < _NESTED_JSON_DEPTH:
        parsed = _parse_nested(value)
        if parsed is not None:
            return expand_nested_json(parsed, depth + 1)
    return value


def input_strings(value: Any, depth: int = 0) -> Iterator[str]:
    """Every string value in ``value`` as written; a string holding a JSON object or array is
    followed by the strings inside it."""
    if isinstance(value, dict):
        for item in value.values():
            yield from input_strings(item, depth)
    elif isinstance(value, list):
        for item in value:
            yield from input_strings(item, depth)
    elif isinstance(value, str):
        yield value
        if depth < _NESTED_JSON_DEPTH:
            parsed = _parse_nested(value)
            if parsed is not None:
                yield from input_strings(parsed, depth + 1)


def _parse_nested(value: str) -> dict[str, Any] | list[Any] | None:
    """The JSON object or array ``value`` holds, or ``None``."""
    stripped = value.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict | list) else None


# --- the components --------------------------------------------------------------------------

_Scorer = Callable[["Transcript", Expected, Evidence, float], ComponentScore]


def counted_calls(transcript: Transcript, expected: Expected) -> list[ToolCall]:
    """The calls tool requirements count: every call that ran (a refused one never did); with
    ``require_success``, only those known to have run without an error (a background command
    only once its end was reported as a success)."""
    return [
        call
        for call in transcript.tool_calls
        if not call.refused and (not expected.require_success or call.succeeded)
    ]


def _tools_component(
    names: Sequence[str], calls: Sequence[ToolCall], weight: float, everything: Sequence[ToolCall]
) -> ComponentScore:
    matched = [name for name in names if any(call.answers_to(name) for call in calls)]
    missing = [name for name in names if name not in matched]
    closest = {name: seen for name in missing if (seen := _closest_tool(name, everything))}
    outcome: dict[str, str] = {}
    for name in matched:
        made = [call for call in calls if call.answers_to(name)]
        if all(call.status == "failed" for call in made):
            # The attempt counts; the report shows that it did not succeed.
            first = (made[0].result or "no result").strip().splitlines()
            outcome[name] = f"failed: {first[0][:120] if first else 'an error'}"
    for name in missing:
        refused = [c for c in everything if c.refused and c.answers_to(name)]
        if refused:
            outcome[name] = "never ran: " + (refused[0].result or "refused").strip()[:120]
    return ComponentScore(
        value=len(matched) / len(names),
        weight=weight,
        matched=tuple(matched),
        missing=tuple(missing),
        closest=closest,
        evidence=outcome,
    )


def _tools_scorer(names: Callable[[Expected], Sequence[str]]) -> _Scorer:
    """The scorer of a list of tools the run should call (``required_tools``, ...)."""

    def score(
        transcript: Transcript, expected: Expected, evidence: Evidence, weight: float
    ) -> ComponentScore:
        calls = counted_calls(transcript, expected)
        return _tools_component(names(expected), calls, weight, transcript.tool_calls)

    return score


def _search(
    patterns: Sequence[Pattern], forms: Sequence[tuple[str, str]], label: str = ""
) -> tuple[list[str], dict[str, str]]:
    """The labels of the patterns that match some form, and the text around each match."""
    found: dict[str, str] = {}
    for pattern in patterns:
        for prefix, item in forms:
            match = pattern.search(item)
            if match is not None:
                found[label + pattern.source] = prefix + snippet(item, match.start(), match.end())
                break
    return [label + p.source for p in patterns if label + p.source in found], found


def _required_patterns(
    transcript: Transcript, expected: Expected, evidence: Evidence, weight: float
) -> ComponentScore:
    scoped = list(evidence.forms(expected.pattern_scope))
    text = list(evidence.forms("text"))
    matched, found = _search(expected.required_patterns, scoped)
    text_matched, text_found = _search(expected.text_patterns, text, TEXT_LABEL)
    found.update(text_found)
    labels = [p.source for p in expected.required_patterns]
    labels += [TEXT_LABEL + p.source for p in expected.text_patterns]
    missing = [label for label in labels if label not in found]
    closest: dict[str, str] = {}
    for label in missing:
        source, forms = (
            (label[len(TEXT_LABEL) :], text) if label.startswith(TEXT_LABEL) else (label, scoped)
        )
        if seen := _closest_text(source, [item for _, item in forms]):
            closest[label] = seen
    return ComponentScore(
        value=(len(matched) + len(text_matched)) / len(labels),
        weight=weight,
        matched=tuple(label for label in labels if label in found),
        missing=tuple(missing),
        closest=closest,
        evidence=found,
    )


def _anti_patterns(
    transcript: Transcript, expected: Expected, evidence: Evidence, weight: float
) -> ComponentScore:
    patterns = expected.anti_patterns
    hits, found = _search(patterns, list(evidence.forms(expected.pattern_scope)))
    labels = [p.source for p in patterns]
    if expected.expect_no_action:
        labels.append(ANY_ACTION)
        if evidence.calls:
            hits.append(ANY_ACTION)
            found[ANY_ACTION] = evidence.calls[0].json_form[:120]
    # Restraint is only worth something in a run that acted, when the scenario asks for work:
    # a refusal avoids every anti-pattern without having done any of it. A scenario that
    # requires nothing (a prompt that needs no action) credits inaction.
    note = None
    if expected.requires_something and expected.scoring != "honeycomb":
        if expected.pattern_scope == "text":
            note = None if evidence.text else NOTHING_SAID
        else:
            note = None if evidence.calls else NOTHING_DONE
    return ComponentScore(
        value=0.0 if note else 1 - len(hits) / len(labels),
        weight=weight,
        matched=tuple(hits),
        missing=tuple(label for label in labels if label not in found),
        evidence=found,
        note=note,
    )


def _checks_component(checks: Sequence[CheckResult], weight: float) -> ComponentScore:
    total = sum(check.weight for check in checks)
    passed = sum(check.weight for check in checks if check.passed)
    return ComponentScore(
        value=passed / total,
        weight=weight,
        matched=tuple(check.name for check in checks if check.passed),
        missing=tuple(check.name for check in checks if not check.passed),
        evidence={check.name: check.evidence for check in checks},
    )


def _tool_ordering(
    transcript: Transcript, expected: Expected, evidence: Evidence, weight: float
) -> ComponentScore:
    matched: list[str] = []
    missing: list[str] = []
    closest: dict[str, str] = {}
    calls = counted_calls(transcript, expected)
    for sequence in expected.tool_ordering:
        label = " → ".join(sequence)
        reached = _in_order(sequence, calls)
        if reached == len(sequence):
            matched.append(label)
            continue
        missing.append(label)
        if reached == 0:
            closest[label] = f"no {sequence[0]} call"
        else:
            closest[label] = (
                f"{' → '.join(sequence[:reached])} found, then no {sequence[reached]} after it"
            )
    return ComponentScore(
        value=len(matched) / len(expected.tool_ordering),
        weight=weight,
        matched=tuple(matched),
        missing=tuple(missing),
        closest=closest,
    )


_SCORERS: dict[str, _Scorer] = {
    "required_tools": _tools_scorer(lambda expected: expected.required_tools),
    "required_patterns": _required_patterns,
    "anti_patterns": _anti_patterns,
    "tool_ordering": _tool_ordering,
    "recommended_tools": _tools_scorer(lambda expected: expected.recommended_tools),
}


def _in_order(sequence: Sequence[str], calls: Sequence[ToolCall]) -> int:
    """How many leading steps of ``sequence`` occur, in order, among ``calls``."""
    reached = 0
    for call in calls:
        if reached < len(sequence) and call.answers_to(sequence[reached]):
            reached += 1
    return reached


# --- the closest thing seen ----------------------------------------------------------------------

_ESCAPE = re.compile(r"\\[A-Za-z]")
_WORD = re.compile(r"\w{2,}")


def _closest_tool(expected: str, calls: Sequence[ToolCall]) -> str | None:
    """The called tool whose name is most like ``expected``, when one is reasonably alike."""
    from difflib import SequenceMatcher  # scoring a run, not reading a suite

    best, best_ratio = None, 0.0
    for name in dict.fromkeys(call.name for call in calls):
        short = (
            name.split("__", 2)[2] if name.startswith("mcp__") and name.count("__") >= 2 else name
        )
        ratio = max(
            SequenceMatcher(None, expected.lower(), candidate.lower()).ratio()
            for candidate in (name, short)
        )
        if ratio > best_ratio:
            best, best_ratio = name, ratio
    return best if best_ratio >= _CLOSEST_TOOL_RATIO else None


def _closest_text(source: str, evidence: Sequence[str]) -> str | None:
    """The evidence around the longest literal word of the pattern that does occur."""
    words = sorted(
        dict.fromkeys(w.lower() for w in _WORD.findall(_ESCAPE.sub(" ", source))),
        key=len,
        reverse=True,
    )
    lowered = [item.lower() for item in evidence]
    for word in words:
        for item, low in zip(evidence, lowered, strict=True):
            start = low.find(word)
            if start >= 0:
                return snippet(item, start, start + len(word))
    return None


def _explain_component(name: str, card: ComponentScore) -> str:
    if card.note == EMPTY_CREDIT:
        return f"{name} 1 ({card.note})"
    if card.note:
        return f"{name} 0 ({card.note})"
    total = len(card.matched) + len(card.missing)
    if name == "anti_patterns":
        text = f"{name} {len(card.matched)}/{total} hit"
        details = [
            f"{hit!r} at {card.evidence[hit]!r}" for hit in card.matched if hit in card.evidence
        ]
    else:
        text = f"{name} {len(card.matched)}/{total}"
        details = []
        if name in ("required_tools", "recommended_tools"):  # a tool that only failed
            details += [
                f"{item} {card.evidence[item]}" for item in card.matched if item in card.evidence
            ]
        for item in card.missing:
            near = card.closest.get(item)
            why = card.evidence.get(item) if name != "required_patterns" else None
            details.append(
                f"missing {item!r}"
                + (f", closest {near!r}" if near else "")
                + (f" ({why})" if why else "")
            )
    return text + (f" ({'; '.join(details)})" if details else "")
