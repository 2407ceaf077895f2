"""What a scenario expects of the world: the world keys of ``expected:``, parsed and checked once.

A scenario that runs against a world (a suite's ``world:``) may require, beside the rubric::

    expected:
      writes: ["PATCH /tickets/INC-1042"]        # every write expected, each exactly once
      forbidden: ["DELETE *", "PATCH /tickets/*"] # writes that must not happen beyond those listed
      confirm_before_write: 1                    # no write before user turn 1
      final_answer:
        must_include: ["INC-1042"]               # regexes on the last assistant text
        must_not_include: ["(?i)deleted"]
      claims:
        - {pattern: "(?i)reassigned", requires: "PATCH /tickets/*"}
      recovers: true                             # with a fault profile: the task still completes

**Writes and calls are named ``METHOD /path``**: the HTTP method in capitals, one space, the path
the fake received without its query (``PATCH /tickets/INC-1042``). A call to a mocked MCP tool is
named ``mcp SERVER/TOOL``. Entries are normalised when loaded: the method is put in capitals
(``patch`` reads ``PATCH``), ``MCP`` reads ``mcp``.

``writes``
    Exact names, no globs and no query. A write is any call that is not ``GET``, ``HEAD`` or
    ``OPTIONS`` (for MCP tools, a tool declared ``writes: true``), so a ``GET`` entry is refused:
    reads are free and never listed. An entry listed twice is expected twice (two ``POST
    /tickets`` that create two records). ``writes: []`` is a requirement of its own: the
    scenario expects no write at all. Leaving ``writes`` out expects nothing about writes: only
    ``forbidden`` and ``confirm_before_write`` then judge them.
``forbidden``
    Globs (:func:`fnmatch.fnmatchcase`: ``*`` matches any text, ``/`` included, ``?`` one
    character, ``[...]`` a set) on the name of each write: ``DELETE *`` is every delete,
    ``PATCH /tickets/*`` every patch of a ticket, ``* /tickets/INC-1050`` every write to that
    record, ``*`` every write. They judge writes only; a glob whose method is ``GET``, ``HEAD`` or
    ``OPTIONS`` could never match one and is refused. A write listed in ``writes`` is not
    forbidden as long as it happens no more often than listed.
``confirm_before_write``
    An integer N >= 0: no write before user message N, where 0 is the prompt and 1 the first
    of ``turns``. It cannot exceed the number of ``turns`` (no write could ever happen).
``final_answer``
    ``must_include`` and ``must_not_include``: regular expressions (as everywhere in a suite, the
    ``regex`` module with the suite's ``pattern_flags`` and ``match_timeout_s``) matched against
    the last assistant text of the run.
``claims``
    ``{pattern, requires}``: when ``pattern`` matches the final answer, a call whose name matches
    the glob ``requires`` must have taken effect on the fake (see :mod:`skilltest.world.score`);
    otherwise the answer claims something the world never saw. ``requires`` may name reads too
    (``GET /tickets/*`` for "I looked at the ticket").
``recovers``
    ``true`` with a fault profile (``world: {profile: NAME}``): after the injected failure the
    task still completes, without duplicate writes. Without a profile there is nothing to
    recover from, and the key is refused when the caller says so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skilltest.errors import SuiteError
from skilltest.patterns import DEFAULT_TIMEOUT_S, Pattern, compile_pattern, compile_patterns

READ_METHODS: frozenset[str] = frozenset({"GET", "HEAD", "OPTIONS"})
"""HTTP methods that never count as a write."""

MCP = "mcp"
"""The method part of an MCP tool call's name: ``mcp SERVER/TOOL``."""

WORLD_KEYS: tuple[str, ...] = (
    "writes",
    "forbidden",
    "confirm_before_write",
    "final_answer",
    "claims",
    "recovers",
)
"""The keys of ``expected:`` this module reads; the rubric reads the others."""

_NAME = re.compile(r"(?P<method>\S+) (?P<target>\S+)")
_NOT_IN_A_WRITE = frozenset("*?[#")
_METHOD = re.compile(r"[A-Za-z]+")
_METHOD_GLOB = re.compile(r"[A-Za-z*?\[\]!]+")


@dataclass(frozen=True)
class Claim:
    """A statement the final answer may make, and the call that must back it."""

    pattern: Pattern
    """Matched against the final answer; when it matches, the claim is made."""
    requires: str
    """A glob on call names (``PATCH /tickets/*``): a call it matches must have taken effect."""


@dataclass(frozen=True)
class WorldExpectations:
    """A scenario's requirements on the world; all empty when it has none."""

    writes: tuple[str, ...] = ()
    """Every write expected, each exactly once (``PATCH /tickets/INC-1042``); a name listed
    twice is expected twice."""
    forbidden: tuple[str, ...] = ()
    """Globs on write names that must not happen beyond those listed in :attr:`writes`."""
    confirm_before_write: int | None = None
    """No write before this user message (0 the prompt, 1 the first follow-up); ``None``: any
    time."""
    must_include: tuple[Pattern, ...] = ()
    """Patterns the final answer must match."""
    must_not_include: tuple[Pattern, ...] = ()
    """Patterns the final answer must not match."""
    claims: tuple[Claim, ...] = ()
    """Statements the final answer may make only when the world saw the call behind them."""
    recovers: bool = False
    """With a fault profile: the task completes after the injected failure, without duplicate
    writes."""
    lists_writes: bool = False
    """Whether the scenario lists its writes (``writes:`` given, even empty). Only then is a
    write outside the list *unexpected*; ``writes: []`` expects no write at all. Set by itself
    when :attr:`writes` is not empty."""

    def __post_init__(self) -> None:
        if self.writes and not self.lists_writes:
            object.__setattr__(self, "lists_writes", True)

    @property
    def defined(self) -> bool:
        """Whether the scenario expects anything of the world."""
        return bool(
            self.lists_writes
            or self.forbidden
            or self.confirm_before_write is not None
            or self.must_include
            or self.must_not_include
            or self.claims
            or self.recovers
        )

    @property
    def final_answer_checks(self) -> int:
        """How many final-answer checks there are (``must_include`` and ``must_not_include``)."""
        return len(self.must_include) + len(self.must_not_include)


def expectations_from(
    raw: Mapping[str, Any] | None,
    location: str,
    *,
    flags: int = 0,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    turns: int | None = None,
    has_profile: bool | None = None,
) -> WorldExpectations:
    """Reads the world keys of a scenario's ``expected:`` mapping; other keys are left alone.

    Args:
        raw: The scenario's ``expected:`` mapping (already validated by the suite schema), or
            ``None``.
        location: ``file#/scenarios/N/expected``, the pointer errors start from.
        flags: The suite's ``pattern_flags``.
        timeout_s: The suite's ``match_timeout_s``.
        turns: How many follow-up messages the scenario has; when given,
            ``confirm_before_write`` beyond it is refused.
        has_profile: Whether the scenario picks a fault profile (``world: {profile: NAME}``);
            when ``False``, ``recovers: true`` is refused. ``None``: not known here.

    Raises:
        SuiteError: a write name, glob, claim or number that cannot mean what was meant.
        PatternError: a pattern that does not compile or backtracks catastrophically.
    """
    spec: Mapping[str, Any] = raw or {}
    writes_given = spec.get("writes") is not None
    writes = tuple(
        _write_name(entry, f"{location}/writes/{index}")
        for index, entry in enumerate(_list(spec, "writes", location))
    )
    forbidden = tuple(
        _glob(entry, f"{location}/forbidden/{index}", reads_allowed=False)
        for index, entry in enumerate(_list(spec, "forbidden", location))
    )
    final = spec.get("final_answer") or {}
    if not isinstance(final, Mapping):
        raise SuiteError(
            f"final_answer must be a mapping, got {type(final).__name__}",
            location=f"{location}/final_answer",
            fix="write final_answer: {must_include: [...], must_not_include: [...]}",
        )
    return WorldExpectations(
        writes=writes,
        forbidden=forbidden,
        confirm_before_write=_confirmation(spec, location, turns),
        must_include=compile_patterns(
            final.get("must_include") or (),
            f"{location}/final_answer/must_include",
            flags=flags,
            timeout_s=timeout_s,
        ),
        must_not_include=compile_patterns(
            final.get("must_not_include") or (),
            f"{location}/final_answer/must_not_include",
            flags=flags,
            timeout_s=timeout_s,
        ),
        claims=tuple(
            _claim(entry, f"{location}/claims/{index}", flags=flags, timeout_s=timeout_s)
            for index, entry in enumerate(_list(spec, "claims", location))
        ),
        recovers=_recovers(spec, location, has_profile),
        lists_writes=writes_given,
    )


def _list(spec: Mapping[str, Any], key: str, location: str) -> list[Any]:
    value = spec.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise SuiteError(
            f"{key} must be a list, got {type(value).__name__} {value!r}",
            location=f"{location}/{key}",
            fix=f"write {key}: [...] (a YAML list)",
        )
    return value


def _split(entry: object, location: str, what: str, example: str) -> tuple[str, str]:
    """``METHOD TARGET`` of one entry, or the error that says how to write it."""
    match = _NAME.fullmatch(entry.strip()) if isinstance(entry, str) else None
    if match is None:
        raise SuiteError(
            f"{what} {entry!r} is not a method and a path separated by one space",
            location=location,
            fix=f"write it as {example} (or mcp SERVER/TOOL for a mocked MCP tool)",
        )
    return match.group("method"), match.group("target")


def _method(method: str) -> str:
    return MCP if method.lower() == MCP else method.upper()


def _write_name(entry: object, location: str) -> str:
    """One ``writes`` entry, normalised: ``patch /tickets/X`` -> ``PATCH /tickets/X``."""
    method, target = _split(entry, location, "the write", '"PATCH /tickets/INC-1042"')
    if not _METHOD.fullmatch(method):
        raise SuiteError(
            f"the write {entry!r} has no method: {method!r} is not an HTTP method",
            location=location,
            fix="writes are exact names such as POST /tickets; put globs in forbidden",
        )
    method = _method(method)
    if method in READ_METHODS:
        raise SuiteError(
            f"the write {entry!r} is a read: {method} never changes anything",
            location=location,
            fix="leave reads out of writes (an agent may read as much as it needs); list only "
            "POST, PUT, PATCH, DELETE and the like",
        )
    _check_target(str(entry), method, target, location)
    if _NOT_IN_A_WRITE & set(target):
        raise SuiteError(
            f"the write {entry!r} holds a glob or a query: writes are exact names, compared "
            "without the query",
            location=location,
            fix="name the exact path (PATCH /tickets/INC-1042); put globs in forbidden",
        )
    return f"{method} {target}"


def _glob(entry: object, location: str, *, reads_allowed: bool) -> str:
    """One glob on call names, normalised; ``*`` alone is every call."""
    if isinstance(entry, str) and entry.strip() == "*":
        return "*"
    method, target = _split(entry, location, "the glob", '"DELETE *" or "PATCH /tickets/*"')
    if not _METHOD_GLOB.fullmatch(method):
        raise SuiteError(
            f"the glob {entry!r} does not start with a method: {method!r}",
            location=location,
            fix="start with an HTTP method (DELETE, PATCH...), * for any method, or mcp",
        )
    method = _method(method)
    if not reads_allowed and method in READ_METHODS:
        raise SuiteError(
            f"the glob {entry!r} names a read: forbidden judges writes, and {method} is never one",
            location=location,
            fix="forbid writes (DELETE *, PATCH /tickets/*); reads are free",
        )
    if target[0] not in "/*?[" and method != MCP:
        _check_target(str(entry), method, target, location)
    return f"{method} {target}"


def _check_target(entry: str, method: str, target: str, location: str) -> None:
    if method == MCP:
        if "/" not in target.strip("/"):
            raise SuiteError(
                f"{entry!r} names no MCP tool: expected mcp SERVER/TOOL",
                location=location,
                fix="write the world's MCP server and tool, e.g. mcp tickets/reassign",
            )
    elif not target.startswith("/"):
        raise SuiteError(
            f"{entry!r}: the path {target!r} does not start with /",
            location=location,
            fix="write the path the service receives, without the host: PATCH /tickets/INC-1042",
        )


def _confirmation(spec: Mapping[str, Any], location: str, turns: int | None) -> int | None:
    value = spec.get("confirm_before_write")
    if value is None:
        return None
    where = f"{location}/confirm_before_write"
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SuiteError(
            f"confirm_before_write must be an integer >= 0, got {value!r}",
            location=where,
            fix="give the user message from which writes are allowed: 0 the prompt, 1 the "
            "first of turns",
        )
    if turns is not None and value > turns:
        raise SuiteError(
            f"confirm_before_write is {value} but the scenario has {turns} follow-up "
            f"message(s), so no write could ever be allowed",
            location=where,
            fix=f"add the confirmation to turns, or use a number from 0 to {turns}",
        )
    return value


def _claim(entry: object, location: str, *, flags: int, timeout_s: float) -> Claim:
    if not isinstance(entry, Mapping) or "pattern" not in entry or "requires" not in entry:
        raise SuiteError(
            f"a claim must be a mapping with pattern and requires, got {entry!r}",
            location=location,
            fix='write {pattern: "(?i)reassigned", requires: "PATCH /tickets/*"}',
        )
    return Claim(
        pattern=compile_pattern(
            entry["pattern"], f"{location}/pattern", flags=flags, timeout_s=timeout_s
        ),
        requires=_glob(entry["requires"], f"{location}/requires", reads_allowed=True),
    )


def _recovers(spec: Mapping[str, Any], location: str, has_profile: bool | None) -> bool:
    value = spec.get("recovers")
    if value is None:
        return False
    if not isinstance(value, bool):
        raise SuiteError(
            f"recovers must be true or false, got {value!r}",
            location=f"{location}/recovers",
            fix="write recovers: true",
        )
    if value and has_profile is False:
        raise SuiteError(
            "recovers: true but the scenario runs without a fault profile, so there is no "
            "failure to recover from",
            location=f"{location}/recovers",
            fix="pick one of the world's profiles for the scenario (world: {profile: NAME}), "
            "or leave recovers out",
        )
    return value
