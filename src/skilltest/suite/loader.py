"""Reads a YAML file and validates it against one of the shipped JSON Schemas.

Errors name the file, the JSON pointer of the offending value, what was expected and the fix.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from skilltest.errors import InputError, SuiteError


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The shipped JSON Schema ``skilltest/suite/schemas/<name>.schema.json``."""
    text = resources.files("skilltest.suite").joinpath(f"schemas/{name}.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_path(name: str) -> Path:
    """Where the schema file lives on disk (for editors' ``yaml-language-server`` lines)."""
    return Path(str(resources.files("skilltest.suite").joinpath(f"schemas/{name}.schema.json")))


def json_pointer(parts: Iterable[object]) -> str:
    """``["scenarios", 2, "id"]`` -> ``/scenarios/2/id`` (RFC 6901 escaping)."""
    escaped = [str(part).replace("~", "~0").replace("/", "~1") for part in parts]
    return "/" + "/".join(escaped) if escaped else ""


def read_yaml(path: Path, error: type[InputError] = SuiteError) -> Any:
    """Parses a YAML file; unreadable files and syntax errors become ``error`` with a line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(
            "file not found", location=str(path), fix="check the path (and the working directory)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read the file: {exc}", location=str(path)) from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(
            f"YAML syntax error: {problem}",
            location=where,
            fix="check indentation and quoting; quote patterns that contain ': ' or start with *",
        ) from exc


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator in ("anyOf", "oneOf"):
        wanted = error.schema.get("description") if isinstance(error.schema, dict) else None
        return f"not valid here: expected {wanted}" if wanted else str(error.message)
    if error.validator in ("type", "enum", "const"):
        return f"{error.instance!r} is not valid here: {error.message}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(
            (error.schema.get("properties") or {}) if isinstance(error.schema, dict) else []
        )
        hints = [
            f"{key!r}: did you mean {close[0]!r}?"
            for key in error.instance
            if key not in known and (close := difflib.get_close_matches(key, known, n=1))
        ]
        return str(error.message) + (" (" + "; ".join(hints) + ")" if hints else "")
    return str(error.message)


def reject_non_finite(
    data: Any,
    path: Path | str,
    error: type[InputError] = SuiteError,
    where: list[object] | None = None,
) -> None:
    """Refuses NaN and infinities anywhere in a loaded file, naming the JSON pointer."""
    where = where or []
    # YAML has .nan and .inf, and JSON Schema's minimum/maximum are false for NaN: a threshold
    # of .nan would pass every scenario.
    if isinstance(data, float) and not math.isfinite(data):
        raise error(
            f"{data!r} is not a number a threshold, weight or limit can be",
            location=f"{path}#{json_pointer(where)}",
            fix="write a finite number",
        )
    if isinstance(data, dict):
        for key, value in data.items():
            reject_non_finite(value, path, error, [*where, key])
    elif isinstance(data, list):
        for index, value in enumerate(data):
            reject_non_finite(value, path, error, [*where, index])


def validate(data: Any, schema_name: str, path: Path, error: type[InputError] = SuiteError) -> None:
    """Validates ``data`` against a shipped schema.

    Raises:
        InputError: (of class ``error``) naming the deepest violation by JSON pointer, and up
            to four more.
    """
    reject_non_finite(data, path, error)
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = sorted(
        validator.iter_errors(data),
        key=lambda e: (-len(e.absolute_path), list(map(str, e.absolute_path)), e.message),
    )
    if not errors:
        return
    best, others = errors[0], errors[1:5]
    lines = [_describe(best)]
    for other in others:
        lines.append(f"also at #{json_pointer(other.absolute_path)}: {_describe(other)}")
    wanted = best.schema.get("description") if isinstance(best.schema, dict) else None
    raise error(
        "\n  ".join(lines),
        location=f"{path}#{json_pointer(best.absolute_path)}",
        fix=f"expected {wanted}" if wanted else f"see the schema {schema_name}.schema.json",
    )


def load_validated(path: Path, schema_name: str, error: type[InputError] = SuiteError) -> Any:
    """Reads and validates a YAML file in one go."""
    data = read_yaml(path, error)
    validate(data, schema_name, path, error)
    return data


IGNORED_FOLDERS = frozenset({"output"})
"""Folders below a suite folder that never hold suites (raw transcripts are kept in ``output``)."""


def discover_suites(paths: Sequence[Path], default_dir: Path, *, example: str) -> list[Path]:
    """The suite files to run: the given files, the YAML files below given folders, or those
    below ``default_dir`` when no path is given.

    Args:
        paths: Files or folders from the command line.
        default_dir: The folder searched when ``paths`` is empty.
        example: A suite path shown in the fix of an error, e.g. ``tests/scenarios/<skill>.yaml``.

    Raises:
        SuiteError: a path that does not exist, or no suite found at all.
    """
    targets = list(paths) or [default_dir]
    found: list[Path] = []
    for target in targets:
        if target.is_dir():
            files = [*target.rglob("*.yaml"), *target.rglob("*.yml")]
            found.extend(
                sorted(
                    f for f in files if not IGNORED_FOLDERS & set(f.relative_to(target).parts[:-1])
                )
            )
        elif target.exists():
            found.append(target)
        else:
            raise SuiteError(
                "no such file or folder",
                location=str(target),
                fix=f"pass suite files ({example}) or a folder of them",
            )
    # A file named twice (`suites/ suites/a.yaml`) runs once, where it was first named.
    unique: dict[Path, Path] = {}
    for path in found:
        unique.setdefault(path.resolve(), path)
    found = list(unique.values())
    if not found:
        raise SuiteError(
            "no suite files (*.yaml, *.yml) found",
            location=", ".join(str(t) for t in targets),
            fix=f"create {example} or pass suite files",
        )
    return found


def model_script_path(data: dict[str, Any], path: Path) -> Path | None:
    """The suite's ``model_script:`` resolved against the suite's folder, or ``None``.

    Raises:
        SuiteError: the file named there does not exist.
    """
    script = data.get("model_script")
    if not script:
        return None
    resolved = (path.parent / script).resolve()
    if not resolved.is_file():
        raise SuiteError(
            f"model script {script!r} not found (looked at {resolved})",
            location=f"{path}#/model_script",
            fix="the path is relative to the suite file; `skilltest validate` checks both",
        )
    return resolved
