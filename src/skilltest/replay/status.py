"""How old each cassette of a folder is, and whether it still fits what the suite asks for now.

A cassette records when it was recorded, what answered (the backend), the model, the ``claude``
version (another agent's cassette, that agent's version) and the normalisation rules in force.
A cassette is *stale* when a replay of it would
miss or would no longer say what a live run says: recorded under other normalisation rules than
its suite's now, with another ``claude`` version or model than the one asked for now, or longer
ago than a maximum age. A fact the cassette lacks (written before it was recorded) is
``unknown``; when a criterion needs it, the cassette counts as stale, and the reason says so.

:func:`read_cassettes` reads a folder; :func:`status_of` judges one cassette (pure: the clock
and what is asked for now are given).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.replay.cassette import Cassette
from skilltest.replay.match import rule_changes
from skilltest.replay.normalise import Rules, rules_in_force

UNKNOWN = "unknown"
"""How a fact a cassette lacks is shown."""

CLI_LAYERS = frozenset({"scenarios", "triggers"})
"""The layers whose cassettes were recorded through the ``claude`` CLI (a pressure cassette
calls the API directly: it has no CLI version, and none is asked of it)."""


@dataclass(frozen=True)
class SuiteNow:
    """What a suite asks of its cassettes now."""

    rules: tuple[str, ...] | None
    """The rules a recording under it writes (built-in, then the suite's own); ``None`` when
    the suite file could not be found."""
    model: str | None = None
    """The suite's ``model``, when it names one."""
    where: str = ""
    """The suite file as the cassette names it (for reasons)."""


@dataclass(frozen=True)
class Wanted:
    """What the cassettes are judged against."""

    now: dt.datetime
    """The time ages are counted to (UTC)."""
    cli_version: str | None = None
    """The ``claude`` version a replay would run; ``None``: not checked."""
    model: str | None = None
    """The model asked for (``--model``); ``None``: the suite's, else not checked."""
    max_age_days: float | None = None
    """Older cassettes are stale; ``None``: no age limit."""
    agent_versions: Mapping[str, str | None] = field(default_factory=dict)
    """The version of each other agent's CLI a replay would run (``{"codex": "0.171.0"}``),
    which that agent's cassettes are judged by; an agent missing or ``None``: not checked."""


@dataclass(frozen=True)
class CassetteStatus:
    """One cassette's facts and verdict."""

    path: Path
    """The cassette file."""
    name: str
    """The file relative to the folder read."""
    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    recorded_at: dt.datetime | None
    """When it was last recorded (UTC); ``None`` when unknown or unreadable."""
    backend: str | None
    """What answered while recording (``anthropic``, ``claude``, ``emulator``)."""
    model: str | None
    """The model as the API named it in its answers (else as it was asked for)."""
    asked_model: str | None
    """The model the requests asked for."""
    cli_version: str | None
    """The version of the agent's CLI (``claude``'s, or :attr:`agent`'s); ``None`` for a
    pressure cassette or when unknown."""
    rules: tuple[str, ...]
    """The normalisation rules it was recorded under."""
    reasons: tuple[str, ...]
    """Why it is stale; empty when it is fresh."""
    agent: str | None = None
    """The agent recorded when it is not Claude Code (``opencode``, ``codex``)."""

    @property
    def stale(self) -> bool:
        """Whether any criterion finds it stale."""
        return bool(self.reasons)

    @property
    def rules_id(self) -> str:
        """A short fingerprint of its rules: equal rules, equal id."""
        digest = hashlib.sha256(json.dumps(list(self.rules)).encode()).hexdigest()
        return digest[:8]

    def to_dict(self) -> dict[str, Any]:
        """The status as ``--json`` prints it."""
        return {
            "cassette": self.name,
            "layer": self.layer,
            "recorded_at": _iso(self.recorded_at),
            "backend": self.backend,
            "model": self.model,
            "asked_model": self.asked_model,
            "cli_version": self.cli_version,
            "agent": self.agent,
            "rules": list(self.rules),
            "rules_id": self.rules_id,
            "stale": self.stale,
            "reasons": list(self.reasons),
        }


def read_cassettes(directory: Path) -> list[Cassette]:
    """Every cassette below ``directory`` (``*.yaml``, in path order).

    Raises:
        InputError: no such folder, a folder holding no cassette, or a file that is not a
            readable cassette (naming it, the line and the fix).
    """
    if not directory.is_dir():
        raise InputError(
            f"no cassette folder at {directory}",
            fix="give the folder passed to --record DIR or --replay DIR "
            f"(record one with: skilltest scenarios --record {directory})",
        )
    files = sorted(p for p in directory.rglob("*.yaml") if p.is_file())
    if not files:
        raise InputError(
            f"no cassette (*.yaml) under {directory}",
            fix="give the folder passed to --record DIR or --replay DIR",
        )
    return [Cassette.load(path) for path in files]


def suite_now(name: str, *, directory: Path, given: Path | None = None) -> SuiteNow:
    """What the suite a cassette names (or ``given``, ``--suite``) asks for now: its rules and
    its model. The suite is looked for as named, then from the current folder, then from each
    folder above ``directory`` (a cassette names its suite relative to the repository).

    Raises:
        InputError: the suite file does not parse, or its ``replay:`` rules are malformed.
    """
    from skilltest.suite.loader import read_yaml

    path = given if given is not None else _find_suite(name, directory)
    if path is None:
        return SuiteNow(rules=None, where=name)
    data = read_yaml(path)
    if not isinstance(data, Mapping):
        raise InputError(
            "not a suite (expected a mapping)",
            location=str(path),
            fix="give a pressure, scenario or trigger suite file",
        )
    rules = Rules.from_suite(data.get("replay"), f"{path}#/replay")
    model = data.get("model")
    return SuiteNow(
        rules=tuple(rules_in_force(rules)),
        model=model if isinstance(model, str) else None,
        where=str(path) if given is not None else name,
    )


def _find_suite(name: str, directory: Path) -> Path | None:
    if not name:
        return None
    candidate = Path(name)
    if candidate.is_absolute():
        return candidate if candidate.is_file() else None
    for root in (Path.cwd(), *directory.resolve().parents):
        if (root / candidate).is_file():
            return root / candidate
    return None


def status_of(
    cassette: Cassette, *, directory: Path, wanted: Wanted, suite: SuiteNow
) -> CassetteStatus:
    """The cassette's facts and every reason it is stale against ``wanted`` and ``suite``."""
    recorded_at = _parse_time(cassette.recorded_at)
    asked = cassette.model or _asked_model(cassette)
    answered = _answered_model(cassette)
    cli = cassette.cli_version if cassette.layer in CLI_LAYERS else None
    reasons: list[str] = []
    if suite.rules is None:
        reasons.append(
            f"rules unknown: its suite {suite.where or UNKNOWN} is not found (give --suite FILE)"
        )
    elif tuple(cassette.rules) != suite.rules:
        changes = rule_changes(cassette.rules, suite.rules)
        reasons.append(
            "recorded under other normalisation rules ("
            + ("; ".join(changes) if changes else "in another order")
            + ")"
        )
    # An agent's cassette is judged by that agent's version, Claude Code's by claude's.
    who = cassette.agent or "claude"
    version_now = (
        wanted.cli_version if cassette.agent is None else wanted.agent_versions.get(cassette.agent)
    )
    if version_now is not None and cassette.layer in CLI_LAYERS:
        if cli is None:
            reasons.append(f"{who} version unknown (now {version_now})")
        elif cli != version_now:
            reasons.append(f"recorded with {who} {cli} (now {version_now})")
    model_now = wanted.model or suite.model
    if model_now is not None:
        seen = {m for m in (asked, answered) if m}
        if not seen:
            reasons.append(f"model unknown (now {model_now})")
        elif model_now not in seen:
            reasons.append(f"recorded with {asked or answered} (now {model_now})")
    if wanted.max_age_days is not None:
        limit = f"--max-age {wanted.max_age_days:g}"
        if recorded_at is None:
            reasons.append(f"recorded date unknown ({limit})")
        else:
            age = wanted.now - recorded_at
            if age > dt.timedelta(days=wanted.max_age_days):
                reasons.append(f"recorded {age.days} days ago ({limit})")
    return CassetteStatus(
        path=cassette.path,
        name=_relative(cassette.path, directory),
        layer=cassette.layer,
        recorded_at=recorded_at,
        backend=cassette.backend,
        model=answered or asked,
        asked_model=asked,
        cli_version=cli,
        agent=cassette.agent,
        rules=tuple(cassette.rules),
        reasons=tuple(reasons),
    )


def table(statuses: Sequence[CassetteStatus]) -> list[str]:
    """The statuses as aligned lines: a header, one line per cassette, then a summary."""
    header = ("cassette", "recorded", "backend", "model", "claude", "rules", "status")
    rows = [header]
    for status in statuses:
        rows.append(
            (
                status.name,
                status.recorded_at.date().isoformat() if status.recorded_at else UNKNOWN,
                status.backend or UNKNOWN,
                status.model or UNKNOWN,
                _cli_cell(status),
                status.rules_id,
                "stale: " + "; ".join(status.reasons) if status.stale else "fresh",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    lines = [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]
    return [*lines, summary(statuses)]


def _cli_cell(status: CassetteStatus) -> str:
    """The ``claude`` column: claude's version, another agent's named with it (``codex
    0.171.0``), ``-`` for a pressure cassette."""
    if status.layer not in CLI_LAYERS:
        return "-"
    version = status.cli_version or UNKNOWN
    return f"{status.agent} {version}" if status.agent is not None else version


def summary(statuses: Sequence[CassetteStatus]) -> str:
    """``3 cassettes: 2 fresh, 1 stale``."""
    stale = sum(1 for s in statuses if s.stale)
    noun = "cassette" if len(statuses) == 1 else "cassettes"
    return f"{len(statuses)} {noun}: {len(statuses) - stale} fresh, {stale} stale"


def _relative(path: Path, directory: Path) -> str:
    try:
        return path.relative_to(directory).as_posix()
    except ValueError:
        return str(path)


def _iso(moment: dt.datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment is not None else None


def _parse_time(text: str) -> dt.datetime | None:
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def _model_exchanges(cassette: Cassette) -> list[Any]:
    return [
        exchange
        for rep in sorted(cassette.repetitions)
        for exchange in cassette.repetitions[rep]
        if exchange.channel == "model"
    ]


def _asked_model(cassette: Cassette) -> str | None:
    """The model the first model request asked for."""
    for exchange in _model_exchanges(cassette):
        model = exchange.request.get("model")
        if isinstance(model, str) and model:
            return model
    return None


def _answered_model(cassette: Cassette) -> str | None:
    """The model the API named in its first answer that names one (a JSON body's ``model``,
    or a stream's first event carrying it: ``message_start``, ``response.created``, a chunk)."""
    for exchange in _model_exchanges(cassette):
        body = exchange.response.get("body")
        if isinstance(body, Mapping) and isinstance(body.get("model"), str):
            return str(body["model"])
        for _, data in exchange.response.get("events") or []:
            try:
                payload = json.loads(data)
            except (ValueError, TypeError, RecursionError):
                continue
            if not isinstance(payload, Mapping):
                continue
            for holder in (payload, payload.get("message"), payload.get("response")):
                if isinstance(holder, Mapping) and isinstance(holder.get("model"), str):
                    return str(holder["model"])
    return None
