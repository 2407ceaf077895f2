"""The ``described`` condition: the stand-in "decides" to use a skill by its listed description.

In Claude Code the model sees only each skill's name and description until it invokes it, so
whether a skill fires depends on how well the description fits the prompt. The emulator cannot
judge fit as a model does; it approximates it with words: a listed skill fits when its listing
line (``NAME: description``) and the user's prompt share at least ``min_overlap`` distinctive
words. Distinctive means lower-cased, reduced to a simple stem (``errors`` and ``error``,
``tables`` and ``table``, ``renamed`` and ``rename`` meet) and not a stop word (function words,
and the words every description and request uses: ``use``, ``user``, ``ask``, ``help``...).

Because only the listing is read, editing a description changes what the stand-in does, which is
what a trigger suite measures offline. Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import regex

PLACEHOLDER = "{described}"
"""Text in a reply that stands for the name of the skill the condition chose."""

_WORD = regex.compile(r"[a-z0-9]+")

# Function words, and the words skill descriptions and requests share whatever they are about
# ("Use when the user asks...", "Can you help me..."): counting them would make every skill fit
# every prompt.
_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each else etc
    few for from further get gets getting got had has have having he her here hers him his how
    i if in into is it its itself just let lets like me more most my myself no nor not now of
    off on once only or other our ours out over own please same she should so some such than
    that the their theirs them then there these they this those through to too under until up
    us very via was we were what when where whether which while who whom why will with would
    yes yet you your yours
    ask asked asking asks help helps make need needs skill skills task tasks thing things use
    used uses using user users want wants way
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())
"""Words never counted as shared."""

# Suffixes tried in order, the first that fits is removed; a stem keeps at least three letters.
_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """A crude stem of a lower-case word, so that inflected forms of one word meet.

    Not a linguistic stemmer: it only has to map the forms a description and a prompt use for
    the same thing to one key (``indexes``/``index``, ``outages``/``outage``, ``renamed``/
    ``rename``), the same way every time.
    """
    if not word.endswith(("ss", "us")):
        for suffix, replacement in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                word = word[: -len(suffix)] + replacement
                break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]  # "table" and "tables" (-> "tabl") meet
    return word


def distinctive_words(text: str) -> frozenset[str]:
    """The stems of ``text``'s words, without stop words and single characters."""
    words = set()
    for word in _WORD.findall(text.lower()):
        if len(word) < 2 or word in STOP_WORDS:
            continue
        stemmed = stem(word)
        if stemmed not in STOP_WORDS:
            words.add(stemmed)
    return frozenset(words)


@dataclass(frozen=True)
class DescriptionMatch:
    """The listed skill whose description fits the prompt best."""

    skill: str
    """The skill's name as listed (``plugin:name`` for a plugin skill)."""
    shared: tuple[str, ...]
    """The distinctive words (stems) its listing line shares with the prompt, sorted."""


@dataclass(frozen=True)
class DescribedCondition:
    """``when: {described: {min_overlap: N}}``: some listed skill's description fits the prompt."""

    min_overlap: int
    """How many distinctive words the listing line and the prompt must share, at least."""

    def best(self, prompt: str, listing: Iterable[tuple[str, str]]) -> DescriptionMatch | None:
        """The best-fitting listed skill, or ``None`` when none shares ``min_overlap`` words.

        Args:
            prompt: The user's latest prompt.
            listing: ``(name, description)`` for every listed skill.

        Ties go to the skill whose name sorts first, so the choice never depends on the order
        Claude Code happened to list the skills in.
        """
        prompt_words = distinctive_words(prompt)
        candidates = []
        for name, description in listing:
            words = prompt_words & distinctive_words(f"{name} {description}")
            if len(words) >= self.min_overlap:
                candidates.append((-len(words), name, tuple(sorted(words))))
        if not candidates:
            return None
        _, best, shared = min(candidates)
        return DescriptionMatch(skill=best, shared=shared)


def fill_placeholder(value: Any, skill: str) -> Any:
    """``value`` with every :data:`PLACEHOLDER` in its strings replaced by ``skill``."""
    if isinstance(value, str):
        return value.replace(PLACEHOLDER, skill)
    if isinstance(value, Mapping):
        return {key: fill_placeholder(item, skill) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [fill_placeholder(item, skill) for item in value]
    return value


def mentions_placeholder(value: Any) -> bool:
    """Whether any string in ``value`` (a reply as written in a script) holds the placeholder."""
    if isinstance(value, str):
        return PLACEHOLDER in value
    if isinstance(value, Mapping):
        return any(mentions_placeholder(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(mentions_placeholder(item) for item in value)
    return False
