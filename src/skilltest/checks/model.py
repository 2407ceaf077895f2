"""The kinds of outcome check, read from a suite, and what one check found in one run.

A suite writes each check as a one-key mapping, the key naming the kind::

    checks:
      - file_exists: {path: NOTES.md}                      # exists: false for "must not exist"
      - file_matches: {path: NOTES.md, pattern: "^## Summary", match: contains}
      - files_match: {pattern: "TODO", match: not_contains}  # the files the run created or changed
      - command: {run: "python -m pytest -q", exit_code: 0, timeout_s: 60}
      - final_answer: {pattern: "(?i)wrote NOTES\\.md"}    # the answer the user saw
      - trace_matches: {pattern: "pytest", match: "count:2"}   # the run's tool calls and text
      - mock_calls_match: {pattern: "get_forecast"}         # calls the run made to MCP mocks
      - tool_used: {tool: Bash, input_match: "pytest", min: 1, max: 3}
      - tool_order: {before: Read, after: {tool: Edit, input_match: "NOTES"}}
      - judge: {criteria: "The summary names the failing service.", votes: 3, focus: last_message}

Every entry may also carry ``veto: true`` (a run that fails it scores 0 and fails), ``weight``
(> 0, default 1: its share of the ``checks`` component), ``arm: with`` (evaluated for the arms
that have the skill only; ``both``, the default, for every arm), ``scored: false`` (shown with
the run, left out of its score: an indicator) and ``name`` (how reports show it). ``match`` is
``contains`` (default), ``not_contains`` or ``count:N`` (exactly N matches). Paths are relative
to the run's working directory and never leave it.

``dialect: plugin_eval`` reads the run as Claude Code's ``claude plugin eval`` grades it (the
graders of an eval case are checks of this dialect; :mod:`skilltest.checks.plugin_eval`):
patterns are JavaScript regular expressions with ``flags`` (letters of ``dgimsuvy``), the trace
is the run's stream-json events, tool checks count every call the model wrote by its exact name,
``file_exists`` paths are globs over the files the run created, ``files_match`` reads the list of
those paths, and a judge votes three times with the CLI's prompt (``baseline_file``: a trace the
run is compared with).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Literal

from skilltest.errors import SuiteError
from skilltest.patterns import Pattern, compile_pattern
from skilltest.suite.repository import Repository, repository_of

CheckArm = Literal["both", "with"]
"""Which arms a check is evaluated for: every arm, or only the arms that have the skill."""

Dialect = Literal["skilltest", "plugin_eval"]
"""How a check reads the run: skilltest's way, or as Claude Code's plugin eval grades it."""

PLUGIN_EVAL_KINDS = frozenset(
    {
        "file_exists",
        "file_matches",
        "files_match",
        "final_answer",
        "trace_matches",
        "mock_calls_match",
        "tool_used",
        "tool_order",
        "judge",
    }
)
"""The kinds a plugin eval grader maps onto (``command`` has no such grader)."""

FOCUSES: tuple[str, ...] = ("last_message", "trace", "files", "mock_calls")
"""What a judge reads, besides one file (``{file: PATH}``)."""

DEFAULT_VOTES = 3
"""A judge's independent calls when the check does not say."""

DEFAULT_COMMAND_TIMEOUT_S = 60.0
"""A command check's time limit when the check does not say."""


@dataclass(frozen=True)
class Match:
    """How the number of a pattern's matches decides: ``contains`` (at least one),
    ``not_contains`` (none) or ``count:N`` (exactly N)."""

    mode: Literal["contains", "not_contains", "count"] = "contains"
    """The mode."""
    count: int = 0
    """N, for ``count:N``."""

    @classmethod
    def parse(cls, text: object, where: str) -> Match:
        """``contains``, ``not_contains`` or ``count:N``.

        Raises:
            SuiteError: anything else.
        """
        if text in (None, "contains"):
            return cls("contains")
        if text == "not_contains":
            return cls("not_contains")
        if isinstance(text, str) and text.startswith("count:") and text[6:].isdigit():
            return cls("count", int(text[6:]))
        raise SuiteError(
            f"{text!r} is not a match mode",
            location=f"{where}/match",
            fix="write contains, not_contains or count:N (exactly N matches, e.g. count:0)",
        )

    def decides(self, found: int) -> bool:
        """Whether ``found`` matches meet the mode."""
        if self.mode == "contains":
            return found > 0
        if self.mode == "not_contains":
            return found == 0
        return found == self.count

    def __str__(self) -> str:
        return f"count:{self.count}" if self.mode == "count" else self.mode


@dataclass(frozen=True)
class ToolRef:
    """A tool a ``tool_order`` check names: by name, with a pattern on its input."""

    tool: str
    """The tool (``Task`` and ``Agent`` are one, ``mcp__srv__tool`` answers to ``tool``)."""
    input_match: Pattern | None = None
    """A pattern the call's input (as JSON) must match."""

    def __str__(self) -> str:
        return self.tool if self.input_match is None else f"{self.tool}({self.input_match.source})"


@dataclass(frozen=True, kw_only=True)
class Check:
    """What every check has; each kind adds its own fields."""

    name: str
    """How reports show it (``file_matches NOTES.md`` unless the suite names it)."""
    location: str
    """``suite.yaml#/scenarios/0/checks/2``, for messages."""
    veto: bool = False
    """A run that fails this check scores 0 and fails."""
    weight: float = 1.0
    """Its share of the ``checks`` component, against the other checks of the run."""
    arm: CheckArm = "both"
    """``with``: evaluated for the arms that have the skill only."""
    scored: bool = True
    """``False``: shown with the run but left out of its score (an indicator, as a plugin eval
    case's ``arm: with-only`` graders are when the arms are compared)."""
    dialect: Dialect = "skilltest"
    """``plugin_eval``: the run is read as Claude Code's plugin eval grades it."""

    kind: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        """How a results file lists the check."""
        data: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "veto": self.veto,
            "weight": self.weight,
        }
        if not self.scored:
            data["scored"] = False
        if self.dialect != "skilltest":
            data["dialect"] = self.dialect
        return data


@dataclass(frozen=True, kw_only=True)
class FileExists(Check):
    """A file (or folder) is in the workspace after the run, or is not."""

    path: str
    """Relative to the working directory."""
    exists: bool = True
    """``False``: it must not exist."""
    kind: ClassVar[str] = "file_exists"


@dataclass(frozen=True, kw_only=True)
class FileMatches(Check):
    """A file's text, after the run, matches a pattern as ``match`` says; a missing file fails
    whatever the mode."""

    path: str
    """Relative to the working directory."""
    pattern: Pattern
    """Searched in the file's text."""
    match: Match = field(default_factory=Match)
    """How many matches pass."""
    kind: ClassVar[str] = "file_matches"


@dataclass(frozen=True, kw_only=True)
class PatternCheck(Check):
    """A pattern over some text of the run (the kind says which)."""

    pattern: Pattern
    """Searched in the text."""
    match: Match = field(default_factory=Match)
    """How many matches pass."""


@dataclass(frozen=True, kw_only=True)
class FilesMatch(PatternCheck):
    """Every file the run created or changed, each as ``path`` and its text."""

    kind: ClassVar[str] = "files_match"


@dataclass(frozen=True, kw_only=True)
class FinalAnswer(PatternCheck):
    """The answer the user saw: the main agent's last text (a subagent's never counts)."""

    kind: ClassVar[str] = "final_answer"


@dataclass(frozen=True, kw_only=True)
class TraceMatches(PatternCheck):
    """The run's trace: each tool call (name and input as JSON) and its result, and the main
    agent's text, in order."""

    kind: ClassVar[str] = "trace_matches"


@dataclass(frozen=True, kw_only=True)
class MockCallsMatch(PatternCheck):
    """The calls the run made to mocked MCP tools, one JSON object a line."""

    kind: ClassVar[str] = "mock_calls_match"


@dataclass(frozen=True, kw_only=True)
class Command(Check):
    """A command run after the agent ended, in the workspace, with the run's environment and a
    time limit; it passes when it exits with ``exit_code``."""

    run: str
    """A shell command (``bash -c``)."""
    exit_code: int = 0
    """The exit status that passes."""
    timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S
    """Seconds it may take; a command still running then fails (and is killed)."""
    kind: ClassVar[str] = "command"


@dataclass(frozen=True, kw_only=True)
class PythonAssertion(Check):
    """A Python expression about the finished run (:mod:`skilltest.checks.assertion`: the final
    answer, tool calls, transcript, errors, duration), evaluated in its own process in the
    workspace with a time limit; it passes when true. What waza's ``code`` grader runs."""

    expression: str
    """The expression, e.g. ``len(output) > 0``."""
    timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S
    """Seconds it may take; one still running then fails (and is killed)."""
    kind: ClassVar[str] = "python_assertion"


@dataclass(frozen=True, kw_only=True)
class ToolUsed(Check):
    """How many calls of a tool ran (refused calls never count): at least ``min``, at most
    ``max``."""

    tool: str
    """The tool."""
    input_match: Pattern | None = None
    """A pattern the call's input (as JSON) must match for the call to count."""
    min: int = 1
    """The fewest calls that pass."""
    max: int | None = None
    """The most calls that pass (``None``: no bound)."""
    kind: ClassVar[str] = "tool_used"


@dataclass(frozen=True, kw_only=True)
class ToolOrder(Check):
    """The first call of ``before`` comes before the first call of ``after``."""

    before: ToolRef
    """The tool that must come first."""
    after: ToolRef
    """The tool that must come after it."""
    kind: ClassVar[str] = "tool_order"


@dataclass(frozen=True, kw_only=True)
class Judge(Check):
    """A model grades the run against ``criteria``: ``votes`` independent calls, the majority
    deciding; it never sees which arm the run belongs to."""

    criteria: str
    """What the run must show, as checkable claims."""
    focus: str = "last_message"
    """What the judge reads: ``last_message``, ``trace``, ``files``, ``mock_calls`` or
    ``file`` (then :attr:`focus_path`)."""
    focus_path: str | None = None
    """The file the judge reads when ``focus`` is ``file``."""
    votes: int = DEFAULT_VOTES
    """Independent calls; the majority of the votes cast decides."""
    baseline: str | None = None
    """A reference text the judge compares the run with."""
    baseline_trace: tuple[Any, ...] | None = None
    """A trace (stream-json events) the run's trace is compared with: plugin eval's
    ``baseline`` grader (``baseline_file``, read when the suite is loaded)."""
    kind: ClassVar[str] = "judge"


KINDS: dict[str, type[Check]] = {
    kind.kind: kind
    for kind in (
        FileExists,
        FileMatches,
        FilesMatch,
        Command,
        PythonAssertion,
        FinalAnswer,
        TraceMatches,
        MockCallsMatch,
        ToolUsed,
        ToolOrder,
        Judge,
    )
}
"""Every kind of check by the key a suite writes it under."""


_MATCHED = {
    "files_match": "the files the run created or changed",
    "final_answer": "the final answer",
    "trace_matches": "the run's tool calls and text",
    "mock_calls_match": "the calls to MCP mocks",
}


def _matching(text: str, pattern: Pattern, match: Match) -> str:
    if match.mode == "contains":
        return f"{text} matches {pattern.source}"
    if match.mode == "not_contains":
        return f"{text} does not match {pattern.source}"
    return f"{text} matches {pattern.source} exactly {match.count} time(s)"


def describe(check: Check) -> str:
    """What a check asks, in one line, as reports show it beside the check's name."""
    if isinstance(check, FileExists):
        return f"{check.path} exists" if check.exists else f"{check.path} does not exist"
    if isinstance(check, FileMatches):
        return _matching(check.path, check.pattern, check.match)
    if isinstance(check, PatternCheck):
        return _matching(_MATCHED.get(check.kind, check.kind), check.pattern, check.match)
    if isinstance(check, Command):
        return f"{check.run} exits with {check.exit_code} within {check.timeout_s:g} s"
    if isinstance(check, PythonAssertion):
        return f"{check.expression} is true (Python, within {check.timeout_s:g} s)"
    if isinstance(check, ToolUsed):
        times = f"{check.min}-{check.max}" if check.max is not None else f"at least {check.min}"
        where = f" with input matching {check.input_match.source}" if check.input_match else ""
        return f"{check.tool} called {times} time(s){where}"
    if isinstance(check, ToolOrder):
        return f"{check.before} before {check.after}"
    if isinstance(check, Judge):
        focus = check.focus_path if check.focus == "file" and check.focus_path else check.focus
        return f"a judge model ({check.votes} votes, reading {focus}): {check.criteria}"
    return check.name


@dataclass(frozen=True)
class Vote:
    """One judge call's answer."""

    verdict: Literal["pass", "fail"] | None
    """``None``: the answer said neither (or the call failed), so it is no vote."""
    reason: str
    """The judge's reason, or why there is no vote."""


@dataclass(frozen=True)
class CheckResult:
    """What one check found in one run."""

    name: str
    """The check's name."""
    kind: str
    """Its kind."""
    passed: bool
    """Whether the run met it."""
    evidence: str
    """What decided it: the text around a match, a count, an exit status and output, votes."""
    veto: bool = False
    """The check vetoes: failing it zeroes the run."""
    weight: float = 1.0
    """Its share of the ``checks`` component."""
    error: str | None = None
    """Why it could not be evaluated (a judge whose every call failed): the run is then
    unscored, as for an API outage; ``None`` when it was evaluated."""
    votes: tuple[Vote, ...] = ()
    """A judge's votes, in order."""
    tokens: dict[str, int] | None = None
    """A judge's tokens, apart from the agent's."""
    cost_usd: float | None = None
    """A judge's cost, when the API reported one."""
    scored: bool = True
    """``False``: an indicator, shown but left out of the run's score."""

    @property
    def vetoed(self) -> bool:
        """This check failed and vetoes the run."""
        return self.veto and not self.passed and self.error is None and self.scored

    def to_dict(self) -> dict[str, Any]:
        """How a results file and a trace give it."""
        data: dict[str, Any] = {
            "name": self.name,
            "kind": self.kind,
            "passed": self.passed,
            "evidence": self.evidence,
            "veto": self.veto,
            "weight": self.weight,
        }
        if not self.scored:
            data["scored"] = False
        if self.error is not None:
            data["error"] = self.error
        if self.votes:
            data["votes"] = [{"verdict": v.verdict, "reason": v.reason} for v in self.votes]
            data["tokens"] = self.tokens
            data["cost_usd"] = self.cost_usd
        return data


# --- reading a suite ---------------------------------------------------------------------------


def parse_checks(
    entries: Any,
    where: str,
    *,
    flags: int = 0,
    timeout_s: float = 1.0,
    base: Path | None = None,
    repository: Repository | None = None,
) -> tuple[Check, ...]:
    """A suite's ``checks:`` list, typed.

    Args:
        entries: The parsed list (``None`` for none).
        where: Where it is (``suite.yaml#/scenarios/0/checks``).
        flags: The suite's pattern flags.
        timeout_s: The suite's pattern time limit.
        base: The folder files a check names are relative to (a judge's ``baseline_file``;
            default: the current folder).
        repository: Where such a file must lie: the suite's repository (default: the
            repository of ``base``, :func:`skilltest.suite.repository.repository_of`).

    Raises:
        SuiteError: an entry that is not a one-key mapping of a known kind, a missing or
            unknown field, a path that leaves the working directory, a bad pattern.
    """
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise SuiteError(
            "checks must be a list",
            location=where,
            fix="write checks: [{file_exists: {path: NOTES.md}}, ...]",
        )
    checks = [
        _parse_one(
            entry,
            f"{where}/{index}",
            flags=flags,
            timeout_s=timeout_s,
            base=base,
            repository=repository,
        )
        for index, entry in enumerate(entries)
    ]
    seen: dict[str, str] = {}
    for check in checks:
        if check.name in seen:
            raise SuiteError(
                f"two checks are named {check.name!r} (the other at {seen[check.name]})",
                location=check.location,
                fix="give one of them its own name: (name: ...)",
            )
        seen[check.name] = check.location
    return tuple(checks)


_COMMON = ("veto", "weight", "arm", "name", "scored", "dialect")
_PATTERN_KINDS = frozenset(
    {"file_matches", "files_match", "final_answer", "trace_matches", "mock_calls_match"}
)


def _parse_one(
    entry: Any,
    where: str,
    *,
    flags: int,
    timeout_s: float,
    base: Path | None,
    repository: Repository | None,
) -> Check:
    if not isinstance(entry, dict) or len(entry) != 1:
        raise SuiteError(
            "a check is a mapping with one key, its kind",
            location=where,
            fix="write e.g. - file_exists: {path: NOTES.md}; kinds: " + ", ".join(KINDS),
        )
    [(kind, spec)] = entry.items()
    if kind not in KINDS:
        raise SuiteError(
            f"unknown check {kind!r}",
            location=f"{where}/{kind}",
            fix="one of: " + ", ".join(KINDS),
        )
    where = f"{where}/{kind}"
    if not isinstance(spec, dict):
        raise SuiteError(
            f"the {kind} check needs a mapping of its fields",
            location=where,
            fix=f"write {kind}: {{...}} (docs/scenarios.md lists each kind's fields)",
        )
    reader = _Reader(kind, spec, where, flags, timeout_s)
    common = reader.common()
    plugin_eval = reader.dialect == "plugin_eval"
    check: Check
    if kind == "file_exists":
        path = reader.path()
        exists = reader.boolean("exists", True)
        check = FileExists(path=path, exists=exists, **common(f"{kind} {path}"))
    elif kind == "file_matches":
        path = reader.path()
        check = FileMatches(
            path=path, pattern=reader.pattern(), match=reader.match(), **common(f"{kind} {path}")
        )
    elif kind in ("files_match", "final_answer", "trace_matches", "mock_calls_match"):
        pattern, match = reader.pattern(), reader.match()
        label = f"{kind} {pattern.source!r}" + ("" if match.mode == "contains" else f" {match}")
        kinds: dict[str, type[PatternCheck]] = {
            "files_match": FilesMatch,
            "final_answer": FinalAnswer,
            "trace_matches": TraceMatches,
            "mock_calls_match": MockCallsMatch,
        }
        check = kinds[kind](pattern=pattern, match=match, **common(label))
    elif kind == "command":
        if plugin_eval:
            raise reader._fail(
                "dialect",
                "a command check has no plugin_eval dialect",
                "leave dialect out of the command check",
            )
        run = reader.text("run")
        check = Command(
            run=run,
            exit_code=reader.integer("exit_code", 0, low=0, high=255),
            timeout_s=reader.number("timeout_s", DEFAULT_COMMAND_TIMEOUT_S),
            **common(f"{kind} {run}"),
        )
    elif kind == "python_assertion":
        if plugin_eval:
            raise reader._fail(
                "dialect",
                "a python_assertion check has no plugin_eval dialect",
                "leave dialect out of the python_assertion check",
            )
        expression = reader.text("expression")
        try:
            compile(expression, "<assertion>", "eval")
        except SyntaxError as exc:
            raise reader._fail(
                "expression",
                f"{expression!r} is not a Python expression: {exc.msg}",
                "write one expression, e.g. len(output) > 0",
            ) from exc
        check = PythonAssertion(
            expression=expression,
            timeout_s=reader.number("timeout_s", DEFAULT_COMMAND_TIMEOUT_S),
            **common(f"{kind} {expression}"),
        )
    elif kind == "tool_used":
        tool = reader.text("tool")
        low = reader.integer("min", 1, low=0)
        high = reader.optional_integer("max")
        if high is not None and high < low:
            raise SuiteError(
                f"max {high} is below min {low}",
                location=f"{where}/max",
                fix="give max at least min",
            )
        check = ToolUsed(
            tool=tool,
            input_match=reader.optional_pattern("input_match"),
            min=low,
            max=high,
            **common(f"{kind} {tool}"),
        )
    elif kind == "tool_order":
        before, after = reader.tool_ref("before"), reader.tool_ref("after")
        check = ToolOrder(before=before, after=after, **common(f"{kind} {before} < {after}"))
    else:
        criteria = reader.text("criteria")
        focus, focus_path = reader.focus()
        check = Judge(
            criteria=criteria,
            focus=focus,
            focus_path=focus_path,
            votes=reader.integer("votes", DEFAULT_VOTES, low=1, high=15),
            baseline=reader.optional_text("baseline"),
            baseline_trace=(
                reader.trace_file("baseline_file", base, repository) if plugin_eval else None
            ),
            **common(f"judge {criteria[:48]}" + ("…" if len(criteria) > 48 else "")),
        )
    reader.done()
    return check


class _Reader:
    """Reads one check's fields, each with its place in errors, and refuses unknown ones."""

    def __init__(
        self, kind: str, spec: dict[str, Any], where: str, flags: int, timeout_s: float
    ) -> None:
        self.kind, self.spec, self.where = kind, spec, where
        self.flags, self.timeout_s = flags, timeout_s
        self.used: set[str] = set()
        dialect = spec.get("dialect") or "skilltest"
        if dialect not in ("skilltest", "plugin_eval"):
            raise self._fail(
                "dialect",
                f"{dialect!r} is not a dialect",
                "write dialect: plugin_eval, or leave it out",
            )
        self.dialect: Dialect = "plugin_eval" if dialect == "plugin_eval" else "skilltest"

    def _get(self, key: str) -> Any:
        self.used.add(key)
        return self.spec.get(key)

    def _fail(self, key: str, message: str, fix: str) -> SuiteError:
        return SuiteError(message, location=f"{self.where}/{key}", fix=fix)

    def common(self) -> Any:
        veto = self.boolean("veto", False)
        weight = self.number("weight", 1.0)
        arm = self._get("arm") or "both"
        if arm not in ("both", "with"):
            raise self._fail("arm", f"{arm!r} is not an arm", "write arm: with or arm: both")
        name = self.optional_text("name")
        scored = self.boolean("scored", True)

        def fields(default_name: str) -> dict[str, Any]:
            return {
                "name": name or default_name,
                "location": self.where,
                "veto": veto,
                "weight": weight,
                "arm": arm,
                "scored": scored,
                "dialect": self.dialect,
            }

        return fields

    def text(self, key: str) -> str:
        value = self._get(key)
        if not isinstance(value, str) or not value.strip():
            raise self._fail(
                key, f"the {self.kind} check needs {key} (a non-empty string)", f"add {key}: ..."
            )
        return value

    def optional_text(self, key: str) -> str | None:
        value = self._get(key)
        if value is not None and not isinstance(value, str):
            raise self._fail(key, f"{key} must be a string", f'quote it: {key}: "..."')
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self._get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._fail(key, f"{value!r} is not true or false", f"write {key}: true")
        return value

    def number(self, key: str, default: float) -> float:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._fail(key, f"{value!r} is not a number", f"write {key}: 1")
        if not math.isfinite(value) or value <= 0:
            raise self._fail(key, f"{key} must be above 0, got {value!r}", f"write {key}: 1")
        return float(value)

    def integer(self, key: str, default: int, *, low: int, high: int | None = None) -> int:
        value = self._get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            bound = f"from {low}" + (f" to {high}" if high is not None else "")
            raise self._fail(key, f"{value!r} is not a whole number {bound}", f"write {key}: {low}")
        if high is not None and value > high:
            raise self._fail(key, f"{key} is at most {high}, got {value}", f"write {key}: {high}")
        return value

    def optional_integer(self, key: str) -> int | None:
        return None if self.spec.get(key) is None else self.integer(key, 0, low=0)

    def path(self, key: str = "path") -> str:
        text = self.text(key)
        pure = PurePosixPath(text)
        if pure.is_absolute() or ".." in pure.parts:
            raise self._fail(
                key,
                f"{text!r} leaves the run's working directory",
                "give a path relative to the working directory, without ..",
            )
        return text

    def pattern(self, key: str = "pattern") -> Pattern:
        if self.dialect == "plugin_eval":
            from skilltest.javascript import compile_js_pattern, parse_js_flags

            # The grader's JavaScript flags; an input_match has none (the CLI gives it none).
            flags = parse_js_flags(self._get("flags") or "", f"{self.where}/flags")
            return compile_js_pattern(
                self.text(key),
                flags if key == "pattern" else "",
                f"{self.where}/{key}",
                timeout_s=self.timeout_s,
            )
        return compile_pattern(
            self.text(key), f"{self.where}/{key}", flags=self.flags, timeout_s=self.timeout_s
        )

    def trace_file(
        self, key: str, base: Path | None, repository: Repository | None
    ) -> tuple[Any, ...] | None:
        """A trace file (one JSON event a line) the check names, read now; it must lie in the
        suite's repository."""
        if self.spec.get(key) is None:
            return None
        name = self.text(key)
        folder = base or Path()
        repository = repository or repository_of(folder)
        path = folder / name
        resolved = repository.inside(path, written=name, location=f"{self.where}/{key}")
        from skilltest.checks.plugin_eval import read_trajectory

        try:
            return tuple(read_trajectory(resolved.read_text(encoding="utf-8")))
        except OSError as exc:
            raise self._fail(
                key, f"cannot read {path}: {exc.strerror or exc}", "give a file that exists"
            ) from exc
        except ValueError as exc:
            raise self._fail(
                key,
                f"{path} is not one JSON value a line: {exc}",
                "save a run's trace (stream-json events), one a line",
            ) from exc

    def optional_pattern(self, key: str) -> Pattern | None:
        return None if self.spec.get(key) is None else self.pattern(key)

    def match(self) -> Match:
        return Match.parse(self._get("match"), self.where)

    def tool_ref(self, key: str) -> ToolRef:
        value = self._get(key)
        if isinstance(value, str) and value.strip():
            return ToolRef(value)
        if isinstance(value, dict) and isinstance(value.get("tool"), str) and value["tool"]:
            unknown = sorted(set(value) - {"tool", "input_match"})
            if not unknown:
                pattern = value.get("input_match")
                return ToolRef(
                    value["tool"],
                    None
                    if pattern is None
                    else self._input_match(str(pattern), f"{self.where}/{key}/input_match"),
                )
        raise self._fail(
            key,
            f"{key} must be a tool name or {{tool, input_match}}",
            f"write {key}: Bash, or {key}: {{tool: Bash, input_match: pytest}}",
        )

    def _input_match(self, pattern: str, where: str) -> Pattern:
        if self.dialect == "plugin_eval":
            from skilltest.javascript import compile_js_pattern

            return compile_js_pattern(pattern, "", where, timeout_s=self.timeout_s)
        return compile_pattern(pattern, where, flags=self.flags, timeout_s=self.timeout_s)

    def focus(self) -> tuple[str, str | None]:
        value = self._get("focus")
        if value is None:
            return "last_message", None
        if value in FOCUSES:
            return str(value), None
        if isinstance(value, dict) and set(value) == {"file"} and isinstance(value["file"], str):
            self.spec = {**self.spec, "_focus_file": value["file"]}
            return "file", self.path("_focus_file")
        raise self._fail(
            "focus",
            f"{value!r} is not something a judge reads",
            "write focus: last_message, trace, files or mock_calls, or focus: {file: PATH}",
        )

    def done(self) -> None:
        if self.dialect == "plugin_eval" and self.kind in _PATTERN_KINDS:
            self.used.add("flags")
        unknown = sorted(set(self.spec) - self.used - set(_COMMON) - {"_focus_file"})
        if unknown == ["flags"] and self.kind in _PATTERN_KINDS:
            raise self._fail(
                "flags",
                "flags are JavaScript RegExp flags, for checks of dialect plugin_eval",
                "add dialect: plugin_eval, or write the flags inline ((?i)...) and leave flags out",
            )
        if unknown:
            raise self._fail(
                unknown[0],
                f"unknown field {unknown[0]!r} of a {self.kind} check",
                "check the spelling; docs/scenarios.md lists each kind's fields",
            )
