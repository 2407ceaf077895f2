"""Results files written atomically, so an interrupted run never leaves half a file."""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.files import kind_of, read_bytes, read_json
from skilltest.limits import MAX_RESULTS_BYTES
from skilltest.redact import known_redactor, map_strings
from skilltest.suite.loader import validate

RESULTS_SCHEMA_VERSION = 4
"""Version of every results file skilltest writes (4: a results file may be a matrix's, its
layer's document per cell under ``cells`` with the ``matrix`` axes; a single run's file is as in
3; 3: pass rates have exact intervals and mean
scores betting confidence sequences; a scenario's verdict reads its pass rates unless
``decide_by: mean``, and records ``decide_by``, ``method``, ``pass_delta`` and its interval; 2:
Wilson and Newcombe intervals, verdicts may be ``inconclusive``, each scenario records its K)."""

READABLE_RESULTS_VERSIONS = (3, RESULTS_SCHEMA_VERSION)
"""The results schema versions this skilltest reads (a version 3 file is a single run's)."""

RESULTS_LAYERS = ("pressure", "scenarios", "triggers")
"""The layers whose results files reports read."""


def write_results(path: Path, document: Any) -> None:
    """Writes a results file, every string with the secrets this process knows redacted (the
    environment's credentials, a suite's ``replay.redact`` values): a model answer or a tool
    result that repeats a key never reaches a file a CI job uploads."""
    write_json_atomic(path, map_strings(document, known_redactor()))


def write_report(path: Path, text: str) -> None:
    """Writes a report a person reads or a CI job uploads (HTML, Markdown, JUnit) atomically,
    with the secrets this process knows redacted, whatever the results it was rendered from."""
    write_text_atomic(path, known_redactor()(text))


def write_json_atomic(path: Path, data: Any) -> None:
    """Writes JSON to ``path`` through a temporary file in the same folder and a rename."""
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def output_problem(path: Path) -> str | None:
    """Why skilltest may not write ``path``, or ``None`` when it may: a regular file (replaced)
    or a path that does not exist yet (created).

    Every file skilltest writes is written through a temporary file and a rename, which would
    replace a device (``/dev/null``, ``/dev/full``), a named pipe or a socket with a regular
    file, or a folder's place; so anything else is refused, the command line before the run
    starts (``--results``, ``--junit``, ``--markdown``, ``--report``, ``--html``, ``merge -o``,
    ``compare --markdown``) and each write again.
    """
    kind = kind_of(path)
    if kind is None:
        return None
    return f"it is {kind}, not a regular file"


OUTPUT_FIX = "give the name of a regular file, or of a new file in a writable folder"
"""What to do about a path :func:`output_problem` refuses."""


def check_output(path: Path, *, location: str | None = None) -> Path:
    """``path``, when skilltest may write it (:func:`output_problem`).

    Raises:
        InputError: it is a device, a named pipe, a socket or a folder, naming it.
    """
    problem = output_problem(path)
    if problem is not None:
        raise InputError(
            f"cannot write the file: {problem}", location=location or str(path), fix=OUTPUT_FIX
        )
    return path


def write_text_atomic(path: Path, text: str) -> None:
    """Writes text to ``path`` through a temporary file and a rename.

    Raises:
        InputError: the file cannot be written there (a folder that cannot be created, no
            permission, a full disk, a device or a named pipe in its place), naming the file.
    """
    check_output(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise InputError(
            f"cannot write the file: {exc.strerror or exc}",
            location=str(path),
            fix="choose a file in a folder you can write to",
        ) from exc
    try:
        # mkstemp makes the file private; the file written follows the umask, as any other
        # file the user creates (a CI artifact a team shares, a report a web server serves).
        os.fchmod(fd, 0o666 & ~_umask())
        # Half a character (a lone surrogate from a JSON escape) is written as its escape.
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(
            f"cannot write the file: {exc.strerror or exc}", location=str(path)
        ) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@functools.cache
def _umask() -> int:
    """The process's umask (read by setting it and setting it back, once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_results(path: Path, layer: str) -> dict[str, Any]:
    """Reads a results file back (``--results``), checking its layer and schema version.

    Raises:
        InputError: not JSON, another layer's file, or a schema version this code cannot read.
    """
    return results_of_layer(str(path), _read_json(path), layer)


def results_of_layer(path: str, data: Any, layer: str) -> dict[str, Any]:
    """``data`` when it is one run's results document of ``layer`` that this skilltest reads
    (a file, or a cell of a matrix's file); ``path`` names it in errors.

    Raises:
        InputError: another layer's document, another schema version, a matrix's file, or a
            value outside the results schema, naming the place.
    """
    if not isinstance(data, dict) or data.get("layer") != layer:
        raise InputError(f"not a {layer} results file (no `layer: {layer}`)", location=path)
    check_results_version(path, data)
    if "cells" in data:
        raise InputError(
            "a matrix's results file (one run per cell, under `cells`), not a single run's",
            location=f"{path}#/cells",
            fix="pass a single run's results file (a run without --models, or one cell alone "
            "with --model M); skilltest gate, report, compare and merge read matrices' files, "
            "and skilltest.matrix.read_matrix in Python",
        )
    # Every figure a report, a comparison or the gate reads has the type and range skilltest
    # writes: a hand-edited or foreign file is refused here, at its place, not met part way.
    validate(data, "results", path, InputError, numbers="a results file can hold")
    return data


def check_results_version(path: Path | str, data: Mapping[str, Any]) -> None:
    """Raises unless ``data`` has a results ``schema_version`` this skilltest reads.

    Raises:
        InputError: another version, naming the file and the versions read.
    """
    if data.get("schema_version") not in READABLE_RESULTS_VERSIONS:
        raise InputError(
            f"results schema_version {data.get('schema_version')!r} is not "
            + " or ".join(map(str, READABLE_RESULTS_VERSIONS)),
            location=str(path),
            fix="rerun the suite with this version of skilltest",
        )


def read_any_results(path: Path) -> dict[str, Any]:
    """Reads a results file of any layer (``skilltest report``, ``skilltest compare``).

    Raises:
        InputError: not JSON, not a results file, or a schema version this code cannot read.
    """
    data = _read_json(path)
    layer = data.get("layer") if isinstance(data, dict) else None
    if layer not in RESULTS_LAYERS:
        raise InputError(
            f"not a pressure, scenarios or triggers results file (layer: {layer!r})",
            location=f"{path}#/layer",
            fix="pass what skilltest pressure, scenarios and triggers write with --results; "
            "leave other files out",
        )
    return results_of_layer(str(path), data, str(layer))


def _read_json(path: Path) -> Any:
    return _with_journal(path, _read_file(path))


def _with_journal(path: Path, data: Any) -> Any:
    """A pressure results file that a run still going (or killed outright) left incomplete,
    with the scenarios its journal holds (``<results>.journal.jsonl``): what had finished, read
    as an incomplete run. A line the kill cut short is left out."""
    from skilltest.report.outputs import journal_path

    journal = journal_path(path)
    if not (
        isinstance(data, dict)
        and data.get("layer") == "pressure"
        and data.get("complete") is False
        and data.get("interrupted") is False
        and isinstance(data.get("scenarios"), list)
        and journal.is_file()
    ):
        return data
    raw = read_bytes(
        journal,
        limit=MAX_RESULTS_BYTES,
        what="the results file's journal",
        large_fix="rerun the suite; a journal this large is not one skilltest wrote",
    )
    seen = {(s.get("skill"), s.get("id")) for s in data["scenarios"] if isinstance(s, dict)}
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            scenario = json.loads(line)
        except ValueError:
            continue  # the last line, cut short by the kill
        key = (scenario.get("skill"), scenario.get("id")) if isinstance(scenario, dict) else None
        if key is not None and key not in seen:
            seen.add(key)
            data["scenarios"].append(scenario)
    return data


def _read_file(path: Path) -> Any:
    return read_json(
        path,
        limit=MAX_RESULTS_BYTES,
        what="the results file",
        missing="no such results file",
        fix="pass a file written by --results (skilltest pressure, scenarios or triggers)",
    )
