"""Reading shards' results files and checking that they are the shards of one run."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.report.files import read_any_results
from skilltest.report.provenance import Provenance, SourceTree, provenance_of
from skilltest.transcript.origin import distinct


@dataclass(frozen=True)
class ShardFile:
    """One shard's results file."""

    path: str
    """As given."""
    document: dict[str, Any]
    """Its results document."""

    @property
    def shard(self) -> dict[str, Any]:
        """Its ``shard`` object."""
        return self.document["shard"]

    @property
    def index(self) -> int:
        """Which shard, from 1."""
        return int(self.shard["index"])

    @property
    def provenance(self) -> Provenance:
        """What produced it."""
        return provenance_of(self.document)


@dataclass(frozen=True)
class Shards:
    """Every shard of one run, in shard order, checked."""

    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    files: tuple[ShardFile, ...]
    """By shard index."""
    units: tuple[str, ...]
    """Every unit of the run (``skill/id``), in suite order."""

    @property
    def order(self) -> dict[str, int]:
        """Each unit's place in the run."""
        return {unit: place for place, unit in enumerate(self.units)}


def _shard_of(path: str, document: Mapping[str, Any]) -> None:
    shard = document.get("shard")
    if not isinstance(shard, Mapping):
        raise InputError(
            "not the results of a shard (no `shard`: the run had no --shard i/n)",
            location=f"{path}#/shard",
            fix="merge the results files of the runs with --shard 1/N ... N/N; a whole run's "
            "results need no merge",
        )
    for key, kind in (("index", int), ("count", int), ("units", list), ("assigned", list)):
        if not isinstance(shard.get(key), kind):
            raise InputError(
                f"`shard.{key}` is missing or not a {kind.__name__}",
                location=f"{path}#/shard/{key}",
                fix="merge results files as skilltest wrote them",
            )


def read_shards(paths: Sequence[Path]) -> Shards:
    """The shards' results files, read and checked.

    Raises:
        InputError: a file that is not a shard's results, shards of different runs, a shard
            given twice or missing; each names the file, the place and the fix.
    """
    files = []
    for path in paths:
        document = read_any_results(path)
        _shard_of(str(path), document)
        files.append(ShardFile(str(path), document))
    return check(files)


def _differs(first: ShardFile, other: ShardFile, place: str, mine: Any, theirs: Any) -> None:
    if mine != theirs:
        raise InputError(
            f"{_shown(theirs)} here, {_shown(mine)} in {first.path}: these are not shards of "
            "one run",
            location=f"{other.path}#/{place}",
            fix="merge the shards of one run: the same suites, options, skilltest and claude "
            "versions, one --shard i/N for each i",
        )


def _shown(value: Any) -> str:
    if isinstance(value, list) and len(value) > 4:
        return "[" + ", ".join(map(str, value[:4])) + f", ... ({len(value)})]"
    return repr(value)


def check(files: Sequence[ShardFile]) -> Shards:
    """The shards, in shard order, when they are the shards of one run.

    Raises:
        InputError: see :func:`read_shards`.
    """
    if not files:
        raise InputError("no results files to merge", fix="give the shards' results files")
    first = files[0]
    layer = first.document.get("layer")
    count = int(first.shard["count"])
    for other in files[1:]:
        _differs(first, other, "layer", layer, other.document.get("layer"))
        _differs(first, other, "shard/count", count, other.shard["count"])
    seen: dict[int, ShardFile] = {}
    for file in files:
        if file.index in seen:
            raise InputError(
                f"shard {file.index}/{count} is given twice: here and in {seen[file.index].path}",
                location=f"{file.path}#/shard/index",
                fix="give each shard's results file once",
            )
        seen[file.index] = file
    ordered = [seen[index] for index in sorted(seen)]
    first = ordered[0]
    mine = first.provenance
    for other in ordered[1:]:
        theirs = other.provenance
        _differs(first, other, "shard/units", first.shard["units"], other.shard["units"])
        suites = [(s.path, s.sha256) for s in mine.suites]
        _differs(
            first, other, "provenance/suites", suites, [(s.path, s.sha256) for s in theirs.suites]
        )
        # Each shard read the skills of its own scenarios: those both read must be the same.
        common = {t.path for t in mine.trees} & {t.path for t in theirs.trees}
        _differs(
            first,
            other,
            "provenance/trees",
            sorted((t.path, t.sha256) for t in mine.trees if t.path in common),
            sorted((t.path, t.sha256) for t in theirs.trees if t.path in common),
        )
        for name in ("skilltest_version", "claude_version", "backend", "model_requested"):
            _differs(first, other, f"provenance/{name}", getattr(mine, name), getattr(theirs, name))
        options, others = first.shard.get("options") or {}, other.shard.get("options") or {}
        for name in sorted(set(options) | set(others)):
            _differs(first, other, f"shard/options/{name}", options.get(name), others.get(name))
    units = tuple(str(unit) for unit in first.shard["units"])
    _check_cover(ordered, units, count)
    _check_runs_once(ordered)
    return Shards(layer=str(layer), files=tuple(ordered), units=units)


def _check_runs_once(files: Sequence[ShardFile]) -> None:
    """No run twice in a shard, runs known by their content: a run copied under a new id would
    count twice in the merged file (two shards never share a scenario: see
    :func:`_check_cover`)."""
    from skilltest.merge.claims import repeated, units

    for file in files:
        for name, unit in units(file.document):
            copies = repeated(name, [r for r in unit.get("runs") or () if isinstance(r, Mapping)])
            if copies:
                raise InputError(
                    f"{copies[0]}: merged, it would count twice",
                    location=file.path,
                    fix="merge the results files as the shards wrote them",
                )


def _check_cover(files: Sequence[ShardFile], units: Sequence[str], count: int) -> None:
    """Every unit in exactly one shard, and every shard given."""
    owner: dict[str, ShardFile] = {}
    for file in files:
        for unit in file.shard["assigned"]:
            if unit in owner:
                raise InputError(
                    f"{unit} is in shard {file.index} and in shard {owner[unit].index} "
                    f"({owner[unit].path}): the shards split the run differently",
                    location=f"{file.path}#/shard/assigned",
                    fix="run every shard with the same --durations file (or none)",
                )
            owner[unit] = file
    given = {file.index for file in files}
    missing = [index for index in range(1, count + 1) if index not in given]
    if missing:
        left = [unit for unit in units if unit not in owner]
        shown = ", ".join(left[:5]) + (f" and {len(left) - 5} more" if len(left) > 5 else "")
        raise InputError(
            f"shard {', '.join(f'{i}/{count}' for i in missing)} is missing"
            + (f" (its scenarios: {shown})" if left else " (it had no work, but wrote results)"),
            location=", ".join(file.path for file in files),
            fix="add the results file of every shard from 1 to "
            f"{count} (--shard i/{count}; a shard with no work writes one too)",
        )
    stray = [unit for unit in units if unit not in owner]
    if stray:
        raise InputError(
            f"no shard ran {', '.join(stray[:5])}",
            location=f"{files[0].path}#/shard/assigned",
            fix="run every shard with the same --durations file (or none)",
        )


def _wall_time(started: str | None, finished: str | None) -> float | None:
    """Seconds from ``started`` to ``finished`` (ISO 8601 in UTC, as provenance writes them);
    ``None`` when either is missing or unreadable."""
    try:
        start, end = (
            dt.datetime.strptime(value or "", "%Y-%m-%dT%H:%M:%SZ") for value in (started, finished)
        )
    except ValueError:
        return None
    return max((end - start).total_seconds(), 0.0)


def merged_provenance(shards: Shards, command: Sequence[str]) -> dict[str, Any]:
    """The merged file's provenance: the shards' (checked to agree), with every model and
    endpoint that answered, every skill and plugin folder read, the earliest start, the latest
    finish and the wall time between them (the shards ran side by side), the merge's command
    and the shards' run ids."""
    provenances = [file.provenance for file in shards.files]
    first = provenances[0]
    ids = tuple(p.run_id for p in provenances)
    run_id = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:12]
    started = sorted(p.started_at for p in provenances if p.started_at)
    finished = sorted(p.finished_at for p in provenances if p.finished_at)
    every = all(p.finished_at for p in provenances)
    start = started[0] if started else None
    end = finished[-1] if finished and every else None
    merged = dataclasses.replace(
        first,
        run_id=run_id,
        models=tuple(sorted({m for p in provenances for m in p.models})),
        recorded_with=tuple(sorted({r for p in provenances for r in p.recorded_with})),
        answered_by=distinct(seen for p in provenances for seen in p.answered_by),
        trees=tuple(sorted({t.path: t for p in provenances for t in p.trees}.values(), key=_path)),
        started_at=start,
        finished_at=end,
        duration_s=_wall_time(start, end),
        command=tuple(command),
        shard=None,
        merged_from=ids,
    )
    return merged.to_dict()


def _path(tree: SourceTree) -> str:
    return tree.path


def merge(shards: Shards, *, command: Sequence[str] = ()) -> dict[str, Any]:
    """One results document from the shards (see the package's docstring)."""
    from skilltest.merge.layers import MERGERS

    first = shards.files[0].document
    documents = [file.document for file in shards.files]
    merged = dict(first)
    merged.update(MERGERS[shards.layer](shards))
    merged["complete"] = all(bool(d.get("complete")) for d in documents)
    merged["interrupted"] = any(bool(d.get("interrupted")) for d in documents)
    if "stopped" in first:
        merged["stopped"] = next((d["stopped"] for d in documents if d.get("stopped")), None)
    merged["provenance"] = merged_provenance(shards, command)
    replays: list[Mapping[str, Any]] = [
        d["replay"] for d in documents if isinstance(d.get("replay"), Mapping)
    ]
    if replays:
        merged["replay"] = {
            **replays[0],
            "misses": [miss for replay in replays for miss in replay.get("misses") or []],
        }
    merged["shard"] = None
    return merged
