"""The model script: what the emulator's stand-in model answers, loaded and validated once.

A script is YAML (or JSON) checked against ``model_script.schema.json``; every error names the
file, the JSON pointer and the fix. Inside, it is frozen dataclasses with compiled patterns, and
:meth:`ModelScript.select` picks the rule that answers a request (first match wins). The format
is documented for users in ``docs/model-script.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skilltest.emulator.batches import BatchBehaviour, BatchOutcome
from skilltest.emulator.described import (
    PLACEHOLDER,
    DescribedCondition,
    DescriptionMatch,
    fill_placeholder,
    mentions_placeholder,
)
from skilltest.emulator.side_requests import SideRequestKind
from skilltest.errors import ModelScriptError, PatternError
from skilltest.model_apis import AgentName, ApiFamily
from skilltest.patterns import Pattern, compile_pattern
from skilltest.suite.loader import load_schema, read_yaml, reject_non_finite

if TYPE_CHECKING:
    import jsonschema

    from skilltest.emulator.faults import Fault
    from skilltest.emulator.request_view import RequestView

SCHEMA_VERSION = 1
StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"]


def model_script_schema() -> dict[str, Any]:
    """The JSON Schema of the model script."""
    return load_schema("model_script")


@dataclass(frozen=True)
class ToolCall:
    """One tool call the stand-in model makes."""

    name: str
    """Tool name, e.g. ``Bash``."""
    input: Mapping[str, Any] = field(default_factory=dict)
    """Tool input object."""


@dataclass(frozen=True)
class Reply:
    """One answer of the stand-in model."""

    text: str | None = None
    """Text block, if any."""
    thinking: str | None = None
    """Thinking block, if any (sent first)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls, sent after the text."""
    stop_reason: StopReason = "end_turn"
    """Why the model stopped; ``tool_use`` by default when there are tool calls."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reply:
        """Builds a reply from its (schema-validated) script entry."""
        calls = tuple(
            ToolCall(name=call["name"], input=dict(call.get("input") or {}))
            for call in data.get("tool_calls") or []
        )
        stop: StopReason = data.get("stop_reason") or ("tool_use" if calls else "end_turn")
        return cls(
            text=data.get("text"),
            thinking=data.get("thinking"),
            tool_calls=calls,
            stop_reason=stop,
        )

    def naming(self, skill: str) -> Reply:
        """This reply with ``{described}`` in its text, thinking and tool inputs made ``skill``."""
        return Reply(
            text=None if self.text is None else self.text.replace(PLACEHOLDER, skill),
            thinking=None if self.thinking is None else self.thinking.replace(PLACEHOLDER, skill),
            tool_calls=tuple(
                ToolCall(name=call.name, input=fill_placeholder(dict(call.input), skill))
                for call in self.tool_calls
            ),
            stop_reason=self.stop_reason,
        )


@dataclass(frozen=True)
class Conditions:
    """A rule's ``when``: every condition that is set must hold."""

    system: Pattern | None = None
    """Regex on the system prompt."""
    user: Pattern | None = None
    """Regex on the latest user-authored text."""
    any_text: Pattern | None = None
    """Regex on all text of the request."""
    turn: frozenset[int] | None = None
    """Assistant-response numbers (1-based) this rule answers."""
    tool_result: Pattern | None = None
    """Regex on the tool results the response answers."""
    tools: tuple[str, ...] = ()
    """Tools that must be offered."""
    no_tools: bool | None = None
    """``True``: no tools offered; ``False``: some tools offered."""
    skill: str | None = None
    """A skill that must be listed as available."""
    skill_loaded: str | None = None
    """A skill whose body must be in the conversation."""
    model: Pattern | None = None
    """Regex on the requested model."""
    side_request: bool | SideRequestKind = False
    """``False``: main requests only; ``True``: any side request; a kind: that kind only."""
    described: DescribedCondition | None = None
    """A listed skill whose description shares enough words with the user's prompt."""
    api: frozenset[ApiFamily] | None = None
    """The APIs whose requests this rule answers; ``None``: every API."""
    agent: frozenset[AgentName] | None = None
    """The agents whose requests this rule answers; ``None``: any client."""

    def holds(self, view: RequestView) -> bool:
        """Whether every set condition holds for ``view``.

        Raises:
            PatternError: a pattern exceeded its time limit.
        """
        if self.side_request is False:
            if view.side_request is not None:
                return False
        elif view.side_request is None or (
            self.side_request is not True and view.side_request != self.side_request
        ):
            return False
        if self.turn is not None and view.turn not in self.turn:
            return False
        if self.api is not None and view.api not in self.api:
            return False
        if self.agent is not None and view.agent not in self.agent:
            return False
        if self.tools and not set(self.tools) <= set(view.tool_names):
            return False
        if self.no_tools is not None and self.no_tools != (not view.tool_names):
            return False
        if self.skill is not None and not _names_skill(view.skills_listed, self.skill):
            return False
        if self.skill_loaded is not None and not _names_skill(
            view.skills_loaded, self.skill_loaded
        ):
            return False
        if self.tool_result is not None and (
            view.tool_result_text is None or not self.tool_result.matches(view.tool_result_text)
        ):
            return False
        if self.described is not None and self.described_skill(view) is None:
            return False
        texts = (
            (self.model, view.model),
            (self.user, view.user_text),
            (self.system, view.system_text),
            (self.any_text, view.all_text),
        )
        return all(pattern is None or pattern.matches(text) for pattern, text in texts)

    def described_skill(self, view: RequestView) -> DescriptionMatch | None:
        """The listed skill the ``described`` condition chose for ``view``, if it holds."""
        if self.described is None:
            return None
        return self.described.best(view.user_text, view.skill_listing)


def _names_skill(names: frozenset[str], wanted: str) -> bool:
    # A plugin skill is listed as ``plugin:skill``; its bare name is accepted too.
    return wanted in names or any(name.endswith(f":{wanted}") for name in names)


@dataclass(frozen=True)
class Rule:
    """Conditions and the replies given when they hold."""

    id: str
    """Unique name, recorded with every request the rule answers."""
    when: Conditions
    """Conditions that must all hold."""
    replies: tuple[Reply, ...]
    """One or more replies."""
    pick: Literal["cycle", "random"] = "cycle"
    """How one of several replies is chosen."""
    fault: Fault | None = None
    """Faults applied to the requests this rule answers."""
    batch: BatchOutcome | None = None
    """How the requests this rule answers end when they come in a Message Batch (``None``:
    succeeded, unless a fault fails them)."""
    location: str = ""
    """``file#/rules/N``."""
    line: int | None = None
    """The line (1-based) of the script file where the rule starts; ``None`` for a script not
    read from a file."""


@dataclass(frozen=True)
class ModelScript:
    """A validated model script."""

    source: str
    """Where the script came from (a path, or ``<inline>``)."""
    rules: tuple[Rule, ...] = ()
    """Ordered rules; the first that matches answers."""
    default: Reply | None = None
    """Reply when no rule matches a main request."""
    model: str | None = None
    """Model name reported in responses; ``None`` echoes the requested one."""
    seed: int = 0
    """Seed of every random choice."""
    faults: Fault | None = None
    """Faults applied to every Messages request."""
    batches: BatchBehaviour = field(default_factory=BatchBehaviour)
    """How Message Batches go: how long they take, whether they expire or are canceled."""
    default_line: int | None = None
    """The line (1-based) of the script file where ``default:`` is; ``None`` without it or for
    a script not read from a file."""

    @classmethod
    def load(cls, path: str | Path, *, lines: bool = True) -> ModelScript:
        """Reads and validates a script file (YAML or JSON); with ``lines``, also finds the line
        of each rule and of the default reply, which a run's answers are traced to (checking a
        script does without them).

        Raises:
            ModelScriptError: unreadable, not YAML, or not a valid model script.
        """
        path = Path(path)
        data = read_yaml(path, ModelScriptError)
        script = cls.from_dict(data, source=str(path))
        return _with_lines(script, path) if lines else script

    @classmethod
    def from_dict(cls, data: object, source: str = "<inline>") -> ModelScript:
        """Validates an already-parsed script.

        Raises:
            ModelScriptError: not a valid model script; names ``source#/pointer`` and the fix.
        """
        reject_non_finite(data, source, ModelScriptError)
        from skilltest.suite.conforms import conforms

        if not conforms(data, model_script_schema()):
            # What is wrong, in jsonschema's words: only a script with a problem imports it.
            import jsonschema

            from skilltest.emulator.script_errors import describe_schema_error

            validator = jsonschema.Draft202012Validator(model_script_schema())
            errors = sorted(validator.iter_errors(data), key=_error_order)
            if errors:
                pointer, message, fix = describe_schema_error(errors[0], data)
                raise ModelScriptError(message, location=f"{source}#{pointer}", fix=fix)
        assert isinstance(data, Mapping)
        try:
            return _build(data, source)
        except PatternError as exc:
            raise ModelScriptError(exc.message, location=exc.location, fix=exc.fix) from exc

    def select(self, view: RequestView) -> Rule | None:
        """The first rule whose conditions hold for ``view``, or ``None``.

        Raises:
            ModelScriptError: a pattern exceeded its time limit on this request.
        """
        for rule in self.rules:
            try:
                if rule.when.holds(view):
                    return rule
            except PatternError as exc:
                raise ModelScriptError(exc.message, location=exc.location, fix=exc.fix) from exc
        return None


def _with_lines(script: ModelScript, path: Path) -> ModelScript:
    """``script`` with the line of each rule and of its default reply in ``path``, so that an
    answer can be traced to the line an author edits."""
    import yaml

    # The file was read within bounds already: composing it again only finds the lines, in C
    # when PyYAML has libyaml.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, UnicodeError, yaml.YAMLError):
        return script
    if not isinstance(root, yaml.MappingNode) or root.start_mark.line == root.end_mark.line:
        return script  # a script on one line (JSON, as a program writes it) has no lines to name
    keys = {k.value: (k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode)}
    rules = script.rules
    if "rules" in keys and isinstance(keys["rules"][1], yaml.SequenceNode):
        items = keys["rules"][1].value
        if len(items) == len(rules):
            rules = tuple(
                replace(rule, line=item.start_mark.line + 1)
                for rule, item in zip(rules, items, strict=True)
            )
    default_line = keys["default"][0].start_mark.line + 1 if "default" in keys else None
    return replace(script, rules=rules, default_line=default_line)


def _error_order(error: jsonschema.ValidationError) -> tuple[int, str]:
    # Report the error nearest the top of the file first, as a reader scans it.
    return (len(error.absolute_path), "/".join(str(part) for part in error.absolute_path))


def _build(data: Mapping[str, Any], source: str) -> ModelScript:
    rules = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(data.get("rules") or []):
        location = f"{source}#/rules/{index}"
        rule_id = raw["id"]
        if rule_id in seen:
            raise ModelScriptError(
                f"duplicate rule id {rule_id!r} (also used by rule {seen[rule_id]})",
                location=f"{location}/id",
                fix="give every rule a unique id",
            )
        seen[rule_id] = index
        rules.append(_build_rule(raw, location))
    return ModelScript(
        source=source,
        rules=tuple(rules),
        default=_build_default(data, source),
        model=data.get("model"),
        seed=int(data.get("seed", 0)),
        faults=_build_fault(data["faults"], f"{source}#/faults") if "faults" in data else None,
        batches=BatchBehaviour.from_dict(data.get("batches") or {}),
    )


def _build_default(data: Mapping[str, Any], source: str) -> Reply | None:
    if "default" not in data:
        return None
    _refuse_placeholder(data["default"], f"{source}#/default")
    return Reply.from_dict(data["default"])


def _build_rule(raw: Mapping[str, Any], location: str) -> Rule:
    has_reply, has_replies = "reply" in raw, "replies" in raw
    if has_reply == has_replies:
        raise ModelScriptError(
            f"rule {raw['id']!r} has "
            + ("both 'reply' and 'replies'" if has_reply else "neither 'reply' nor 'replies'"),
            location=location,
            fix="give the rule either 'reply: {text: ...}' or 'replies: [...]', not both",
        )
    if "pick" in raw and not has_replies:
        raise ModelScriptError(
            "'pick' only applies to 'replies'",
            location=f"{location}/pick",
            fix="remove 'pick', or turn 'reply' into a list under 'replies'",
        )
    replies = raw["replies"] if has_replies else [raw["reply"]]
    if "described" not in (raw.get("when") or {}):
        _refuse_placeholder(replies, f"{location}/{'replies' if has_replies else 'reply'}")
    return Rule(
        id=raw["id"],
        when=_build_conditions(raw.get("when") or {}, f"{location}/when"),
        replies=tuple(Reply.from_dict(reply) for reply in replies),
        pick=raw.get("pick", "cycle"),
        fault=_build_fault(raw["fault"], f"{location}/fault") if "fault" in raw else None,
        batch=_build_batch(raw["batch"], f"{location}/batch") if "batch" in raw else None,
        location=location,
    )


def _build_conditions(raw: Mapping[str, Any], location: str) -> Conditions:
    def pattern(key: str) -> Pattern | None:
        return compile_pattern(raw[key], f"{location}/{key}") if key in raw else None

    def names(key: str) -> frozenset[Any] | None:
        value = raw.get(key)
        return None if value is None else frozenset([value] if isinstance(value, str) else value)

    turn = raw.get("turn")
    return Conditions(
        system=pattern("system"),
        user=pattern("user"),
        any_text=pattern("any_text"),
        turn=None if turn is None else frozenset([turn] if isinstance(turn, int) else turn),
        tool_result=pattern("tool_result"),
        tools=tuple(raw.get("tools") or ()),
        no_tools=raw.get("no_tools"),
        skill=raw.get("skill"),
        skill_loaded=raw.get("skill_loaded"),
        model=pattern("model"),
        side_request=raw.get("side_request", False),
        described=(
            DescribedCondition(min_overlap=raw["described"]["min_overlap"])
            if "described" in raw
            else None
        ),
        api=names("api"),
        agent=names("agent"),
    )


def _refuse_placeholder(replies: object, location: str) -> None:
    # Outside a rule with a `described` condition there is no chosen skill to put in its place;
    # sending "{described}" to the agent verbatim would only surface as an unknown skill later.
    if mentions_placeholder(replies):
        raise ModelScriptError(
            f"{PLACEHOLDER} names the skill a 'described' condition chose, but this reply has none",
            location=location,
            fix="add 'described: {min_overlap: N}' to the rule's 'when', or write the skill's name",
        )


def _build_batch(raw: Mapping[str, Any], location: str) -> BatchOutcome:
    if raw["result"] != "errored":
        for key in ("status", "message"):
            if key in raw:
                raise ModelScriptError(
                    f"'{key}' only applies to result: errored",
                    location=f"{location}/{key}",
                    fix=f"remove '{key}', or make the result errored",
                )
    return BatchOutcome.from_dict(raw)


def _build_fault(raw: Mapping[str, Any], location: str) -> Fault:
    from skilltest.emulator.faults import FAILURE_KINDS, Fault  # a script with faults only

    failures = [kind for kind in FAILURE_KINDS if kind in raw]
    if len(failures) > 1:
        raise ModelScriptError(
            f"a fault can inject one failure, got {' and '.join(failures)}",
            location=location,
            fix="keep one of status, malformed, truncated, midstream_error, hang "
            "(put the others on separate rules)",
        )
    for key in ("rate", "first_n", "retry_after_ms"):
        if key in raw and not failures:
            raise ModelScriptError(
                f"'{key}' has no failure to apply to",
                location=f"{location}/{key}",
                fix="add a failure (status, malformed, truncated, midstream_error or hang)",
            )
    if "retry_after_ms" in raw and raw.get("status") not in (429, 529):
        raise ModelScriptError(
            "'retry_after_ms' only applies to status 429 and 529",
            location=f"{location}/retry_after_ms",
            fix="remove retry_after_ms, or use status: 429 or 529",
        )
    return Fault.from_dict(dict(raw), location)
