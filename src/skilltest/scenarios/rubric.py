"""The weighted rubric a scenario run is scored with: pure, no I/O.

Five components, each a share in [0, 1], combined with weights (by default 0.30 / 0.25 / 0.20 /
0.15 / 0.10):

``required_tools``
    Share of the listed tools called at least once. ``Task`` and ``Agent`` are one tool,
    ``mcp__server__tool`` also answers to ``tool``, a ``Skill`` call counts as the tool ``Skill``.
``required_patterns``
    Share of the patterns that match the run's *evidence* (below).
``anti_patterns``
    1 minus the share of the patterns that match the evidence.
``tool_ordering``
    Share of the listed sequences found, in order, as a subsequence of the calls.
``recommended_tools``
    Share of the listed tools called at least once.

The evidence is one string per tool call, ``name + " " + json.dumps(input)``, plus the assistant's
text as one more string; a pattern matches when it matches any of them. JSON nested in a string
argument (a query passed as a JSON string) is parsed first, so ``"op":\\s*"P99"`` matches it;
``json.dumps`` writes ``"key": "value"`` (a space after the colon) and keeps non-ASCII text as it
is. Every call counts, the subagents' included, and so do calls the harness refused or that
failed: they still show what the agent chose to do. Tool results are not evidence: they are what
the world answered, not what the agent did.

A component the scenario leaves out (absent or an empty list) is ``None`` and the weights of the
others are renormalised to sum to 1. A run is *unscored* (``score`` is ``None`` and
``unscored_reason`` says why) when its transcript has an ``error`` (the run did not execute),
when the scenario defines no component at all, or when every defined component weighs 0. An
unscored run is never a silent 0 or 1; reducers skip it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from skilltest.errors import InputError, SuiteError
from skilltest.patterns import Pattern
from skilltest.report.text import snippet
from skilltest.stats import DIGITS
from skilltest.transcript import ToolCall, Transcript

SCHEMA_VERSION = 1
"""Version of :meth:`ScoreCard.to_dict`'s layout."""

COMPONENTS: tuple[str, ...] = (
    "required_tools",
    "required_patterns",
    "anti_patterns",
    "tool_ordering",
    "recommended_tools",
)
"""The rubric's components, in the order cards and reports show them."""

_NESTED_JSON_DEPTH = 8
_CLOSEST_TOOL_RATIO = 0.5


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
    """What a scenario expects of a run; an empty component is left out of the score."""

    required_tools: tuple[str, ...] = ()
    """Tools the agent must call."""
    required_patterns: tuple[Pattern, ...] = ()
    """Patterns the evidence must match."""
    anti_patterns: tuple[Pattern, ...] = ()
    """Patterns the evidence must not match."""
    tool_ordering: tuple[tuple[str, ...], ...] = ()
    """Sequences of tools that must be called in this order (other calls may come between)."""
    recommended_tools: tuple[str, ...] = ()
    """Tools that earn a bonus when called."""
    weights: Weights = field(default_factory=Weights)
    """How much each component counts."""

    @property
    def defined(self) -> tuple[str, ...]:
        """The components this scenario defines, in :data:`COMPONENTS` order."""
        return tuple(name for name in COMPONENTS if getattr(self, name))


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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return {
            "value": self.value,
            "weight": self.weight,
            "matched": list(self.matched),
            "missing": list(self.missing),
            "closest": dict(self.closest),
            "evidence": dict(self.evidence),
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
    """Skills the run invoked."""

    @property
    def scored(self) -> bool:
        """Whether the run has a score."""
        return self.score is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping; left-out components are ``null``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "score": self.score,
            "unscored_reason": self.unscored_reason,
            "tool_calls": self.tool_calls,
            "skills_invoked": list(self.skills_invoked),
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
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise InputError(
                f"score card schema_version {version!r} is not supported "
                f"(this skilltest reads {SCHEMA_VERSION})",
                fix="re-run the suite with this version of skilltest",
            )
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
        )

    def explain(self) -> str:
        """One line a person can read: the score and, per defined component, why."""
        if self.score is None:
            return f"unscored: {self.unscored_reason}"
        parts = [
            _explain_component(name, card)
            for name, card in self.components.items()
            if card is not None
        ]
        return f"score {self.score:.2f}: " + " | ".join(parts)


def score(transcript: Transcript, expected: Expected) -> ScoreCard:
    """Scores one run against a scenario's rubric.

    Returns:
        The card; unscored (``score`` ``None`` with the reason) when the run did not execute,
        when the rubric defines no component, or when every defined component weighs 0.

    Raises:
        PatternError: a pattern exceeded its time limit on this run's evidence.
    """
    defined = expected.defined
    total_weight = sum(expected.weights.of(name) for name in defined)
    reason: str | None = None
    if transcript.error is not None:
        reason = transcript.error
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
        )

    evidence = run_evidence(transcript)
    components: dict[str, ComponentScore | None] = dict.fromkeys(COMPONENTS)
    total = 0.0
    for name in defined:
        weight = expected.weights.of(name) / total_weight
        card = _SCORERS[name](transcript, expected, evidence, round(weight, DIGITS))
        components[name] = card
        total += card.value * weight
    return ScoreCard(
        score=round(total, DIGITS),
        components=components,
        unscored_reason=None,
        tool_calls=len(transcript.tool_calls),
        skills_invoked=transcript.skills_invoked,
    )


def run_evidence(transcript: Transcript) -> tuple[str, ...]:
    """What patterns are matched against: one string per tool call, then the assistant's text."""
    items = [
        f"{call.name} {json.dumps(expand_nested_json(call.input), ensure_ascii=False)}"
        for call in transcript.tool_calls
    ]
    if transcript.text:
        items.append(transcript.text)
    return tuple(items)


def expand_nested_json(value: Any, depth: int = 0) -> Any:
    """``value`` with every string that holds a JSON object or array replaced by its parse."""
    if isinstance(value, dict):
        return {key: expand_nested_json(item, depth) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_nested_json(item, depth) for item in value]
    if isinstance(value, str) and depth < _NESTED_JSON_DEPTH:
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            try:
                parsed = json.loads(stripped)
            except ValueError:
                return value
            if isinstance(parsed, dict | list):
                return expand_nested_json(parsed, depth + 1)
    return value


# --- the components --------------------------------------------------------------------------

_Scorer = Callable[[Transcript, Expected, Sequence[str], float], ComponentScore]


def _tools_component(
    names: Sequence[str], calls: Sequence[ToolCall], weight: float
) -> ComponentScore:
    matched = [name for name in names if any(call.answers_to(name) for call in calls)]
    missing = [name for name in names if name not in matched]
    closest = {name: seen for name in missing if (seen := _closest_tool(name, calls))}
    return ComponentScore(
        value=len(matched) / len(names),
        weight=weight,
        matched=tuple(matched),
        missing=tuple(missing),
        closest=closest,
    )


def _required_tools(
    transcript: Transcript, expected: Expected, evidence: Sequence[str], weight: float
) -> ComponentScore:
    return _tools_component(expected.required_tools, transcript.tool_calls, weight)


def _recommended_tools(
    transcript: Transcript, expected: Expected, evidence: Sequence[str], weight: float
) -> ComponentScore:
    return _tools_component(expected.recommended_tools, transcript.tool_calls, weight)


def _search(
    patterns: Sequence[Pattern], evidence: Sequence[str]
) -> tuple[list[str], dict[str, str]]:
    """The sources of the patterns that match some evidence item, and where they matched."""
    found: dict[str, str] = {}
    for pattern in patterns:
        for item in evidence:
            match = pattern.search(item)
            if match is not None:
                found[pattern.source] = snippet(item, match.start(), match.end())
                break
    return [p.source for p in patterns if p.source in found], found


def _required_patterns(
    transcript: Transcript, expected: Expected, evidence: Sequence[str], weight: float
) -> ComponentScore:
    patterns = expected.required_patterns
    matched, found = _search(patterns, evidence)
    missing = [p.source for p in patterns if p.source not in found]
    closest = {source: seen for source in missing if (seen := _closest_text(source, evidence))}
    return ComponentScore(
        value=len(matched) / len(patterns),
        weight=weight,
        matched=tuple(matched),
        missing=tuple(missing),
        closest=closest,
        evidence=found,
    )


def _anti_patterns(
    transcript: Transcript, expected: Expected, evidence: Sequence[str], weight: float
) -> ComponentScore:
    patterns = expected.anti_patterns
    hits, found = _search(patterns, evidence)
    return ComponentScore(
        value=1 - len(hits) / len(patterns),
        weight=weight,
        matched=tuple(hits),
        missing=tuple(p.source for p in patterns if p.source not in found),
        evidence=found,
    )


def _tool_ordering(
    transcript: Transcript, expected: Expected, evidence: Sequence[str], weight: float
) -> ComponentScore:
    matched: list[str] = []
    missing: list[str] = []
    closest: dict[str, str] = {}
    for sequence in expected.tool_ordering:
        label = " → ".join(sequence)
        reached = _in_order(sequence, transcript.tool_calls)
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
    "required_tools": _required_tools,
    "required_patterns": _required_patterns,
    "anti_patterns": _anti_patterns,
    "tool_ordering": _tool_ordering,
    "recommended_tools": _recommended_tools,
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
    total = len(card.matched) + len(card.missing)
    if name == "anti_patterns":
        text = f"{name} {len(card.matched)}/{total} hit"
        details = [
            f"{hit!r} at {card.evidence[hit]!r}" for hit in card.matched if hit in card.evidence
        ]
    else:
        text = f"{name} {len(card.matched)}/{total}"
        details = []
        for item in card.missing:
            near = card.closest.get(item)
            details.append(f"missing {item!r}" + (f", closest {near!r}" if near else ""))
    return text + (f" ({'; '.join(details)})" if details else "")
