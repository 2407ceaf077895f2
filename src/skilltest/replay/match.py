"""Replaying a cassette: which recorded answer a request gets, and what a miss says.

A :class:`Player` serves one repetition of one cassette. A request is answered by the first
recorded exchange of its channel, not yet served, whose fingerprint equals the request's: equal
requests are served in recorded order (a recorded 429 then 200 replays as 429 then 200), and
requests that may come in another order (the CLI's side requests) still find theirs. A request
the cassette does not hold is a :class:`Miss` whose message names the cassette, the repetition,
the step, the nearest recorded request and how it differs, field by field, as JSON pointers with
a short recorded-versus-now excerpt::

    replay miss: tests/cassettes/lgtm/spike/with_skill.yaml, repetition 0, step 0: no recorded
    request matches; nearest is step 0:
      /messages/1/content/0/text: skill listing changed: "…- lgtm: Use when…" -> "…- lgtm: Always…"
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.replay.cassette import Cassette, Exchange
from skilltest.replay.normalise import canonical_json, fingerprint

MISS_PREFIX = "replay miss: "
"""How every miss message starts."""

SKILL_LISTING = "The following skills are available for use with the Skill tool"
"""How Claude Code introduces its list of skills (their names and descriptions)."""

OTHER_SKILL_LISTINGS = (
    ("### Available skills", ("\n###", "\n\n", "</skills_instructions>")),
    ("<available_skills>", ("</available_skills>",)),
)
"""Where other agents list the skills, each as its heading and what may end the list: Codex
(a developer message's ``### Available skills``) and OpenCode (its system prompt's
``<available_skills>``)."""

SKILL_CONTENT = "Base directory for this skill:"
"""How Claude Code introduces a skill's SKILL.md once the model has loaded the skill."""

_CONTEXT = 16
"""Characters of unchanged text shown before a difference."""
_CHANGED = 40
"""Characters of changed text shown at most."""
_AFTER = 8
"""Characters of unchanged text shown after a difference."""


@dataclass(frozen=True)
class Miss:
    """A request the cassette does not hold, with the explanation a person reads."""

    cassette: Path
    """The cassette that was asked."""
    rep: int
    """The repetition replayed."""
    step: int
    """0-based order of the request within the repetition and channel."""
    channel: str
    """``model`` or ``mcp:<server>``."""
    message: str
    """Starts ``replay miss: ``; names the cassette, the step, the nearest recorded request and
    the fields that differ."""

    def __str__(self) -> str:
        return self.message


def _where(cassette: Path, rep: int, step: int, channel: str) -> str:
    on = "" if channel == "model" else f" ({channel})"
    return f"{MISS_PREFIX}{cassette}, repetition {rep}, step {step}{on}"


def missing_cassette(path: Path, rep: int = 0, *, step: int = 0, channel: str = "model") -> Miss:
    """The miss of a run whose cassette does not exist."""
    message = (
        f"{_where(path, rep, step, channel)}: no cassette was recorded for this scenario and arm"
    )
    return Miss(cassette=path, rep=rep, step=step, channel=channel, message=message)


def other_agent(path: Path, rep: int, recorded: str, now: str) -> Miss:
    """The miss of a run whose cassette holds another agent's runs: the agents send other
    requests for the same scenario and arm, so none of its requests could match."""
    message = (
        f"{_where(path, rep, 0, 'model')}: the cassette holds runs of {recorded}, and this run "
        f"is {now}'s: record each agent into a folder of its own (--record DIR)"
    )
    return Miss(cassette=path, rep=rep, step=0, channel="model", message=message)


class Player:
    """Serves one repetition of one cassette, in order, channel by channel.

    Safe to call from several threads (a proxy answers concurrent requests).
    """

    def __init__(self, cassette: Cassette, rep: int, *, rules: Sequence[str] | None = None) -> None:
        """
        Args:
            cassette: The cassette to replay.
            rep: The repetition to serve.
            rules: The normalisation rules in force now
                (:func:`~skilltest.replay.normalise.rules_in_force`); when they are not the
                ones the cassette was recorded under, each miss says so.
        """
        self.cassette = cassette
        self.rep = rep
        self._recorded = cassette.repetitions.get(rep)
        self._channels: dict[str, list[Exchange]] = {}
        for exchange in self._recorded or []:
            self._channels.setdefault(exchange.channel, []).append(exchange)
        self._served: set[int] = set()
        self._steps: dict[str, int] = {}
        self._lock = threading.Lock()
        self._note = _rules_note(cassette.rules, rules)
        self.misses: list[Miss] = []
        """Every miss so far, in order."""

    def answer(self, channel: str, normalised: Mapping[str, Any]) -> Exchange | Miss:
        """The recorded exchange for this request, or a miss that explains itself.

        The first exchange of the repetition and channel, not yet served, whose fingerprint
        equals the request's; else a :class:`Miss` naming the nearest recorded request (the one
        not yet served at the same step, or the most similar by number of differing fields).
        """
        wanted = fingerprint(normalised)
        with self._lock:
            step = self._steps.get(channel, 0)
            self._steps[channel] = step + 1
            recorded = self._channels.get(channel, [])
            for exchange in recorded:
                if id(exchange) not in self._served and exchange.fingerprint == wanted:
                    self._served.add(id(exchange))
                    return exchange
            miss = self._miss(channel, step, wanted, normalised, recorded)
            self.misses.append(miss)
            return miss

    def unserved(self) -> list[Exchange]:
        """The recorded exchanges no request asked for (a run that ended earlier than
        recorded)."""
        with self._lock:
            return [e for e in self._recorded or [] if id(e) not in self._served]

    def _miss(
        self,
        channel: str,
        step: int,
        wanted: str,
        normalised: Mapping[str, Any],
        recorded: list[Exchange],
    ) -> Miss:
        where = _where(self.cassette.path, self.rep, step, channel)
        if self._recorded is None:
            held = _ranges(sorted(self.cassette.repetitions))
            reason = (
                f"repetition {self.rep} was not recorded (the cassette holds "
                + (f"repetition{'s' if len(self.cassette.repetitions) > 1 else ''} {held})")
                if held
                else "no repetition)"
            )
        elif not recorded:
            reason = f"nothing was recorded on the channel {channel}"
        else:
            reason = self._nearest(step, wanted, normalised, recorded)
        message = f"{where}: {reason}{self._note}"
        return Miss(
            cassette=self.cassette.path, rep=self.rep, step=step, channel=channel, message=message
        )

    def _nearest(
        self, step: int, wanted: str, normalised: Mapping[str, Any], recorded: list[Exchange]
    ) -> str:
        same = [e for e in recorded if e.fingerprint == wanted]
        if same:  # every copy already served: the run sent this request more often
            return (
                f"this request was recorded {_times(len(same))} and already served "
                f"(recorded at step {', '.join(str(e.step) for e in same)}); "
                "the run sent it once more"
            )
        unserved = [e for e in recorded if id(e) not in self._served]
        at_step = [e for e in unserved if e.step == step]
        if at_step:
            nearest, served_note = at_step[0], ""
        else:
            pool = unserved or recorded
            nearest = min(pool, key=lambda e: (_count_differences(e.request, normalised), e.step))
            served_note = "" if unserved else f" (all {len(recorded)} recorded requests served)"
        lines = diff(nearest.request, normalised)
        head = f"no recorded request matches{served_note}; nearest is step {nearest.step}:"
        return "\n  ".join([head, *lines])


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


def _ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2, 5``."""
    parts: list[str] = []
    start = previous = None
    for number in [*numbers, None]:
        if start is not None and (number is None or number != previous + 1):  # type: ignore[operator]
            parts.append(str(start) if start == previous else f"{start}-{previous}")
            start = None
        if number is not None and start is None:
            start = number
        previous = number
    return ", ".join(parts)


def rule_changes(recorded: Sequence[str], now: Sequence[str]) -> list[str]:
    """How the rules ``now`` differ from the ``recorded`` ones: ``now also ...``, ``no longer
    ...``; empty when they hold the same rules (perhaps in another order)."""
    added = [rule for rule in now if rule not in recorded]
    removed = [rule for rule in recorded if rule not in now]
    changes = []
    if added:
        changes.append(f"now also {', '.join(added)}")
    if removed:
        changes.append(f"no longer {', '.join(removed)}")
    return changes


def _rules_note(recorded: Sequence[str], now: Sequence[str] | None) -> str:
    if now is None or list(recorded) == list(now):
        return ""
    changes = rule_changes(recorded, now)
    return (
        "\n  note: the cassette was recorded under other normalisation rules"
        + (f" ({'; '.join(changes)})" if changes else " (in another order)")
        + ": re-record it"
    )


# --- differences ------------------------------------------------------------------------------

_ABSENT = object()


def _leaves(recorded: Any, now: Any, parts: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The places where two JSON values differ, in document order, as pointer parts (a
    value of another type, or present on one side only, is one place)."""
    if isinstance(recorded, dict) and isinstance(now, dict):
        for key in [*recorded, *(k for k in now if k not in recorded)]:
            yield from _leaves(recorded.get(key, _ABSENT), now.get(key, _ABSENT), (*parts, key))
    elif isinstance(recorded, list) and isinstance(now, list):
        for index in range(max(len(recorded), len(now))):
            a = recorded[index] if index < len(recorded) else _ABSENT
            b = now[index] if index < len(now) else _ABSENT
            yield from _leaves(a, b, (*parts, index))
    elif recorded is not now and (type(recorded) is not type(now) or recorded != now):
        yield parts


def _count_differences(recorded: Any, now: Any) -> int:
    return sum(1 for _ in _leaves(recorded, now))


def _at(document: Any, parts: Sequence[Any]) -> Any:
    for part in parts:
        found = (isinstance(document, dict) and part in document) or (
            isinstance(document, list) and isinstance(part, int) and part < len(document)
        )
        if found:
            document = document[part]
        else:
            return _ABSENT
    return document


def _pointer(parts: Sequence[Any]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def diff(recorded: Any, now: Any, *, limit: int = 5) -> list[str]:
    """How a request differs from a recorded one, one line per differing field.

    Each line reads ``/pointer: <why>: "…recorded…" -> "…now…"``; ``why`` says what changed
    where it can (``skill listing changed``, ``skill content changed``, ``system prompt
    changed``, ``tool result differs``, ``model changed``, ``tools changed``), in the Messages
    API's requests and the Responses API's alike, else ``differs``. At most ``limit`` lines,
    then one saying how many more fields differ.
    """
    places = list(_leaves(recorded, now))
    lines = []
    for parts in places[:limit]:
        a, b = _at(recorded, parts), _at(now, parts)
        before, after = _excerpts(a, b)
        why = _why(parts, recorded, now, a, b)
        lines.append(f"{_pointer(parts) or '/'}: {why}: {before} -> {after}")
    if len(places) > limit:
        more = len(places) - limit
        lines.append(f"… and {more} more field{'s' if more > 1 else ''}")
    return lines


def _why(parts: Sequence[Any], recorded: Any, now: Any, a: Any, b: Any) -> str:
    head = parts[0] if parts else None
    if head == "model":
        return "model changed"
    if head == "tools":
        return "tools changed"
    if isinstance(a, str) or isinstance(b, str):
        start = _common_prefix(a, b) if isinstance(a, str) and isinstance(b, str) else 0
        for text in (a, b):
            if isinstance(text, str) and _in_skill_listing(text, start):
                return "skill listing changed"
        for text in (a, b):
            if isinstance(text, str) and 0 <= text.find(SKILL_CONTENT) <= start:
                return "skill content changed"
    if head == "input" and len(parts) >= 2:  # a Responses request's items
        for document in (now, recorded):
            item = _at(document, parts[:2])
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                return "tool result differs"
            if isinstance(item, dict) and item.get("role") in ("system", "developer"):
                return "system prompt changed"
    if head == "messages" and len(parts) >= 2:
        for document in (now, recorded):
            block = _at(document, [*parts[:4]]) if len(parts) >= 4 else _ABSENT
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return "tool result differs"
            message = _at(document, parts[:2])
            if isinstance(message, dict) and message.get("role") == "system":
                return "system prompt changed"
    if head in ("system", "instructions"):
        return "system prompt changed"
    return "differs"


def _in_skill_listing(text: str, position: int) -> bool:
    """Whether ``position`` lies in an agent's skill listing within ``text``: Claude Code's,
    from its heading to the blank line after its last ``- name: description`` line; or one of
    :data:`OTHER_SKILL_LISTINGS`, from its heading to the first of its ends."""
    start = text.find(SKILL_LISTING)
    if 0 <= start <= position:
        first_item = text.find("\n- ", start)
        end = text.find("\n\n", first_item + 1) if first_item >= 0 else -1
        if position <= (end if end >= 0 else len(text)):
            return True
    for heading, ends in OTHER_SKILL_LISTINGS:
        start = text.find(heading)
        if 0 <= start <= position:
            found = [i for i in (text.find(e, start + len(heading)) for e in ends) if i >= 0]
            if position <= min(found, default=len(text)):
                return True
    return False


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    index = 0
    while index < limit and a[index] == b[index]:
        index += 1
    return index


def _excerpts(a: Any, b: Any) -> tuple[str, str]:
    """Short texts of the two sides around where they differ."""
    if not (isinstance(a, str) and isinstance(b, str)):
        return _shown(a), _shown(b)
    prefix = _common_prefix(a, b)
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    return _excerpt(a, prefix, len(a) - suffix), _excerpt(b, prefix, len(b) - suffix)


def _excerpt(text: str, start: int, end: int) -> str:
    """``text[start:end]`` (cut to :data:`_CHANGED`) with a little context, quoted on one
    line, ``…`` where text was left out."""
    left = max(0, start - _CONTEXT)
    if left > 0:  # begin at a word where one begins close by
        space = text.find(" ", left, start)
        if 0 <= space < left + _CONTEXT // 2:
            left = space + 1
    changed = text[start:end]
    cut = len(changed) > _CHANGED
    if cut:
        changed = changed[:_CHANGED]
        right = end
    else:
        right = min(len(text), end + _AFTER)
        space = text.rfind(" ", end, right)
        if right < len(text) and space > end:
            right = space
    body = text[left:start] + changed + ("" if cut else text[end:right])
    inner = json.dumps(body, ensure_ascii=False)[1:-1]
    opening = "…" if left > 0 else ""
    closing = "…" if cut or right < len(text) else ""
    return f'"{opening}{inner}{closing}"'


def _shown(value: Any) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = canonical_json(value)
    return text if len(text) <= _CHANGED + _CONTEXT else text[: _CHANGED + _CONTEXT] + "…"
