"""Cassettes: what the model (and each MCP server) answered in one scenario and arm, per repetition.

One YAML file per suite scenario and arm, at a path a reviewer can guess
(``<root>/<skill>/<scenario>/<arm>.yaml``), written by the toolkit and meant to be read in a code
review: metadata first (toolkit and CLI versions, model, the backend that answered, date, the
normalisation rules in force),
then each repetition's exchanges in the order they happened, long texts as YAML block scalars.
Each exchange holds the normalised request (what its fingerprint hashes) and the answer: for the
model, the HTTP status, a few headers and the JSON body or the server-sent events in order; for
an MCP server, the JSON-RPC result or error.

A request repeats across the steps of a conversation (the system prompt, the tools, every earlier
message), so each of those is written once and referred to afterwards with a YAML alias
(``&tools`` ... ``*tools``, ``&m1`` ... ``*m1``): a cassette grows with the conversation, not with
its square.

No secret is ever written: the values of the credential variables (:data:`CREDENTIAL_VARIABLES`,
and any piece of one), the values a suite redacts (``replay: {redact: [...]}``) and every header
but a few harmless ones are kept out, whatever the request or the answer held.
"""

from __future__ import annotations

import datetime
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilltest import __version__
from skilltest.errors import InputError
from skilltest.files import decode, read_bytes
from skilltest.limits import MAX_RESULTS_BYTES
from skilltest.redact import known_redactor, map_strings, redactor_of
from skilltest.replay.normalise import (
    REDACTED,
    canonical_json,
    rules_in_force,
    without_surrogates,
)
from skilltest.replay.proxy import KEPT_HEADERS

if TYPE_CHECKING:
    import yaml

SCHEMA_VERSION = 2
"""Version of the cassette format this code writes; it reads this one and every older one."""

READABLE_VERSIONS = (1, 2)
"""The cassette format versions this code reads: version 1 has no ``api`` (it holds the
Messages API)."""

APIS = ("anthropic", "responses", "chat", "gemini")
"""The model APIs a cassette can hold."""

LAYERS = ("pressure", "scenarios", "triggers")
"""The layers a cassette can belong to."""


def _loader() -> Any:
    """PyYAML's C loader where it is built, else the pure Python one; PyYAML is imported here,
    when a cassette is read, not by every command that imports this module."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Exchange:
    """One request and its answer."""

    step: int
    """0-based order of this request within its repetition (per channel)."""
    channel: str
    """``model`` (the Messages API; ``model:count_tokens`` for token counts, which keep their
    own steps) or ``mcp:<server>``."""
    fingerprint: str
    """:func:`~skilltest.replay.normalise.fingerprint` of ``request``."""
    request: dict[str, Any]
    """The normalised request, as the fingerprint hashes it: what a reviewer reads."""
    response: dict[str, Any]
    """For the model: ``{"status": int, "headers": {...}, "body": <JSON> | None, "events":
    [[event, data], ...] | None}`` (``data`` as the JSON text the server sent); for an MCP
    server: ``{"result": ...}`` or ``{"error": {...}}``."""
    kind: str | None = None
    """What the request was (``main``, ``side:title``, ``count_tokens``, ...); informational."""

    def to_data(self) -> dict[str, Any]:
        """The exchange as the cassette writes it (stable key order)."""
        data: dict[str, Any] = {"step": self.step, "channel": self.channel}
        if self.kind is not None:
            data["kind"] = self.kind
        data["fingerprint"] = self.fingerprint
        data["request"] = self.request
        data["response"] = _response_data(self.response)
        return data

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Exchange:
        """An exchange from its validated cassette form."""
        return cls(
            step=int(data["step"]),
            channel=str(data["channel"]),
            fingerprint=str(data["fingerprint"]),
            request=dict(data["request"]),
            response=dict(data["response"]),
            kind=data.get("kind"),
        )


def _response_data(response: Mapping[str, Any]) -> dict[str, Any]:
    """The response with headers cut to :data:`KEPT_HEADERS` and model keys in a fixed order."""
    if "status" not in response:  # an MCP answer
        return dict(response)
    headers = {
        str(name).lower(): str(value)
        for name, value in (response.get("headers") or {}).items()
        if str(name).lower() in KEPT_HEADERS
    }
    data: dict[str, Any] = {"status": response["status"], "headers": headers}
    data["body"] = response.get("body")
    events = response.get("events")
    data["events"] = [list(pair) for pair in events] if events is not None else None
    return data


@dataclass
class Cassette:
    """The recorded exchanges of one scenario and arm, one list per repetition."""

    path: Path
    """Where the cassette is read from and written to."""
    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    suite: str
    """The suite file, relative to the repository root when possible."""
    skill: str
    """The skill under test."""
    scenario: str
    """The scenario id (a trigger cassette's query id)."""
    arm: str
    """``with_skill``, ``without_skill`` (later ``previous``); a trigger cassette's description,
    ``current`` or ``candidate``."""
    model: str | None = None
    """The model the answers came from."""
    api: str = "anthropic"
    """The model API the cassette holds: ``anthropic`` (the Messages API), ``responses``
    (OpenAI's Responses API), ``chat`` (Chat Completions) or ``gemini`` (Google's Gemini API)."""
    backend: str | None = None
    """The backend that answered while recording (``anthropic``, ``claude`` or ``emulator``,
    whose answers are a scripted stand-in's); ``None`` in cassettes written before it was
    recorded. A replay's results carry it, so offline answers stay known as offline."""
    cli_version: str | None = None
    """The version of the agent's CLI (scenario and trigger layers): ``claude``'s, or that of
    :attr:`agent`."""
    agent: str | None = None
    """The agent whose CLI was recorded when it is not Claude Code (``opencode``, ``codex``);
    ``None`` for Claude Code's runs and the pressure layer's requests."""
    recorded_at: str = ""
    """ISO date-time (UTC) of the last recording; filled in by :meth:`save` when empty."""
    skilltest_version: str = ""
    """The toolkit version that wrote the cassette; filled in by :meth:`save` when empty."""
    rules: list[str] = field(default_factory=list)
    """The normalisation rules in force (:func:`~skilltest.replay.normalise.rules_in_force`);
    the built-in ones when left empty."""
    repetitions: dict[int, list[Exchange]] = field(default_factory=dict)
    """Per repetition index, its exchanges in the order they happened."""
    redact: tuple[str, ...] = field(default=(), repr=False)
    """Values to keep out of the file besides the credentials (a suite's
    :attr:`Rules.secrets <skilltest.replay.rules.Rules.secrets>`); never written."""

    @staticmethod
    def path_for(root: Path, skill: str, scenario: str, arm: str) -> Path:
        """``root/<skill>/<scenario>/<arm>.yaml``, each name made safe as a file name (any
        character but letters, digits, ``.``, ``_`` and ``-`` becomes ``_``)."""
        return root / _safe(skill) / _safe(scenario) / f"{_safe(arm)}.yaml"

    def add(self, rep: int, exchange: Exchange) -> None:
        """Appends an exchange to a repetition."""
        self.repetitions.setdefault(rep, []).append(exchange)

    def to_data(self) -> dict[str, Any]:
        """The cassette as it is written, in a stable key order."""
        return {
            "schema_version": SCHEMA_VERSION,
            "skilltest_version": self.skilltest_version or __version__,
            "layer": self.layer,
            "suite": self.suite,
            "skill": self.skill,
            "scenario": self.scenario,
            "arm": self.arm,
            "api": self.api,
            "model": self.model,
            "backend": self.backend,
            **({"agent": self.agent} if self.agent is not None else {}),
            "cli_version": self.cli_version,
            "recorded_at": self.recorded_at or _now(),
            "rules": list(self.rules) or rules_in_force(),
            "repetitions": [
                {"rep": rep, "exchanges": [e.to_data() for e in self.repetitions[rep]]}
                for rep in sorted(self.repetitions)
            ],
        }

    def dumps(self, *, environ: Mapping[str, str] | None = None) -> str:
        """The YAML text :meth:`save` writes, secrets replaced.

        Args:
            environ: Where the credential variables are read; the process environment by
                default.
        """
        import yaml

        redact = _redaction(os.environ if environ is None else environ, self.redact)
        data = map_strings(self.to_data(), redact)
        _share_repeated_parts(data)
        dumper = _dumper_for(data, large=_text_size(data) > LARGE_CASSETTE_CHARS)
        text: str = yaml.dump(
            data,
            Dumper=dumper,
            sort_keys=False,
            allow_unicode=True,
            width=100,
            default_flow_style=False,
        )
        return text

    def save(self, *, environ: Mapping[str, str] | None = None) -> None:
        """Writes the cassette atomically (a temporary file, then a rename).

        Raises:
            InputError: the file cannot be written there.
        """
        from skilltest.report.files import write_text_atomic

        write_text_atomic(self.path, self.dumps(environ=environ))

    @classmethod
    def load(cls, path: Path, *, layer: str | None = None) -> Cassette:
        """Reads and checks a cassette (of ``layer`` when one is named).

        Raises:
            InputError: a missing or unreadable file, YAML that does not parse, a cassette that
                does not match the format, a schema version this code cannot read, a
                repetition listed twice or another layer's cassette; each names the file and
                the line.
        """
        raw = read_bytes(
            path,
            limit=MAX_RESULTS_BYTES,
            what="the cassette",
            large_fix="re-record it with --record DIR",
            missing="no such cassette",
            missing_fix="record it with --record DIR (or --replay DIR --record-missing)",
        )
        text = decode(raw, path, fix="re-record it with --record DIR")
        cassette = cls.loads(text, path)
        if layer is not None and cassette.layer != layer:
            raise InputError(
                f"a {cassette.layer} cassette, not a {layer} one: it was recorded by "
                f"`skilltest {cassette.layer}`",
                location=f"{path}:{_line_of(text, ['layer'])}",
                fix=f"replay it with `skilltest {cassette.layer}`, or keep each layer's "
                "cassettes in a folder of their own",
            )
        return cassette

    @classmethod
    def loads(cls, text: str, path: Path) -> Cassette:
        """A cassette from its YAML text; ``path`` is where it lives (errors name it)."""
        import yaml

        try:
            data = yaml.load(text, Loader=_loader())
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
            problem = getattr(exc, "problem", None) or str(exc)
            context, opened = getattr(exc, "context", None), getattr(exc, "context_mark", None)
            if context and opened is not None and mark is not None and opened.line != mark.line:
                problem = f"{context} started at line {opened.line + 1}: {problem}"
            raise InputError(
                f"the cassette is not valid YAML: {problem}",
                location=where,
                fix="undo the hand edit, or re-record the cassette with --record DIR",
            ) from None
        if not isinstance(data, dict):
            raise InputError(
                "not a cassette (expected a mapping with schema_version and repetitions)",
                location=f"{path}:1",
                fix="re-record it with --record DIR",
            )
        version = data.get("schema_version")
        if version not in READABLE_VERSIONS or type(version) is not int:
            newer = isinstance(version, int) and version > SCHEMA_VERSION
            readable = " or ".join(str(v) for v in READABLE_VERSIONS)
            raise InputError(
                f"cassette schema_version {version!r} is not {readable}",
                location=f"{path}:{_line_of(text, ['schema_version'])}",
                fix="upgrade skilltest to read it"
                if newer
                else "re-record it with this version of skilltest (--record DIR)",
            )
        _validate(data, text, path)
        _check_streams(data, text, path)
        repetitions: dict[int, list[Exchange]] = {}
        for index, entry in enumerate(data["repetitions"]):
            rep = int(entry["rep"])
            if rep in repetitions:
                raise InputError(
                    f"repetition {rep} is listed twice",
                    location=f"{path}:{_line_of(text, ['repetitions', index, 'rep'])}",
                    fix="keep one entry per repetition, or re-record the cassette",
                )
            repetitions[rep] = [Exchange.from_data(e) for e in entry["exchanges"]]
        return cls(
            path=path,
            layer=data["layer"],
            suite=data["suite"],
            skill=data["skill"],
            scenario=data["scenario"],
            arm=data["arm"],
            api=str(data.get("api") or "anthropic"),
            model=data.get("model"),
            backend=data.get("backend"),
            cli_version=data.get("cli_version"),
            agent=data.get("agent"),
            recorded_at=str(data.get("recorded_at") or ""),
            skilltest_version=str(data.get("skilltest_version") or ""),
            rules=list(data.get("rules") or []),
            repetitions=repetitions,
        )


def _safe(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return "_" if safe in ("", ".", "..") else safe


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- secrets ----------------------------------------------------------------------------------


def _redaction(environ: Mapping[str, str], values: tuple[str, ...]) -> Callable[[str], str]:
    """One function replacing every secret: credentials (and pieces of them) from the
    environment, then the suite's values where they occur whole."""
    credentials = known_redactor(environ)
    extra = redactor_of(tuple(sorted({v for v in values if v})), REDACTED)

    def redact(text: str) -> str:
        return extra(credentials(without_surrogates(text)))

    return redact


# --- writing ----------------------------------------------------------------------------------


def _share_repeated_parts(data: dict[str, Any]) -> None:
    """Makes equal system prompts, tool lists and messages (a Responses request's input items)
    one object, in place, so that the YAML writer writes each once and aliases it afterwards."""
    seen: dict[str, Any] = {}

    def shared(value: Any) -> Any:
        if not isinstance(value, dict | list):
            return value
        key = canonical_json(value)
        return seen.setdefault(key, value)

    for repetition in data["repetitions"]:
        for exchange in repetition["exchanges"]:
            request = exchange["request"]
            for name in ("system", "tools"):
                if name in request:
                    request[name] = shared(request[name])
            for name in ("messages", "input"):
                if isinstance(request.get(name), list):
                    request[name] = [shared(m) for m in request[name]]


LARGE_CASSETTE_CHARS = 256 * 1024
"""Above this much text, a cassette is written by libyaml's emitter (when PyYAML has it): tens of
times faster on answers of megabytes, though its shared parts are named ``&id001``."""


def _text_size(data: Any) -> int:
    """The characters of every string in ``data`` (shared parts counted once)."""
    seen: set[int] = set()
    total = 0
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict | list) and id(item) not in seen:
            seen.add(id(item))
            stack.extend(item.values() if isinstance(item, dict) else item)
    return total


def _dumper_for(data: dict[str, Any], *, large: bool = False) -> type[Any]:
    """A YAML writer that writes long texts as block scalars and names shared parts by what
    they are (``&system``, ``&tools``, ``&m3``) rather than ``&id001``; for a ``large``
    cassette, libyaml's writer, with the same scalar styles."""
    import yaml

    if large and hasattr(yaml, "CSafeDumper"):

        class Fast(yaml.CSafeDumper):
            pass

        Fast.add_representer(str, _represent_str)
        return Fast

    names: dict[int, str] = {}
    counts = {"system": 0, "tools": 0, "m": 0}
    for repetition in data["repetitions"]:
        for exchange in repetition["exchanges"]:
            request = exchange["request"]
            parts = [("system", request.get("system")), ("tools", request.get("tools"))]
            parts += [("m", m) for m in _listed(request.get("messages"))]
            parts += [("m", m) for m in _listed(request.get("input"))]
            for kind, part in parts:
                if isinstance(part, dict | list) and id(part) not in names:
                    counts[kind] += 1
                    number = counts[kind]
                    names[id(part)] = f"{kind}{number}" if kind == "m" or number > 1 else kind

    class Dumper(yaml.SafeDumper):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._anchor_names: dict[yaml.Node, str] = {}

        def represent_data(self, data: Any) -> yaml.Node:
            node = super().represent_data(data)
            name = names.get(id(data))
            if name is not None:
                self._anchor_names[node] = name
            return node

        def generate_anchor(self, node: yaml.Node) -> str:
            return self._anchor_names.get(node) or str(super().generate_anchor(node))

    Dumper.add_representer(str, _represent_str)
    return Dumper


def _listed(value: Any) -> list[Any]:
    """``value`` when it is a list (a Responses request's ``input`` may be one text)."""
    return value if isinstance(value, list) else []


_OTHER_BREAKS = re.compile("[\r\x85\u2028\u2029]")


def _represent_str(dumper: Any, value: str) -> yaml.ScalarNode:
    # A text of several lines reads best as a block (|); the writer falls back to a quoted
    # scalar by itself where a block cannot hold the text exactly (trailing spaces, tabs). The
    # other line breaks YAML knows (\r, NEL, U+2028/9) survive only escaped, in double quotes.
    if _OTHER_BREAKS.search(value):
        style: str | None = '"'
    else:
        style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


# --- checking ---------------------------------------------------------------------------------


def _validate(data: dict[str, Any], text: str, path: Path) -> None:
    """Checks the cassette against ``cassette.schema.json``; a problem names the file, the
    line and the JSON pointer."""
    from skilltest.suite.conforms import conforms
    from skilltest.suite.loader import json_pointer, load_schema

    if conforms(data, load_schema("cassette")):
        return
    import jsonschema

    validator = _validator(jsonschema, load_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return
    where = list(error.absolute_path)
    wanted = error.schema.get("description") if isinstance(error.schema, dict) else None
    raise InputError(
        f"#{json_pointer(where)}: {error.message}",
        location=f"{path}:{_line_of(text, where)}",
        fix=(f"expected {wanted}; " if wanted else "")
        + "undo the hand edit, or re-record the cassette with --record DIR",
    )


_TOKENS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def _check_streams(data: dict[str, Any], text: str, path: Path) -> None:
    """Checks what the schema cannot see inside a streamed answer's events (each event's data is
    JSON text): the data parses, token counts are integers >= 0, a stop reason is text or
    null. A replay then never reports a count or an ending the model could not have given."""
    for r, repetition in enumerate(data["repetitions"]):
        for e, exchange in enumerate(repetition["exchanges"]):
            events = exchange["response"].get("events") if exchange["channel"] == "model" else None
            for index, event in enumerate(events or []):
                where = ["repetitions", r, "exchanges", e, "response", "events", index]
                problem = _stream_problem(event)
                if problem is not None:
                    from skilltest.suite.loader import json_pointer

                    raise InputError(
                        f"#{json_pointer(where)}: {problem}",
                        location=f"{path}:{_line_of(text, where)}",
                        fix="undo the hand edit, or re-record the cassette with --record DIR",
                    )


_OPENAI_TOKENS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "prompt_tokens",
    "completion_tokens",
)

_USAGE_HOLDERS = {
    "message_start": ("message", _TOKENS),
    "message_delta": (None, _TOKENS),
    "response.completed": ("response", _OPENAI_TOKENS),
    "response.incomplete": ("response", _OPENAI_TOKENS),
    "message": (None, _OPENAI_TOKENS),
}
"""Per event name carrying token counts: where its usage is (under which key of the data, or
the data itself) and which counts it has. ``message`` is a Chat Completions chunk."""


def _stream_problem(event: Any) -> str | None:
    if not (isinstance(event, list) and len(event) == 2 and all(isinstance(x, str) for x in event)):
        return "expected an [event, data] pair of texts"
    name, raw = event
    if name not in _USAGE_HOLDERS or (name == "message" and '"usage"' not in raw):
        return None
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError):
        return f"the {name} event's data is not JSON"
    if not isinstance(payload, dict):
        return f"the {name} event's data is not a mapping"
    key, counts = _USAGE_HOLDERS[name]
    holder = payload.get(key) if key is not None else payload
    usage = holder.get("usage") if isinstance(holder, dict) else None
    for field_name in counts:
        value = usage.get(field_name) if isinstance(usage, dict) else None
        if value is not None and (type(value) is not int or value < 0):
            return f"{field_name} {value!r} in the {name} event is not an integer >= 0"
    delta = payload.get("delta") if name == "message_delta" else None
    stop = delta.get("stop_reason") if isinstance(delta, dict) else None
    if stop is not None and not isinstance(stop, str):
        return f"stop_reason {stop!r} in the {name} event is not text"
    return None


_VALIDATOR: Any = None


def _validator(jsonschema: Any, load_schema: Callable[[str], dict[str, Any]]) -> Any:
    global _VALIDATOR
    if _VALIDATOR is None:
        _VALIDATOR = jsonschema.Draft202012Validator(load_schema("cassette"))
    return _VALIDATOR


def _line_of(text: str, where: list[Any]) -> int:
    """The 1-based line of the value at ``where`` in the YAML text (the deepest part of it that
    exists); composed again only when there is an error to report."""
    import yaml

    try:
        node = yaml.compose(text, Loader=_loader())
    except yaml.YAMLError:
        return 1
    line = node.start_mark.line if node is not None else 0
    for part in where:
        if isinstance(node, yaml.MappingNode):
            found = next((v for k, v in node.value if k.value == str(part)), None)
            if found is None:
                key = next((k for k, _ in node.value if k.value == str(part)), None)
                return (key.start_mark.line if key is not None else line) + 1
            node = found
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                break
            node = node.value[part]
        else:
            break
        line = node.start_mark.line
    return line + 1
