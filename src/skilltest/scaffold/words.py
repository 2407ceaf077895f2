"""Requests derived from a skill's description, and checked against the emulator's stand-in.

A trigger suite written by ``skilltest init`` must pass at once on the emulator, whose stand-in
fires the listed skill whose description shares the most distinctive words with the request
(:mod:`skilltest.emulator.described`). So each request here is kept only when the stand-in
decides it as the suite says: a should-trigger request fires the skill under test (not a
distractor), a should-not request fires nothing. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skilltest.emulator.described import STOP_WORDS, DescribedCondition, distinctive_words, stem
from skilltest.skills import Skill

MIN_OVERLAP = 2
"""The ``min_overlap`` of the trigger model script's ``described`` rule."""

UNRELATED_REQUESTS = (
    "What is the capital of France?",
    "Write a haiku about autumn leaves.",
    "How many days does a leap year have?",
    "Translate 'good morning' into Spanish.",
    "What is 17 times 23?",
    "Suggest a name for a black cat.",
)
"""Requests no skill of a project should fire for; the first that fire nothing are used."""

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_USE_WHEN = re.compile(
    r"^(?:use|used|invoke|trigger)(?:\s+this(?:\s+skill)?)?\s+(?:when|for|to)\s+", re.I
)
_USER_WANTS = re.compile(
    r"(?:the\s+)?(?:user|you|someone)\s+(?:asks?|wants?|needs?)\s+(?P<to>for|to|about)?\s*",
    re.I,
)
_USER_SAYS = re.compile(
    r"^(?:the\s+)?(?:user|you|someone)(?:\s+(?:reports?|mentions?|describes?|sees?|has|have|"
    r"hits?|gets?|runs?\s+into|is|are))?\s+",
    re.I,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


def _listing(skill: Skill, neighbours: Sequence[Skill]) -> list[tuple[str, str]]:
    return [(s.name, s.description or "") for s in (skill, *neighbours)]


def fires(request: str, skill: Skill, neighbours: Sequence[Skill]) -> str | None:
    """The skill the stand-in fires for ``request`` with these skills listed, if any."""
    match = DescribedCondition(MIN_OVERLAP).best(request, _listing(skill, neighbours))
    return match.skill if match is not None else None


def _sentences(description: str) -> list[str]:
    text = " ".join(description.split())
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _as_request(sentence: str) -> str:
    """A description's sentence turned into something a user could type."""
    sentence = sentence.rstrip(".!? ")
    stripped = _USE_WHEN.sub("", sentence)
    if stripped != sentence:
        # "Use when the user asks for a migration" -> "I need a migration."; "Use when
        # implementing a feature" -> a request about that situation.
        wants = _USER_WANTS.match(stripped)
        if wants is not None:
            lead = "I want to" if (wants.group("to") or "").lower() == "to" else "I need"
            return f"{lead} {stripped[wants.end() :]}."
        stripped = _USER_SAYS.sub("", stripped)
        return f"Help me with this: {stripped}."
    return f"{sentence[:1].upper()}{sentence[1:]}."


def _own_words(skill: Skill, neighbours: Sequence[Skill]) -> list[str]:
    """Words of the description whose stem no neighbour's listing line has, in order."""
    taken: set[str] = set()
    for other in neighbours:
        taken |= distinctive_words(f"{other.name} {other.description or ''}")
    words: list[str] = []
    seen: set[str] = set()
    for word in _WORD.findall(skill.description or ""):
        lower = word.lower()
        key = stem(lower)
        if len(lower) < 3 or lower in STOP_WORDS or key in STOP_WORDS or key in taken:
            continue
        if key not in seen:
            seen.add(key)
            words.append(lower)
    return words


def should_trigger_requests(skill: Skill, neighbours: Sequence[Skill]) -> list[str]:
    """Up to two requests the stand-in fires ``skill`` for, from its description: its first
    sentence as a request, and its words no neighbour shares.

    Returns:
        The requests (empty when the description cannot be told apart from the neighbours').
    """
    candidates = [_as_request(s) for s in _sentences(skill.description or "")[:2]]
    own = _own_words(skill, neighbours)
    if len(own) >= MIN_OVERLAP:
        candidates.append(f"I need a hand with {', '.join(own[:3])}.")
    found: list[str] = []
    for request in candidates:
        if request not in found and fires(request, skill, neighbours) == skill.name:
            found.append(request)
    return found[:2]


def should_not_requests(skill: Skill, neighbours: Sequence[Skill], count: int = 2) -> list[str]:
    """Requests the stand-in fires no listed skill for."""
    return [r for r in UNRELATED_REQUESTS if fires(r, skill, neighbours) is None][:count]


def first_instruction(text: str) -> str:
    """The first sentence of a SKILL.md's body (after the front matter and headings), for an
    example answer; "" when there is none."""
    body = text
    if body.startswith("---"):
        end = body.find("\n---", 3)
        body = body[end + 4 :] if end >= 0 else ""
    for line in body.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "```", "|", "<", "---")):
            continue
        line = re.sub(r"[*_`]", "", re.sub(r"^(?:[-*+]|\d+\.)\s+", "", line))
        sentence = _sentences(line)[0] if _sentences(line) else ""
        if len(sentence) >= 12:
            return sentence[:200]
    return ""
