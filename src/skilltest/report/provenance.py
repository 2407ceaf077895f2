"""Where a run's numbers came from, and whether they say anything about a real model. Pure.

Every results file carries a ``provenance`` object: the backend, the models the API reported
in its answers, the ``claude`` CLI and toolkit versions, the date, the suite files with their
checksums and the command line. Every report made from a results file (HTML, Markdown, JUnit,
``skilltest gate``, ``skilltest compare``) shows it, so that nobody reads a scripted stand-in's
numbers as a model's.

A run's *origin* comes from what answered it, never from the ``--backend`` it was started
with: each run records where its model requests went and whether an answer carried the
skilltest emulator's mark (:class:`~skilltest.transcript.origin.AnsweredBy`), and the file's
``answered_by`` lists what its runs saw. The origin is one of:

``offline``  the skilltest emulator answered: an answer carried its mark (``x-skilltest-emulator``,
             whatever the run's backend and base URL), a model named itself ``...-emulated``,
             the backend was the emulator, or the cassettes replayed were recorded against it.
             A scripted stand-in: the numbers test the suite's wiring and the toolkit, and say
             nothing about a real model.
``live``     every run's requests went to the public Anthropic API (``api.anthropic.com``), or
             were replayed from cassettes recorded from it, and no answer was the stand-in's.
``unknown``  a run's requests went to another address (a loopback server or another host: what
             answered behind it cannot be told, and the file names it), or the file or the
             cassettes do not say what answered (written before skilltest recorded it).

Each run of a results file carries an ``id``: the run's invocation id and its place in the run
(layer, skill, scenario, arm, repetition), so the same run read twice, from one file given
twice or from two files that both hold it, is recognised as one.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skilltest.fields import field_dict
from skilltest.transcript.origin import (
    LOOPBACK,
    OTHER,
    AnsweredBy,
    distinct,
    emulated_model,
)

LIVE = "live"
OFFLINE = "offline"
UNKNOWN = "unknown"

EMULATOR = "emulator"
"""The backend whose answers are a scripted stand-in's."""
REPLAY = "replay"
"""The backend that answers from cassettes only."""

STAND_IN = "the skilltest emulator, a scripted stand-in"
"""What answers an offline run: never a model name."""


@dataclass(frozen=True)
class SuiteFile:
    """A suite file a run read, with its checksum."""

    path: str
    """As the run named it."""
    sha256: str | None
    """``sha256:<hex>`` of its bytes; ``None`` when it could not be read."""

    def to_dict(self) -> dict[str, Any]:
        """As the results file stores it."""
        return field_dict(self)


@dataclass(frozen=True)
class SourceTree:
    """A folder the runs read (a skill's, a plugin's), with a checksum of each file in it."""

    path: str
    """The folder, as the run named it."""
    kind: str
    """``skill`` or ``plugin``."""
    sha256: str
    """``sha256:<hex>`` of its files, paths and checksums together
    (:func:`skilltest.skills.tree_checksum`)."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Each file's path inside the folder and its ``sha256:<hex>``: what says which file
    changed."""

    def to_dict(self) -> dict[str, Any]:
        """As the results file stores it."""
        return {**field_dict(self), "files": dict(self.files)}


@dataclass(frozen=True)
class Provenance:
    """What produced a run's results."""

    run_id: str
    """This invocation's id; each run's ``id`` starts with it."""
    backend: str | None
    """``anthropic``, ``claude``, ``emulator`` or ``replay``; ``None`` when a file does not
    say."""
    recorded_with: tuple[str, ...] = ()
    """The backends the replayed cassettes were recorded against (``unknown`` for cassettes
    that do not say); empty when nothing was replayed."""
    models: tuple[str, ...] = ()
    """The models the API named in its answers, sorted; empty when none answered."""
    model_requested: str | None = None
    """The model the run asked for (``--model`` or the suite's), when it named one."""
    claude_version: str | None = None
    """The ``claude`` CLI version the runs used; ``None`` for runs without the CLI."""
    agent: str | None = None
    """The agent the runs went through (``claude-code``, ``opencode``, ``codex``); ``None`` for
    runs without one and in files written before skilltest recorded it."""
    agent_version: str | None = None
    """That agent's version, as it reported it."""
    skilltest_version: str | None = None
    """The toolkit version that ran."""
    started_at: str | None = None
    """When the run started, ISO 8601 in UTC."""
    finished_at: str | None = None
    """When the results were last written (the end, for a finished run), ISO 8601 in UTC;
    ``None`` in files written before skilltest recorded it."""
    duration_s: float | None = None
    """Wall time from the start to :attr:`finished_at`, in seconds."""
    suites: tuple[SuiteFile, ...] = ()
    """The suite files, with their checksums."""
    trees: tuple[SourceTree, ...] = ()
    """The skills' and plugins' folders the runs read, each with its files' checksums; empty in
    files written before skilltest recorded them."""
    command: tuple[str, ...] = ()
    """The command line that started the run (``skilltest pressure ...``); a Python caller's:
    ``python``, the entry point and the options it set."""
    shard: tuple[int, int] | None = None
    """``(i, n)``: the run was shard i of n (``--shard i/n``); ``None`` for a whole run."""
    merged_from: tuple[str, ...] = ()
    """The run ids of the shards ``skilltest merge`` made these results from; empty for a
    run's own results."""
    answered_by: tuple[AnsweredBy, ...] = ()
    """What answered the runs' model requests: each (endpoint, base URL, emulator's mark) the
    runs saw, once; empty in files written before skilltest recorded it."""
    rescored_from: Mapping[str, Any] | None = None
    """Results scored again from kept transcripts (``--rescore DIR``), nothing run: the
    folder, the runs that made the transcripts (backend, models, versions, dates, command) and
    the suite files' checksums then and now; ``None`` for results of runs."""
    clock: float | None = field(default=None, compare=False, repr=False)
    """The monotonic clock when the run started, for :attr:`duration_s`; never written."""

    @property
    def origin(self) -> str:
        """``live``, ``offline`` or ``unknown`` (see the module docstring)."""
        if self.stand_in:
            return OFFLINE
        if self.backend is None or UNKNOWN in self.recorded_with:
            return UNKNOWN
        if self.backend == REPLAY and not self.recorded_with:
            return UNKNOWN
        if not self.answered_by or self.unknown_endpoints:
            return UNKNOWN
        return LIVE

    @property
    def stand_in(self) -> bool:
        """Whether the skilltest emulator answered (see the module docstring)."""
        return (
            self.backend == EMULATOR
            or EMULATOR in self.recorded_with
            or any(seen.stand_in for seen in self.answered_by)
            or any(emulated_model(model) for model in self.models)
        )

    @property
    def unknown_endpoints(self) -> tuple[AnsweredBy, ...]:
        """The addresses runs sent requests to that are not the public API (a loopback
        server, another host), without the emulator's mark."""
        return tuple(
            seen
            for seen in self.answered_by
            if seen.endpoint in (LOOPBACK, OTHER) and not seen.stand_in
        )

    @property
    def offline(self) -> bool:
        """Whether the numbers come from the scripted stand-in."""
        return self.origin == OFFLINE

    def with_models(self, models: Iterable[str | None]) -> Provenance:
        """This provenance with the models the runs' answers named."""
        return replace(self, models=tuple(sorted({m for m in models if m})))

    def with_answered(self, observed: Iterable[AnsweredBy | None]) -> Provenance:
        """This provenance with what answered the runs (each observation once)."""
        return replace(self, answered_by=distinct((*self.answered_by, *observed)))

    def with_recorded(self, backends: Iterable[str | None]) -> Provenance:
        """This provenance with the backends the replayed cassettes were recorded against."""
        found = {b or UNKNOWN for b in backends}
        return replace(self, recorded_with=tuple(sorted(found | set(self.recorded_with))))

    def to_dict(self) -> dict[str, Any]:
        """As the results file stores it."""
        return {
            "run_id": self.run_id,
            "origin": self.origin,
            "backend": self.backend,
            "recorded_with": list(self.recorded_with),
            "models": list(self.models),
            "model_requested": self.model_requested,
            "claude_version": self.claude_version,
            "agent": None
            if self.agent is None
            else {"name": self.agent, "version": self.agent_version},
            "skilltest_version": self.skilltest_version,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "duration_s": self.duration_s,
            "suites": [suite.to_dict() for suite in self.suites],
            "trees": [tree.to_dict() for tree in self.trees],
            "command": list(self.command),
            "shard": None
            if self.shard is None
            else {"index": self.shard[0], "count": self.shard[1]},
            "merged_from": list(self.merged_from),
            "answered_by": [seen.to_dict() for seen in self.answered_by],
            **({"rescored_from": dict(self.rescored_from)} if self.rescored_from else {}),
        }


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _shard(value: Any) -> tuple[int, int] | None:
    if isinstance(value, Mapping):
        index, count = value.get("index"), value.get("count")
        if isinstance(index, int) and isinstance(count, int):
            return index, count
    return None


def trees_of(value: Any) -> tuple[SourceTree, ...]:
    """The ``trees`` a results file records, read back (entries of another shape left out)."""
    trees = []
    for item in value if isinstance(value, list) else ():
        if not isinstance(item, Mapping):
            continue
        path, kind, sha = item.get("path"), item.get("kind"), item.get("sha256")
        files = item.get("files")
        if isinstance(path, str) and isinstance(sha, str):
            trees.append(
                SourceTree(
                    path,
                    kind if isinstance(kind, str) else "skill",
                    sha,
                    {str(k): str(v) for k, v in files.items()}
                    if isinstance(files, Mapping)
                    else {},
                )
            )
    return tuple(trees)


def answered_of(value: Any) -> tuple[AnsweredBy, ...]:
    """The ``answered_by`` list a results file or a run records, read back."""
    if isinstance(value, Mapping):
        value = [value]
    if not isinstance(value, list):
        return ()
    return distinct(AnsweredBy.from_dict(item) for item in value)


def provenance_of(document: Mapping[str, Any]) -> Provenance:
    """The provenance a results document records; for files written before it was recorded,
    what their top-level keys say (the backend, the version; the origin of replayed answers
    is then unknown)."""
    data = document.get("provenance")
    if isinstance(data, Mapping):
        suites = tuple(
            SuiteFile(str(s.get("path")), s.get("sha256"))
            for s in data.get("suites") or []
            if isinstance(s, Mapping)
        )
        agent = _mapping(data.get("agent"))
        return Provenance(
            run_id=str(data.get("run_id") or ""),
            trees=trees_of(data.get("trees")),
            backend=data.get("backend") if isinstance(data.get("backend"), str) else None,
            recorded_with=_strings(data.get("recorded_with")),
            models=_strings(data.get("models")),
            model_requested=data.get("model_requested"),
            claude_version=data.get("claude_version"),
            agent=_text(agent.get("name")),
            agent_version=_text(agent.get("version")),
            skilltest_version=data.get("skilltest_version"),
            started_at=data.get("started_at"),
            finished_at=_text(data.get("finished_at")),
            duration_s=_seconds(data.get("duration_s")),
            suites=suites,
            command=_strings(data.get("command")),
            shard=_shard(data.get("shard")),
            merged_from=_strings(data.get("merged_from")),
            answered_by=answered_of(data.get("answered_by")),
            rescored_from=(
                dict(data["rescored_from"])
                if isinstance(data.get("rescored_from"), Mapping)
                else None
            ),
        )
    backend = document.get("backend")
    listed = document.get("suites") if document.get("layer") != "triggers" else None
    return Provenance(
        run_id="",
        backend=backend if isinstance(backend, str) else None,
        # Replayed without the cassettes' origin recorded: nobody can tell what answered.
        recorded_with=(UNKNOWN,) if backend == REPLAY else (),
        model_requested=document.get("model") if isinstance(document.get("model"), str) else None,
        claude_version=document.get("claude_version"),
        agent=_text(_mapping(document.get("agent")).get("name")),
        agent_version=_text(_mapping(document.get("agent")).get("version")),
        skilltest_version=document.get("skilltest_version"),
        suites=tuple(SuiteFile(s, None) for s in listed or () if isinstance(s, str)),
    )


def stand_in_source(provenance: Provenance) -> str:
    """What answered an offline run, in words: the emulator, cassettes recorded against it, or
    the emulator found behind another backend (``the skilltest emulator, a scripted stand-in,
    at http://127.0.0.1:4000 (its answers carry its mark), although the run's backend was
    claude``)."""
    if provenance.backend == EMULATOR:
        return STAND_IN
    if EMULATOR in provenance.recorded_with:
        return f"cassettes recorded against {STAND_IN}"
    marked = [seen for seen in provenance.answered_by if seen.stand_in]
    urls = [seen.base_url for seen in marked if seen.base_url]
    if urls:
        how = f"at {', '.join(urls)} (its answers carry its mark)"
    elif marked:
        how = "in the cassettes replayed (their answers carry its mark)"
    else:
        named = [model for model in provenance.models if emulated_model(model)]
        how = f"naming its model {', '.join(named)}"
    return f"{STAND_IN}, {how}, although the run's backend was {provenance.backend or '-'}"


def notice(provenance: Provenance) -> str | None:
    """The line every output of an offline run (or one of unknown origin) begins with;
    ``None`` for a live run."""
    origin = provenance.origin
    if origin == OFFLINE:
        return (
            f"offline: these numbers come from {stand_in_source(provenance)}, not a model; they "
            "say nothing about how a real model behaves"
        )
    if origin == UNKNOWN:
        return f"origin unknown: {unknown_text(provenance)}; they may come from a scripted stand-in"
    return None


def unknown_text(provenance: Provenance) -> str:
    """Why the origin of results is unknown: the addresses their requests went to, or that they
    do not say what answered."""
    endpoints = provenance.unknown_endpoints
    if endpoints and provenance.backend is not None and UNKNOWN not in provenance.recorded_with:
        shown = ", ".join(seen.named for seen in endpoints)
        return (
            f"the runs' requests went to {shown}, not the Anthropic API, and no answer said "
            "what answered there"
        )
    return (
        "these results do not say what answered (written, or their cassettes recorded, "
        "before skilltest recorded it)"
    )


def backend_text(provenance: Provenance) -> str:
    """``emulator (offline: a scripted stand-in)``, ``replay of cassettes recorded with
    anthropic``, ``claude``, ``claude (offline: answered by the skilltest emulator, a scripted
    stand-in)``."""
    backend = provenance.backend or "not recorded"
    if provenance.recorded_with:
        backend += f" of cassettes recorded with {', '.join(provenance.recorded_with)}"
    if provenance.origin == OFFLINE:
        named = provenance.backend == EMULATOR or EMULATOR in provenance.recorded_with
        backend += (
            " (offline: a scripted stand-in)"
            if named
            else " (offline: answered by the skilltest emulator, a scripted stand-in)"
        )
    elif provenance.origin == UNKNOWN and provenance.unknown_endpoints:
        backend += f" (at {', '.join(s.named for s in provenance.unknown_endpoints)})"
    return backend


def model_text(provenance: Provenance) -> str:
    """The models as the API reported them; an offline run's are named as the stand-in's."""
    if not provenance.models:
        return "none reported"
    shown = ", ".join(provenance.models)
    return f"{shown} (as the stand-in named itself)" if provenance.offline else shown


def suites_text(provenance: Provenance) -> str:
    """``tests/lgtm.yaml sha256:1a2b3c4d5e6f``, each suite file with its checksum's start."""
    return "; ".join(
        f"{suite.path} {suite.sha256[:19] if suite.sha256 else '(no checksum)'}"
        for suite in provenance.suites
    )


def agent_text(provenance: Provenance) -> str | None:
    """``codex 0.171.0``: the agent other than Claude Code the runs went through, with its
    version; ``None`` for Claude Code's runs and runs without an agent."""
    if provenance.agent in (None, "claude-code"):
        return None
    return f"{provenance.agent} {provenance.agent_version or '(version not recorded)'}"


def agent_field(provenance: Provenance) -> tuple[str, str]:
    """The agent's row of a report's header: ``agent: codex 0.171.0`` for another agent's runs,
    else ``claude CLI`` and its version (``-`` for runs without the CLI)."""
    other = agent_text(provenance)
    if other is not None:
        return ("agent", other)
    return ("claude CLI", provenance.claude_version or "-")


def fields(provenance: Provenance) -> list[tuple[str, str]]:
    """Every field as a name and its text, in the order reports show them."""
    return [
        ("backend", backend_text(provenance)),
        ("model", model_text(provenance)),
        agent_field(provenance),
        ("skilltest", provenance.skilltest_version or "-"),
        ("date", provenance.started_at or "not recorded"),
        ("suites", suites_text(provenance) or "-"),
        ("command", shlex.join(provenance.command) if provenance.command else "not recorded"),
        ("run id", provenance.run_id or "not recorded"),
        *(
            [("shard", f"{provenance.shard[0]}/{provenance.shard[1]}")]
            if provenance.shard is not None
            else []
        ),
        *(
            [("rescored from", rescored_text(provenance.rescored_from))]
            if provenance.rescored_from
            else []
        ),
        *(
            [
                (
                    "merged from",
                    f"{len(provenance.merged_from)} shards: " + ", ".join(provenance.merged_from),
                )
            ]
            if provenance.merged_from
            else []
        ),
    ]


def rescored_text(origin: Mapping[str, Any]) -> str:
    """``the transcripts kept in out/ by run 1a2b3c (emulator, claude 2.1.328, 2026-12-02T08:00Z);
    suite changed since: tests/lgtm.yaml``: where rescored results came from, in one line."""
    runs = [run for run in origin.get("runs") or () if isinstance(run, Mapping)]
    made = "; ".join(
        f"run {run.get('run_id') or '(id not recorded)'} ("
        + ", ".join(
            str(part)
            for part in (
                run.get("backend") or "backend not recorded",
                f"claude {run['claude_version']}" if run.get("claude_version") else None,
                run.get("last_run_at"),
            )
            if part
        )
        + ")"
        for run in runs
    )
    changed = [
        str(suite.get("path"))
        for suite in origin.get("suites") or ()
        if isinstance(suite, Mapping) and suite.get("changed")
    ]
    text = f"the transcripts kept in {origin.get('directory')} by {made or 'runs not recorded'}"
    return text + (f"; suite changed since: {', '.join(changed)}" if changed else "")


def duration_text(seconds: float | None) -> str:
    """A wall time as people read it: ``420 ms``, ``2.4 s``, ``12 s``, ``3 min 05 s``,
    ``1 h 02 min``; ``not recorded`` for ``None``."""
    if seconds is None:
        return "not recorded"
    if seconds < 1:
        return f"{1000 * seconds:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def summary(provenance: Provenance) -> str:
    """One line: backend, model, versions, date."""
    return ", ".join(
        f"{name} {value}"
        for name, value in fields(provenance)[:5]
        if not (name == "claude CLI" and value == "-")
    )


def run_id(prefix: str, *parts: object) -> str:
    """A run's id: its invocation's id, then its place in the run."""
    return "/".join((prefix, *(str(part) for part in parts)))


def with_ids(
    runs: Sequence[Mapping[str, Any]], prefix: str, *place: object
) -> list[dict[str, Any]]:
    """``runs`` (as the results file lists them), each with its ``id`` first: ``prefix``, then
    ``place`` (layer, skill, scenario...) and the run's own arm and repetition."""
    stamped = []
    for run in runs:
        parts = (*place, *((run["arm"],) if "arm" in run else ()), run.get("rep"))
        stamped.append({"id": run_id(prefix, *parts), **run})
    return stamped
