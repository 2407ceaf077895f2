"""Reading the runs an output folder keeps, for scoring them again without running anything.

Every scenario and trigger run that keeps its raw output writes, beside its transcript
(``<arm>-<rep>.ndjson``, or ``<rep>.ndjson`` for a trigger run), a trace
(``.trace.jsonl``, :mod:`skilltest.trace`) whose header says which run it was (skill, scenario
or query, arm or variant, repetition) and what produced it (backend, models, ``claude``
version, date, the suite file's checksum, the command line, the run's id), and whose last line
says how the run ended. :func:`kept_runs` reads them; :func:`rescored_from` sums up the runs
they came from, for the provenance of the results scored from them.

Nothing here starts a process or opens a socket: the layers' ``rescore`` modules score the kept
transcripts against the suites as they are now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.flow.provenance import checksum
from skilltest.report.provenance import Provenance, answered_of, trees_of
from skilltest.trace.read import read_trace
from skilltest.transcript.origin import AnsweredBy, distinct

TRACE_SUFFIX = ".trace.jsonl"
"""How a kept run's trace file ends."""


@dataclass(frozen=True)
class KeptRun:
    """One run whose output an output folder keeps."""

    trace: Path
    """Its trace file."""
    transcript: Path
    """Its raw stream-json output, beside the trace."""
    header: Mapping[str, Any]
    """The trace's first line: which run it was and what produced it."""
    outcome: Mapping[str, Any]
    """The trace's last line: how the run ended (``error``, ``ended``, ``duration_s``...)."""

    @property
    def stdout(self) -> str:
        """What the CLI printed (redacted as kept)."""
        return self.transcript.read_text(encoding="utf-8", errors="replace")

    @property
    def stderr_path(self) -> Path | None:
        """The CLI's stderr, when it is kept beside the transcript."""
        path = self.transcript.with_name(self.transcript.stem + ".stderr.txt")
        return path if path.is_file() else None

    @property
    def original_run_id(self) -> str | None:
        """The id of the invocation that made the run (the first part of its run id)."""
        value = self.header.get("run_id")
        return value.split("/", 1)[0] if isinstance(value, str) and value else None

    def text(self, key: str) -> str | None:
        """A header field that is text, else ``None``."""
        value = self.header.get(key)
        return value if isinstance(value, str) else None


def _refuse_layout(directory: Path, found: str, *, layer: str) -> InputError:
    return InputError(
        f"{directory} {found}, so its runs cannot be scored again without running them",
        location=str(directory),
        fix=f"give the output folder a skilltest {layer} run wrote (output/ beside each suite, or "
        f"its --output-dir), or run skilltest {layer} once with this skilltest to keep "
        "transcripts with their traces",
    )


def kept_runs(directory: Path, *, layer: str) -> list[KeptRun]:
    """Every run of ``layer`` (``scenarios`` or ``triggers``) kept under ``directory``, in path
    order.

    Raises:
        InputError: ``directory`` is missing or not a folder; it keeps no trace of a run of the
            layer (an older layout: transcripts without traces, or another layer's output); a
            trace that cannot be read, or names no run, or whose transcript is gone.
    """
    if not directory.exists():
        raise InputError(
            f"no such output folder: {directory}",
            location=str(directory),
            fix=f"give the folder a skilltest {layer} run kept its transcripts in (output/ beside "
            "each suite, or the --output-dir it was given)",
        )
    if not directory.is_dir():
        raise InputError(
            f"{directory} is a file, not an output folder",
            location=str(directory),
            fix=f"give the folder holding <skill>/<scenario>/ that skilltest {layer} wrote",
        )
    traces = sorted(directory.rglob("*" + TRACE_SUFFIX))
    runs: list[KeptRun] = []
    for trace in traces:
        lines = read_trace(trace)
        header = lines[0]
        if (header.get("layer") or "scenarios") != layer:
            continue
        outcome = lines[-1] if len(lines) > 1 and lines[-1].get("kind") == "outcome" else {}
        needed = ("skill", "query", "variant", "rep") if layer == "triggers" else None
        needed = needed or ("skill", "scenario", "arm", "rep")
        missing = [key for key in needed if header.get(key) is None]
        if missing or not outcome:
            what = f"no {', '.join(missing)} in its header" if missing else "no outcome line"
            raise InputError(
                f"the trace has {what}: it does not say which run it kept or how it ended",
                location=f"{trace}:1" if missing else str(trace),
                fix=f"rerun skilltest {layer} to write the run's trace again, or remove the file",
            )
        transcript = trace.with_name(trace.name.removesuffix(TRACE_SUFFIX) + ".ndjson")
        if not transcript.is_file():
            raise InputError(
                f"the transcript of this trace is missing: {transcript}",
                location=str(trace),
                fix="keep each run's .ndjson beside its .trace.jsonl, or remove the trace",
            )
        runs.append(KeptRun(trace=trace, transcript=transcript, header=header, outcome=outcome))
    if not runs:
        transcripts = any(directory.rglob("*.ndjson"))
        if transcripts:
            found = "holds transcripts (.ndjson) but no trace (.trace.jsonl) of a " + layer + " run"
        else:
            found = f"holds no kept run of skilltest {layer} (no .trace.jsonl under it)"
        raise _refuse_layout(directory, found, layer=layer)
    return runs


def rescored_from(
    directory: Path, runs: Sequence[KeptRun], suites: Iterable[Path]
) -> dict[str, Any]:
    """What the rescored results came from: the folder, each run (invocation) its kept runs
    were made by (backend, models, ``claude`` and skilltest versions, dates, command line), and
    each suite file's checksum then (as the kept runs recorded it) and now."""
    by_run: dict[str, list[KeptRun]] = {}
    for run in runs:
        by_run.setdefault(run.original_run_id or "", []).append(run)
    originals = []
    for run_id, kept in by_run.items():
        dates = sorted(d for run in kept if (d := run.text("date")))
        originals.append(
            {
                "run_id": run_id or None,
                "backend": _one(run.text("backend") for run in kept),
                "origin": _one(run.text("origin") for run in kept),
                "recorded_with": sorted({r for run in kept if (r := run.text("recorded_with"))}),
                "models": sorted({m for run in kept for m in run.header.get("models") or ()}),
                "answered_by": [
                    seen.to_dict()
                    for seen in distinct(
                        AnsweredBy.from_dict(run.header.get("answered_by")) for run in kept
                    )
                ],
                "trees": sorted(
                    {
                        (str(t.get("path")), str(t.get("kind")), str(t.get("sha256")))
                        for run in kept
                        for t in run.header.get("trees") or ()
                        if isinstance(t, Mapping)
                    }
                ),
                "claude_version": _one(run.text("cli_version") for run in kept),
                "skilltest_version": _one(run.text("toolkit_version") for run in kept),
                "first_run_at": dates[0] if dates else None,
                "last_run_at": dates[-1] if dates else None,
                "command": list(kept[0].header.get("command") or []),
                "runs": len(kept),
            }
        )
    then: dict[str, set[str]] = {}
    by_name: dict[str, set[str]] = {}
    for run in runs:
        path, sha = run.text("suite_path"), run.text("suite_checksum")
        if path is not None and sha is not None:
            then.setdefault(path, set()).add(sha)
            by_name.setdefault(Path(path).name, set()).add(sha)
    files = []
    for suite in suites:
        now = checksum(suite)
        # A suite copied or moved since is known by its file name.
        before = sorted(then.get(str(suite)) or by_name.get(suite.name) or set())
        files.append(
            {
                "path": str(suite),
                "sha256_then": before[0] if len(before) == 1 else (before or None),
                "sha256_now": now,
                "changed": bool(before) and before != [now],
            }
        )
    return {"directory": str(directory), "runs": originals, "suites": files}


def _one(values: Iterable[str | None]) -> str | None:
    """The value every kept run gives, else ``None`` (none, or they differ)."""
    found = {value for value in values if value is not None}
    return found.pop() if len(found) == 1 else None


def rescore_provenance(provenance: Provenance, origin: Mapping[str, Any]) -> Provenance:
    """A rescore's own provenance (its date, command and suites now) with what answered the
    kept runs: their backend, cassettes' origin, models and ``claude`` version, so that results
    scored again from an emulator's transcripts are still offline, and ``rescored_from``."""
    runs = origin.get("runs") or []
    backends = {run.get("backend") for run in runs}
    backend = backends.pop() if len(backends) == 1 else None
    versions = {run.get("claude_version") for run in runs}
    return replace(
        provenance,
        backend=backend,
        recorded_with=tuple(sorted({r for run in runs for r in run.get("recorded_with") or ()})),
        models=tuple(sorted({m for run in runs for m in run.get("models") or ()})),
        answered_by=distinct(seen for run in runs for seen in answered_of(run.get("answered_by"))),
        claude_version=versions.pop() if len(versions) == 1 else None,
        # The skills as the kept runs ran them: a skill changed since makes the results stale.
        trees=trees_of(
            [
                {"path": path, "kind": kind, "sha256": sha}
                for path, kind, sha in sorted(
                    {tuple(t) for run in runs for t in run.get("trees") or ()}
                )
            ]
        ),
        rescored_from=dict(origin),
    )
