"""What answered a run's model requests, as the answers and their address showed it. Pure.

A results file says where its numbers came from by what answered, never by the ``--backend``
it was started with: ``skilltest emulator serve`` behind ``ANTHROPIC_BASE_URL`` answers a
``--backend claude`` run as it answers ``--backend emulator``. Every run records an
:class:`AnsweredBy`: where its requests went (the public API, loopback or another host, by its
base URL) and whether an answer carried the skilltest emulator's mark, the response header
:data:`EMULATOR_HEADER` that the emulator sets on every answer (recording proxies keep it in
cassettes, so a replay shows it too). A model named ``...-emulated`` (what ``skilltest init``'s
model scripts call theirs) or ``skilltest-emulator`` (the emulator's own default) marks the
stand-in as well.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

EMULATOR_HEADER = "x-skilltest-emulator"
"""The response header the skilltest emulator sets on every answer: its version."""
EMULATED_SUFFIX = "-emulated"
"""How the model name of a stand-in's script ends (``claude-sonnet-4-5-emulated``)."""
EMULATOR_MODEL = "skilltest-emulator"
"""The model the emulator names when neither its script nor the request names one."""
PUBLIC_API_HOST = "api.anthropic.com"
"""The Anthropic API's own host."""

API = "api"
"""The requests went to the public Anthropic API."""
LOOPBACK = "loopback"
"""The requests went to this machine (a local server: what it is, only its answers say)."""
OTHER = "other"
"""The requests went to another host (a gateway, a proxy: what answered behind it is unknown)."""
CASSETTE = "cassette"
"""The answers were replayed from cassettes."""


def endpoint_kind(url: str) -> str:
    """``api``, ``loopback`` or ``other``: where a base URL sends requests."""
    host = (urlsplit(url).hostname or "").lower()
    if host == PUBLIC_API_HOST:
        return API
    if host == "localhost" or host.endswith(".localhost"):
        return LOOPBACK
    try:
        return LOOPBACK if ipaddress.ip_address(host).is_loopback else OTHER
    except ValueError:
        return OTHER


def shown_url(url: str) -> str:
    """A base URL as a results file names it: scheme, host, port and path; never a user, a
    password or a query (which could hold a credential)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def emulated_model(name: str) -> bool:
    """Whether a model name, as an answer gave it, is the skilltest emulator's."""
    return name.endswith(EMULATED_SUFFIX) or name == EMULATOR_MODEL


def emulator_mark(headers: Mapping[str, Any] | None) -> str | None:
    """The emulator's mark among an answer's headers (any case); ``None`` without it."""
    for key, value in (headers or {}).items():
        if str(key).lower() == EMULATOR_HEADER:
            return str(value)
    return None


@dataclass(frozen=True)
class AnsweredBy:
    """What answered one run's model requests, as the run saw it."""

    endpoint: str
    """``api`` (the public Anthropic API), ``loopback``, ``other`` (another host) or
    ``cassette`` (replayed)."""
    base_url: str | None = None
    """Where the requests went (no credential, no query); ``None`` for a replay."""
    emulator: str | None = None
    """The skilltest emulator's mark (its version) when an answer carried it; ``None`` when no
    answer did."""

    @classmethod
    def at(cls, url: str, emulator: str | None = None) -> AnsweredBy:
        """The requests went to ``url``; ``emulator``: the mark an answer carried."""
        return cls(endpoint_kind(url), shown_url(url), emulator)

    @property
    def stand_in(self) -> bool:
        """Whether an answer carried the emulator's mark."""
        return self.emulator is not None

    @property
    def named(self) -> str:
        """``http://127.0.0.1:4000 (loopback)``, ``cassettes``: as messages name it."""
        if self.endpoint == CASSETTE:
            return "cassettes"
        return f"{self.base_url} ({self.endpoint})"

    def to_dict(self) -> dict[str, Any]:
        """As results files and traces store it."""
        return {"endpoint": self.endpoint, "base_url": self.base_url, "emulator": self.emulator}

    @classmethod
    def from_dict(cls, data: Any) -> AnsweredBy | None:
        """What :meth:`to_dict` wrote; ``None`` for anything else."""
        if not isinstance(data, Mapping) or not isinstance(data.get("endpoint"), str):
            return None
        url, mark = data.get("base_url"), data.get("emulator")
        return cls(
            data["endpoint"],
            url if isinstance(url, str) else None,
            mark if isinstance(mark, str) else None,
        )


def distinct(observed: Iterable[AnsweredBy | None]) -> tuple[AnsweredBy, ...]:
    """Each observation once, sorted."""
    found = {seen for seen in observed if seen is not None}
    return tuple(sorted(found, key=lambda s: (s.endpoint, s.base_url or "", s.emulator or "")))


RULE_HEADER = "x-skilltest-emulator-rule"
"""The response header by which the emulator says which rule of its model script answered a
model request: ``rule=ID; at=FILE:LINE`` (each part percent-encoded), or ``default; at=FILE``
when no rule matched. Runs read it, so an answer is attributed wherever the emulator runs."""

BATCH_RULE_KEY = "skilltest_emulator_rule"
"""The key by which the emulator names, on each line of a Message Batch's results, the rule
that answered that request (the line's own :data:`RULE_HEADER`: one results response carries
many answers). Read only from results the emulator marked as its own."""

KEY_HINT = "run with ANTHROPIC_API_KEY set"
"""How an author leaves the stand-in behind."""


@dataclass(frozen=True)
class ScriptRule:
    """The rule of a model script that gave an answer: whose answer it is, offline."""

    rule: str | None
    """The rule's id; ``None``: no rule matched and the script's default reply answered (or,
    without one, the emulator's own no-match reply)."""
    script: str
    """The model script's file, as the emulator loaded it."""
    line: int | None = None
    """The line (1-based) where the rule, or the default reply, starts; ``None`` when the
    script has neither (the emulator's no-match reply) or the line is unknown."""

    @property
    def place(self) -> str:
        """``tests/model-scripts/x.yaml:12``, or the file alone without a line."""
        return self.script if self.line is None else f"{self.script}:{self.line}"

    @property
    def named(self) -> str:
        """``rule 'with-x' (tests/model-scripts/x.yaml:12)`` or the default reply, in words."""
        if self.rule is not None:
            return f"rule {self.rule!r} ({self.place})"
        if self.line is not None:
            return f"default reply ({self.place}; no rule matched)"
        return f"no-match reply (no rule of {self.script} matched, and it has no default)"

    def seen_from(self, cwd: str) -> ScriptRule:
        """The same rule with its script's path relative to ``cwd`` when the file is inside it
        (as an author types it), else as it was."""
        script = Path(self.script)
        if not script.is_absolute():
            return self
        try:
            return replace(self, script=script.relative_to(cwd).as_posix())
        except ValueError:
            return self

    def header(self) -> str:
        """The value of :data:`RULE_HEADER` that carries this attribution."""
        head = "default" if self.rule is None else f"rule={quote(self.rule, safe='')}"
        return f"{head}; at={quote(self.place, safe='/:')}"

    @classmethod
    def from_header(cls, value: str) -> ScriptRule | None:
        """What :meth:`header` wrote; ``None`` for anything else."""
        head, sep, at = value.partition("; at=")
        if not sep or not (head == "default" or head.startswith("rule=")):
            return None
        place = unquote(at)
        script, colon, line = place.rpartition(":")
        if not (colon and line.isdigit()):
            script, line = place, ""
        rule = unquote(head.removeprefix("rule=")) if head != "default" else None
        return cls(rule, script, int(line) if line else None)

    def to_dict(self) -> dict[str, Any]:
        """As results files store it."""
        return {"rule": self.rule, "script": self.script, "line": self.line}

    @classmethod
    def from_dict(cls, data: Any) -> ScriptRule | None:
        """What :meth:`to_dict` wrote; ``None`` for anything else."""
        if not isinstance(data, Mapping) or not isinstance(data.get("script"), str):
            return None
        rule, line = data.get("rule"), data.get("line")
        return cls(
            rule if isinstance(rule, str) else None,
            data["script"],
            line if isinstance(line, int) and not isinstance(line, bool) else None,
        )


def script_rule(headers: Mapping[str, Any] | None) -> ScriptRule | None:
    """The rule the emulator named among an answer's headers (any case); ``None`` without it."""
    for key, value in (headers or {}).items():
        if str(key).lower() == RULE_HEADER:
            return ScriptRule.from_header(str(value))
    return None


def first_each(rules: Iterable[ScriptRule | None], cwd: str) -> tuple[ScriptRule, ...]:
    """Each rule once, in the order it first answered, its script's path as seen from
    ``cwd``."""
    return tuple(dict.fromkeys(rule.seen_from(cwd) for rule in rules if rule is not None))


def rules_of(value: Any) -> tuple[ScriptRule, ...]:
    """The ``emulator_rules`` a results file's run records, read back (old files: none)."""
    if not isinstance(value, list):
        return ()
    return tuple(rule for rule in map(ScriptRule.from_dict, value) if rule is not None)


def attribution(rules: Iterable[ScriptRule]) -> str | None:
    """Whose answer a failing run gave, offline, and what the author can do about it; ``None``
    when no emulator rule answered (a real model did)."""
    found = list(dict.fromkeys(rules))
    if not found:
        return None
    named = ", ".join(rule.named for rule in found)
    edit = "edit the rule" if any(rule.rule is not None for rule in found) else "add a rule"
    return (
        f"answered by the emulator's {named}; offline, the model says what its script says: "
        f"{edit} or {KEY_HINT}"
    )
