"""What one run of one arm of one scenario produced, in the form aggregation and reports read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from skilltest.scenarios.rubric import COMPONENTS
from skilltest.transcript import AnsweredBy, ToolCall
from skilltest.transcript.origin import ScriptRule, rules_of


class Arm(StrEnum):
    """The sides of the comparison; they differ only by the installed skill.

    ``previous`` runs only with ``--against REF``: the skill as it was at REF, installed as the
    with-skill arm installs the current one; ``previous-2`` to ``previous-9`` run the second to
    the ninth REF when ``--against`` is given several times.
    """

    WITH_SKILL = "with_skill"
    WITHOUT_SKILL = "without_skill"
    PREVIOUS = "previous"
    PREVIOUS_2 = "previous-2"
    PREVIOUS_3 = "previous-3"
    PREVIOUS_4 = "previous-4"
    PREVIOUS_5 = "previous-5"
    PREVIOUS_6 = "previous-6"
    PREVIOUS_7 = "previous-7"
    PREVIOUS_8 = "previous-8"
    PREVIOUS_9 = "previous-9"

    @property
    def revision(self) -> bool:
        """Whether the arm runs the skill as it was at an ``--against`` REF."""
        return self.value.startswith("previous")

    @property
    def label(self) -> str:
        """``with-skill`` / ``without-skill``, for file names and messages."""
        return self.value.replace("_", "-")


LONG_STRING = 500
"""Tool-call arguments longer than this are shortened in results files (the raw output is kept)."""


def _shorten(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LONG_STRING:
        return value[:LONG_STRING] + f"… [{len(value) - LONG_STRING} more characters]"
    if isinstance(value, dict):
        return {key: _shorten(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shorten(item) for item in value]
    return value


def call_summary(call: ToolCall) -> dict[str, Any]:
    """One tool call as the results file lists it: ``status`` says whether it ``ran``,
    ``failed``, was ``refused`` (it never ran) or got ``no-result``."""
    return {
        "name": call.name,
        "input": _shorten(call.input),
        "is_error": call.is_error,
        "status": call.status,
        "subagent": call.parent_tool_use_id,
    }


@dataclass(frozen=True)
class RunRecord:
    """One conversation, scored (or unscored with its reason)."""

    scenario_id: str
    """The scenario."""
    skill: str
    """The skill under test."""
    arm: Arm
    """Which side of the comparison."""
    rep: int
    """Repetition number, from 0."""
    score: float | None
    """The rubric's weighted score; ``None`` for an unscored run."""
    components: dict[str, float | None] = field(default_factory=dict)
    """Each rubric component's score; ``None`` for a component the scenario leaves out."""
    tool_calls: int = 0
    """How many tool calls the agent made (subagents included)."""
    calls: tuple[dict[str, Any], ...] = ()
    """The tool calls in order: name, input (long strings shortened), error flag, subagent."""
    skills_invoked: tuple[str, ...] = ()
    """Skills the agent invoked."""
    skills_available: tuple[str, ...] = ()
    """Skills the CLI listed at startup."""
    transcript: str | None = None
    """Where the raw stream-json output is kept."""
    stderr: str | None = None
    """Where the CLI's stderr is kept."""
    error: str | None = None
    """Why the run is unscored (an infrastructure failure); ``None`` for a scored run."""
    ended: str | None = None
    """How the agent's run was cut short (time limit, turns, budget, full context), when it
    was; such a run is scored on what it did."""
    hung: str | None = None
    """The time limit cut the run off while a tool call the agent made was still running,
    naming the call: the run is scored and fails (it is vetoed); ``None`` otherwise."""
    duration_s: float = 0.0
    """Wall time of the CLI process."""
    exit_code: int | None = None
    """The CLI's exit status; ``None`` when it was killed."""
    cost_usd: float | None = None
    """What the CLI estimated the run cost."""
    cli_version: str | None = None
    """The Claude Code version the run's init event reported."""
    models: tuple[str, ...] = ()
    """The models the API named in its answers (empty when none answered)."""
    recorded_with: str | None = None
    """A replayed run: the backend its cassette was recorded with; ``None`` otherwise."""
    answered_by: AnsweredBy | None = None
    """What answered its model requests (where they went, the emulator's mark); ``None`` when
    the run could not tell."""
    emulator_rules: tuple[ScriptRule, ...] = ()
    """Offline: the rules of the emulator's model script that answered the run's requests."""
    warnings: tuple[str, ...] = ()
    """Isolation problems seen in this run (a skill from outside the sandbox, a plugin...)."""
    explanation: str | None = None
    """The rubric's explanation of the score, for failure reports."""
    loaded: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """What the CLI said it loaded for the run: ``skills``, ``plugins``, ``mcp_servers``."""
    world: Mapping[str, Any] | None = None
    """What the controlled world saw (``WorldOutcome.to_dict()``): calls, writes, violations,
    state diff and the split scores; ``None`` without a world."""
    bad_input: bool = False
    """Whether the run is unscored because of the suite (a pattern too slow to match)."""
    trace: str | None = None
    """Where the run's trace is kept (:mod:`skilltest.trace`); ``None`` when no output is kept."""
    vetoes: tuple[str, ...] = ()
    """Why the run was vetoed (its score is then 0 and it fails): a vetoing anti-pattern it
    matched, a vetoing check it failed."""
    checks: tuple[Mapping[str, Any], ...] = ()
    """What each outcome check found (``CheckResult.to_dict()``)."""

    @property
    def judge_cost_usd(self) -> float | None:
        """What the run's judge calls cost, apart from the agent's run."""
        costs = [c["cost_usd"] for c in self.checks if c.get("cost_usd") is not None]
        return sum(costs) if costs else None

    @property
    def scored(self) -> bool:
        """Whether the run has a score."""
        return self.score is not None

    @property
    def authority_violations(self) -> tuple[str, ...]:
        """The run's authority violations in the world (forbidden, unexpected or duplicate
        writes, writes before confirmation, egress violations, unobserved claims)."""
        if self.world is None:
            return ()
        return tuple(self.world.get("violations") or ())

    def split_score(self, name: str) -> float | None:
        """A split score of the run: ``tool`` is the rubric's, the others the world's."""
        if name == "tool":
            return self.score
        if self.world is None or not self.scored:
            return None
        value = (self.world.get("scores") or {}).get(name)
        return float(value) if value is not None else None

    def fired(self, skills: tuple[str, ...]) -> bool:
        """Whether every skill in ``skills`` was invoked (``plugin:name`` counts as ``name``, and
        as ``plugin``: a plugin fired when one of its skills did)."""
        invoked = {name.rsplit(":", 1)[-1] for name in self.skills_invoked}
        invoked |= {name.split(":", 1)[0] for name in self.skills_invoked if ":" in name}
        return all(skill.rsplit(":", 1)[-1] in invoked for skill in skills)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, scenario_id: str, skill: str) -> RunRecord:
        """A run as :meth:`to_dict` wrote it (a results file's), of scenario ``skill/id``.

        Raises:
            ValueError: ``arm`` is not an arm.
        """

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        def texts(key: str) -> tuple[str, ...]:
            return texts_of(data.get(key))

        def number(key: str) -> float | None:
            value = data.get(key)
            return float(value) if isinstance(value, int | float) else None

        components = data.get("components")
        loaded = data.get("loaded")
        world = data.get("world")
        exit_code = data.get("exit_code")
        return cls(
            scenario_id=scenario_id,
            skill=skill,
            arm=Arm(str(data.get("arm"))),
            rep=int(data.get("rep") or 0),
            score=number("score"),
            components=dict(components) if isinstance(components, Mapping) else {},
            tool_calls=int(data.get("tool_call_count") or 0),
            calls=tuple(c for c in data.get("tool_calls") or () if isinstance(c, dict)),
            skills_invoked=texts("skills_invoked"),
            skills_available=texts("skills_available"),
            transcript=text("transcript"),
            stderr=text("stderr"),
            error=text("error"),
            ended=text("ended"),
            duration_s=number("duration_s") or 0.0,
            exit_code=exit_code if isinstance(exit_code, int) else None,
            cost_usd=number("cost_usd"),
            cli_version=text("claude_version"),
            models=texts("models"),
            recorded_with=text("recorded_with"),
            answered_by=AnsweredBy.from_dict(data.get("answered_by")),
            emulator_rules=rules_of(data.get("emulator_rules")),
            warnings=texts("warnings"),
            loaded={key: texts_of(value) for key, value in loaded.items()}
            if isinstance(loaded, Mapping)
            else {},
            world=dict(world) if isinstance(world, Mapping) else None,
            trace=text("trace"),
            vetoes=texts("vetoes"),
            checks=tuple(c for c in data.get("checks") or () if isinstance(c, Mapping)),
        )

    def to_dict(self) -> dict[str, Any]:
        """The run as the results file stores it."""
        return {
            "arm": self.arm.value,
            "rep": self.rep,
            "score": self.score,
            "components": {name: self.components.get(name) for name in COMPONENTS},
            "tool_call_count": self.tool_calls,
            "tool_calls": list(self.calls),
            "skills_invoked": list(self.skills_invoked),
            "skills_available": list(self.skills_available),
            "transcript": self.transcript,
            "trace": self.trace,
            "stderr": self.stderr,
            "error": self.error,
            "ended": self.ended,
            "hung": self.hung,
            "duration_s": round(self.duration_s, 3),
            "exit_code": self.exit_code,
            "cost_usd": self.cost_usd,
            "claude_version": self.cli_version,
            "models": list(self.models),
            "recorded_with": self.recorded_with,
            "answered_by": None if self.answered_by is None else self.answered_by.to_dict(),
            "emulator_rules": [rule.to_dict() for rule in self.emulator_rules],
            "warnings": list(self.warnings),
            "loaded": {key: list(value) for key, value in self.loaded.items()},
            "world": dict(self.world) if self.world is not None else None,
            "vetoes": list(self.vetoes),
            "checks": [dict(check) for check in self.checks],
        }


def texts_of(value: Any) -> tuple[str, ...]:
    """A list of texts as a tuple (anything else: empty)."""
    return tuple(str(v) for v in value) if isinstance(value, list) else ()
