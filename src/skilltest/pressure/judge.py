"""Judging one answer against a scenario's patterns: pure, no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from skilltest.patterns import Pattern, snippet


@dataclass(frozen=True)
class Judgement:
    """What the patterns found in one answer."""

    passed: bool
    """Every required pattern matched and no anti-pattern did."""
    matched: tuple[str, ...]
    """Required patterns that matched."""
    missing: tuple[str, ...]
    """Required patterns that did not match."""
    anti_matched: tuple[str, ...]
    """Anti-patterns that matched (each one fails the answer)."""
    expected_matched: bool | None
    """Whether every expected (baseline) pattern matched; ``None`` when there are none."""
    evidence: dict[str, str]
    """For each matching pattern, the text it matched (to show in reports)."""


def judge(
    text: str,
    required: Sequence[Pattern],
    anti: Sequence[Pattern],
    expected: Sequence[Pattern] = (),
) -> Judgement:
    """Judges one answer.

    Raises:
        PatternError: a pattern exceeded its time limit on this answer.
    """
    matched: list[str] = []
    missing: list[str] = []
    anti_matched: list[str] = []
    evidence: dict[str, str] = {}
    for pattern in required:
        found = pattern.search(text)
        if found is None:
            missing.append(pattern.source)
        else:
            matched.append(pattern.source)
            evidence[pattern.source] = snippet(text, found.start(), found.end())
    for pattern in anti:
        found = pattern.search(text)
        if found is not None:
            anti_matched.append(pattern.source)
            evidence[pattern.source] = snippet(text, found.start(), found.end())
    expected_matched = all(p.matches(text) for p in expected) if expected else None
    return Judgement(
        passed=not missing and not anti_matched,
        matched=tuple(matched),
        missing=tuple(missing),
        anti_matched=tuple(anti_matched),
        expected_matched=expected_matched,
        evidence=evidence,
    )


def is_red(judgement: Judgement, rule: str) -> bool:
    """Whether a baseline answer is RED (the model, without the skill, does the wrong thing).

    Args:
        judgement: The answer's judgement, expected patterns included.
        rule: ``criteria``: RED when the answer fails the with-skill criteria;
            ``expected_patterns``: RED when it matches every expected pattern.
    """
    if rule == "expected_patterns":
        return bool(judgement.expected_matched)
    return not judgement.passed
