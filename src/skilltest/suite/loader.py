"""Reads a YAML file and validates it against one of the shipped JSON Schemas.

Errors name the file, the JSON pointer of the offending value, what was expected and the fix.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilltest.errors import InputError, SuiteError
from skilltest.files import decode, read_bytes
from skilltest.limits import MAX_YAML_BYTES
from skilltest.suite.repository import Repository, repository_of

if TYPE_CHECKING:
    import jsonschema


_SCHEMAS = Path(__file__).parent / "schemas"
"""The shipped schemas, beside this module when skilltest is installed as files."""


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The shipped JSON Schema ``skilltest/suite/schemas/<name>.schema.json``."""
    beside = _SCHEMAS / f"{name}.schema.json"
    if beside.is_file():
        text = beside.read_text()
    else:  # installed some other way (a zip): what importlib.resources finds
        from importlib import resources

        text = (
            resources.files("skilltest.suite").joinpath(f"schemas/{name}.schema.json").read_text()
        )
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_path(name: str) -> Path:
    """Where the schema file lives on disk (for editors' ``yaml-language-server`` lines)."""
    from importlib import resources

    return Path(str(resources.files("skilltest.suite").joinpath(f"schemas/{name}.schema.json")))


def json_pointer(parts: Iterable[object]) -> str:
    """``["scenarios", 2, "id"]`` -> ``/scenarios/2/id`` (RFC 6901 escaping)."""
    escaped = [str(part).replace("~", "~0").replace("/", "~1") for part in parts]
    return "/" + "/".join(escaped) if escaped else ""


def parse_yaml(text: str, source: str, error: type[InputError] = SuiteError) -> Any:
    """Parses YAML text with the loader's bounds on nesting, aliases and duplicate keys.

    Args:
        text: The YAML.
        source: The file (or other name) that errors name, with the line.
        error: The class of error raised.

    Raises:
        InputError: (of class ``error``) a syntax error, or a bound exceeded, at ``source:line``.
    """
    from skilltest.suite import bounded_yaml  # PyYAML only once a file is read

    check_printable(text, source, error)
    return bounded_yaml.parse(text, source, error)


_UNPRINTABLE = "[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
"""Characters YAML does not allow in a file: control bytes (NUL, SOH, ESC ...) but tab and line
ends, lone surrogates, U+FFFE and U+FFFF. PyYAML's reader refuses them with this very pattern,
so that it is compiled once for both, when the first file is read."""


@cache
def _unprintable() -> re.Pattern[str]:
    return re.compile(_UNPRINTABLE)


def check_printable(text: str, source: str, error: type[InputError] = SuiteError) -> None:
    """Refuses text holding a character YAML does not allow, at its line and column.

    Raises:
        InputError: (of class ``error``) at ``source:line:column`` of the first such character.
    """
    found = _unprintable().search(text)
    if found is None:
        return
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    raise error(
        f"character U+{ord(found.group()):04X} is not allowed in YAML (a control character)",
        location=f"{source}:{line}:{column}",
        fix='remove it, or write it as an escape inside a double-quoted string ("\\x1b")',
    )


_PARSED: OrderedDict[bytes, Any] = OrderedDict()
"""The last files parsed, by a digest of their bytes: a command that reads a file twice (validate
reads it to learn its kind, then loads it) parses it once."""
_PARSED_KEPT = 16
_PARSED_LOCK = threading.Lock()


def _copy_of(data: Any) -> Any:
    """A copy of parsed YAML that shares nothing mutable with ``data``: its mappings and lists
    are new, its strings, numbers, booleans and nulls the same; anything else is copied deeply."""
    kind = type(data)
    if kind is dict:
        return {key: _copy_of(value) for key, value in data.items()}
    if kind is list:
        return [_copy_of(item) for item in data]
    if data is None or kind in (str, int, float, bool):
        return data
    return copy.deepcopy(data)


def read_yaml(path: Path, error: type[InputError] = SuiteError) -> Any:
    """Parses a YAML file within the bounds of :mod:`skilltest.limits`.

    Raises:
        InputError: (of class ``error``) a missing, unreadable, too large or non-UTF-8 file, a
            syntax error, too deep a nesting, an alias expansion beyond its budget or a
            duplicate key; each names the file and, where there is one, the line.
    """
    raw = read_bytes(
        path,
        limit=MAX_YAML_BYTES,
        error=error,
        too_large="a suite or model script may be",
        large_fix="split it into several files (a folder of suites runs as one)",
        missing_fix="check the path (and the working directory)",
    )
    digest = hashlib.sha256(raw).digest()
    with _PARSED_LOCK:
        if digest in _PARSED:
            _PARSED.move_to_end(digest)
            return _copy_of(_PARSED[digest])
    text = decode(
        raw,
        path,
        error=error,
        column=True,
        fix="save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8 FILE > NEW`)",
    )
    data = parse_yaml(text, str(path), error)
    with _PARSED_LOCK:
        _PARSED[digest] = _copy_of(data)
        while len(_PARSED) > _PARSED_KEPT:
            _PARSED.popitem(last=False)
    return data


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator in ("anyOf", "oneOf"):
        wanted = error.schema.get("description") if isinstance(error.schema, dict) else None
        return f"not valid here: expected {wanted}" if wanted else str(error.message)
    if error.validator in ("type", "enum", "const"):
        # jsonschema's own message repeats the whole value, which may be a long list
        message = str(error.message).replace(repr(error.instance), _shown(error.instance))
        return f"{_shown(error.instance)} is not valid here: {message}"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return _unexpected_keys(error.instance, error.schema)
    # "'<a 10,000-character id>' is too long" says no more than its first characters do.
    return str(error.message).replace(repr(error.instance), _shown(error.instance))


def _unexpected_keys(instance: dict[Any, Any], schema: Any) -> str:
    """The keys the schema does not accept, the one likely meant, and every key it accepts."""
    import difflib  # only a file with a wrong key needs it

    properties = (schema.get("properties") or {}) if isinstance(schema, dict) else {}
    known = [str(key) for key in properties]
    unexpected = [key for key in instance if key not in known]
    hints = [
        (f"{key!r}: " if len(unexpected) > 1 else "") + f"did you mean {close[0]!r}?"
        for key in unexpected
        if (close := difflib.get_close_matches(str(key), known, n=1))
    ]
    named = ", ".join(repr(key) for key in unexpected)
    verb = "was" if len(unexpected) == 1 else "were"
    hint = "; " + "; ".join(hints) if hints else ""
    accepted = f"; accepted: {', '.join(known)}" if known else ""
    return f"Additional properties are not allowed ({named} {verb} unexpected{hint}){accepted}"


SHOWN_CHARS = 80
"""How much of a wrong value an error message repeats."""


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def reject_non_finite(
    data: Any,
    path: Path | str,
    error: type[InputError] = SuiteError,
    where: list[object] | None = None,
    *,
    what: str = "a threshold, weight or limit",
) -> None:
    """Refuses NaN and infinities anywhere in a loaded file, naming the JSON pointer and
    ``what`` the numbers of such a file are."""
    where = where or []
    # YAML has .nan and .inf, and JSON Schema's minimum/maximum are false for NaN: a threshold
    # of .nan would pass every scenario.
    if isinstance(data, float) and not math.isfinite(data):
        raise error(
            f"{data!r} is not a number {what} can be",
            location=f"{path}#{json_pointer(where)}",
            fix="write a finite number",
        )
    if isinstance(data, dict):
        for key, value in data.items():
            reject_non_finite(value, path, error, [*where, key], what=what)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            reject_non_finite(value, path, error, [*where, index], what=what)


@cache
def _part(schema_name: str, definition: str) -> dict[str, Any]:
    """A shipped schema that validates against its ``#/$defs/<definition>``, made once."""
    schema = load_schema(schema_name)
    # The schema's own definitions stay reachable; only the root's constraints go.
    return {
        **{k: v for k, v in schema.items() if k not in ("required", "type", "description")},
        "$ref": f"#/$defs/{definition}",
        "description": schema["$defs"][definition].get("description", ""),
    }


def validate(
    data: Any,
    schema_name: str,
    path: Path | str,
    error: type[InputError] = SuiteError,
    *,
    definition: str | None = None,
    numbers: str = "a threshold, weight or limit",
) -> None:
    """Validates ``data`` against a shipped schema.

    Args:
        data: The parsed file (or part of one).
        schema_name: The schema, ``suite/schemas/<name>.schema.json``.
        path: The file, as messages name it.
        error: The class of error raised.
        definition: Validate against ``#/$defs/<definition>`` of the schema instead of its
            root (a part of a file, such as a markdown file's frontmatter).

    Raises:
        InputError: (of class ``error``) naming the deepest violation by JSON pointer, and up
            to four more.
    """
    schema = load_schema(schema_name) if definition is None else _part(schema_name, definition)
    if data is None:
        raise error(
            "the file is empty (or holds only comments)",
            location=f"{path}#",
            fix=f"expected {schema.get('description', 'a mapping')}",
        )
    reject_non_finite(data, path, error, what=numbers)
    from skilltest.suite.conforms import conforms

    if conforms(data, schema):
        return  # valid: jsonschema is asked only what is wrong with a file
    import jsonschema  # on first use, so that importing the loader stays cheap for every command

    validator = jsonschema.Draft202012Validator(schema)
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


IGNORED_FOLDERS = frozenset({"output", "worlds", "mocks", "results"})
"""Folders below a suite folder that never hold suites (raw transcripts are kept in ``output``,
MCP mocks in ``mocks``, plugin eval reports in ``results``)."""

NOT_SUITES = frozenset({"case.yaml"})
"""Files below a suite folder that are not suites: a plugin eval case (``skilltest scenarios``
runs an eval folder as eval cases)."""


SUITE_SUFFIXES = (".yaml", ".yml")
"""What a suite file's name ends with."""


EVALS_FILE = "evals.json"
"""A skill's test cases as Anthropic's skill-creator keeps them, in ``<skill>/evals/``."""


def _suites_below(folder: Path) -> list[Path]:
    # A folder of skill-creator's test cases, or the skill holding one, is that one suite.
    for evals in (folder / EVALS_FILE, folder / "evals" / EVALS_FILE):
        if evals.is_file() and (evals.parent == folder or (folder / "SKILL.md").is_file()):
            return [evals]
    files = [*folder.rglob("*.yaml"), *folder.rglob("*.yml")]
    return sorted(
        f
        for f in files
        if not IGNORED_FOLDERS & set(f.relative_to(folder).parts[:-1]) and f.name not in NOT_SUITES
    )


def is_suite_name(target: Path) -> bool:
    """Whether a command-line target that is not a file or folder reads as a bare suite name
    (``lgtm``): no folder in it and no ``.yaml``/``.yml`` ending."""
    text = str(target)
    separators = {"/", os.sep, *([os.altsep] if os.altsep else [])}
    return (
        not target.exists()
        and not any(sep in text for sep in separators)
        and target.suffix not in SUITE_SUFFIXES
        and text not in ("", ".", "..")
    )


def find_named_suites(name: str, folders: Sequence[Path], *, example: str) -> list[Path]:
    """The suites called ``<name>.yaml`` or ``<name>.yml`` anywhere below ``folders``.

    Raises:
        SuiteError: none is called so, naming the suites there are.
    """
    below = [path for folder in folders if folder.is_dir() for path in _suites_below(folder)]
    found = [path for path in below if path.stem == name]
    if found:
        return found
    names = sorted({path.stem for path in below})
    where = ", ".join(f"{folder}/" for folder in folders)
    import difflib  # only a suite name that is not found needs it

    close = difflib.get_close_matches(name, names, n=1)
    if not names:
        fix = f"pass a suite file ({example}); there is no suite below {where}"
    else:
        fix = (f"did you mean {close[0]!r}? " if close else "") + (
            f"the suites below {where} are: {', '.join(names)}"
        )
    raise SuiteError(
        f"no such file or folder, and no suite named {name!r} below {where}",
        location=name,
        fix=fix,
    )


def discover_suites(
    paths: Sequence[Path],
    default_dir: Path,
    *,
    example: str,
    name_dirs: Sequence[Path] | None = None,
) -> list[Path]:
    """The suite files to run: the given files, the YAML files below given folders, or those
    below ``default_dir`` when no path is given.

    A target that does not exist and is a bare name (no folder, no ``.yaml``/``.yml``: ``lgtm``)
    selects the suites of that name below ``default_dir`` (or ``name_dirs``), at any depth:
    ``skilltest pressure lgtm`` runs ``tests/skill-pressure/lgtm.yaml``.

    Args:
        paths: Files, folders or suite names from the command line.
        default_dir: The folder searched when ``paths`` is empty.
        example: A suite path shown in the fix of an error, e.g. ``tests/scenarios/<skill>.yaml``.
        name_dirs: The folders a bare name is looked up in (default: ``default_dir``).

    Raises:
        SuiteError: a path that does not exist, a name no suite has, or no suite found at all.
    """
    targets = list(paths) or [default_dir]
    found: list[Path] = []
    for target in targets:
        if target.is_dir():
            found.extend(_suites_below(target))
        elif target.exists():
            found.append(target)
        elif is_suite_name(target):
            folders = name_dirs or [default_dir]
            found.extend(find_named_suites(str(target), folders, example=example))
        else:
            raise SuiteError(
                "no such file or folder",
                location=str(target),
                fix=f"pass suite files ({example}), a folder of them, or a suite's name",
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


def model_script_path(
    data: dict[str, Any], path: Path, repository: Repository | None = None
) -> Path | None:
    """The suite's ``model_script:`` resolved against the suite's folder, or ``None``.

    Args:
        data: The suite.
        path: The suite file.
        repository: Where the script must lie (default: the suite's repository).

    Raises:
        SuiteError: the file named there does not exist, or lies outside the repository.
    """
    script = data.get("model_script")
    if not script:
        return None
    repository = repository or repository_of(path)
    resolved = repository.inside(
        path.parent / script, written=str(script), location=f"{path}#/model_script"
    )
    if not resolved.is_file():
        raise SuiteError(
            f"model script {script!r} not found (looked at {resolved})",
            location=f"{path}#/model_script",
            fix="the path is relative to the suite file; `skilltest validate` checks both",
        )
    return resolved
