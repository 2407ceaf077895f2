"""What the gate checks of a results file before it believes it: that the files on disk are the
ones its runs ran (``fresh``), and that what it says follows from the runs it holds
(``consistent``).

``fresh``       Each suite file's checksum, and each skill's and plugin's folder, file by file,
                as the run recorded them, against the files on disk now (found from the folder
                the gate runs in, as the run named them): a suite or a skill changed since makes
                the results stale, and each change is named (the suite file, the skill's file
                changed, added or removed). A file that does not record its skills' checksums
                (written before skilltest recorded them) has unknown freshness, which blocks
                too: rerun the suite. ``--no-stale-check`` skips the check (a gate in another
                checkout, results of files since moved).
``consistent``  Every figure of every scenario (trigger query) is judged again from the runs the
                file holds, with the layer's own functions, and so is what spans them and what
                answered (:mod:`skilltest.merge.claims`); a figure written otherwise, or a run
                that is a copy of another under a new id, blocks, named by scenario and field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skilltest.report.provenance import Provenance, SourceTree

if TYPE_CHECKING:
    from skilltest.gate.read import ResultsFile
    from skilltest.merge.claims import Mismatch

SKIP = "pass --no-stale-check to gate without comparing them"
"""What a stale-check block says to do instead of rerunning."""
RERUN = "rerun the suite"


def _short(sha: str | None) -> str:
    return (sha or "none")[:19]


def stale(provenance: Provenance, *, cwd: Path | None = None) -> tuple[str, ...]:
    """Each difference between the files a run read and the files on disk now: suite files by
    checksum, skill and plugin folders file by file; the freshness unknown when the run
    recorded no folder. Empty when everything is as the run read it.

    Args:
        provenance: The results' provenance.
        cwd: What relative paths are found from (default: the current folder).
    """
    from skilltest.flow.provenance import checksum

    base = cwd or Path.cwd()
    found: list[str] = []
    for suite in provenance.suites:
        path = _on_disk(suite.path, base)
        now = checksum(path) if path.is_file() else None
        if now is None:
            found.append(f"suite {suite.path} is not on disk")
        elif suite.sha256 is None:
            found.append(f"suite {suite.path}: the run recorded no checksum")
        elif now != suite.sha256:
            found.append(
                f"suite {suite.path} changed since the run "
                f"({_short(suite.sha256)} then, {_short(now)} now)"
            )
    if not provenance.trees:
        found.append(
            "freshness unknown: the file does not record its skills' checksums (written before "
            "skilltest recorded them)"
        )
    for tree in provenance.trees:
        found += _tree_changes(tree, _on_disk(tree.path, base))
    return tuple(found)


def _on_disk(named: str, base: Path) -> Path:
    path = Path(named)
    return path if path.is_absolute() else base / path


def _tree_changes(tree: SourceTree, folder: Path) -> list[str]:
    from skilltest.skills import tree_checksum, tree_files

    if not folder.is_dir():
        return [f"{tree.kind} {tree.path} is not on disk"]
    files = tree_files(folder)
    if tree_checksum(files) == tree.sha256:
        return []
    if not tree.files:  # rescored results keep the folder's checksum only
        return [f"{tree.kind} {tree.path} changed since the runs (its checksum)"]
    changed = [
        name for name, sha in files.items() if name in tree.files and tree.files[name] != sha
    ]
    added = [name for name in files if name not in tree.files]
    removed = [name for name in tree.files if name not in files]
    parts = [
        *(f"{name} changed" for name in changed),
        *(f"{name} added" for name in added),
        *(f"{name} removed" for name in removed),
    ]
    return [f"{tree.kind} {tree.path}: {', '.join(parts) or 'changed'} since the run"]


def fresh_rule(files: Sequence[ResultsFile]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``fresh`` rule's reasons to block and its evidence."""
    checked = [file for file in files if file.stale is not None]
    blocks = tuple(f"{file.name}: {change}" for file in checked for change in file.stale or ())
    if blocks:
        unknown = any("freshness unknown" in line for line in blocks)
        return blocks, (
            f"fix: {RERUN} with this version, or {SKIP}"
            if unknown
            else f"fix: {RERUN} with the files as they are now, or {SKIP}",
        )
    if not checked:
        return (), ("not checked (--no-stale-check): the results may be of other files",)
    suites = {s.path for file in checked for s in file.provenance.suites}
    trees = {(t.kind, t.path) for file in checked for t in file.provenance.trees}
    skills = sum(1 for kind, _ in trees if kind == "skill")
    plugins = len(trees) - skills
    evidence = [
        f"{len(suites)} suite files and {skills} skill folders"
        + (f" and {plugins} plugin folders" if plugins else "")
        + " on disk as the runs read them"
    ]
    if len(checked) < len(files):
        evidence.append(f"{len(files) - len(checked)} files not checked (--no-stale-check)")
    return (), tuple(evidence)


def consistent_rule(
    files: Sequence[ResultsFile], claims: Sequence[str] = ()
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``consistent`` rule's reasons to block and its evidence: one line per unit (its
    first field written otherwise, and how many more), and each claim of a matrix's file about
    itself that its cells do not give (:func:`skilltest.gate.cells.matrix_claims`)."""
    blocks: list[str] = list(claims)
    notes: list[str] = []
    for file in files:
        by_unit: dict[str, list[Mismatch]] = {}
        for mismatch in file.mismatches or ():
            by_unit.setdefault(mismatch.unit, []).append(mismatch)
        for found in by_unit.values():
            first = found[0]
            more = [m.field for m in found[1:]]
            extra = (
                f" (and {len(more)} more: {', '.join(more[:4])}{', …' if len(more) > 4 else ''})"
                if more
                else ""
            )
            blocks.append(f"{file.name}: {first}{extra}")
        if file.mismatches and file.version_note:
            notes.append(f"{file.name}: {file.version_note}")
    if blocks:
        return tuple(blocks), tuple(notes)
    checked = [file for file in files if file.mismatches is not None]
    units = sum(len(file.scenarios) for file in checked)
    runs = sum(file.runs for file in checked)
    evidence = (
        [
            f"{units} scenarios and {runs} runs recomputed from the files: every figure, verdict "
            "and origin as written, no run given twice"
        ]
        if checked
        else []
    )
    evidence += [
        f"{file.name}: not checked: its figures are taken as written"
        for file in files
        if file.mismatches is None
    ]
    return (), tuple(evidence)
