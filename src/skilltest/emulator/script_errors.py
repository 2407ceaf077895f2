"""Turns a JSON Schema error in a model script into a message and a fix a person can act on."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jsonschema


def _pointer(path: Any) -> str:
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in path]
    return "/" + "/".join(parts)


def _show(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
}


def _expected_type(expected: object) -> str:
    if isinstance(expected, list):
        return " or ".join(_TYPE_NAMES.get(str(name), str(name)) for name in expected)
    return _TYPE_NAMES.get(str(expected), str(expected))


def describe_schema_error(
    error: jsonschema.ValidationError, document: object
) -> tuple[str, str, str]:
    """``(json_pointer, message, fix)`` for one schema error in ``document``."""
    path = list(error.absolute_path)
    pointer = _pointer(path)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    validator = error.validator
    value = error.instance

    if validator == "additionalProperties" and isinstance(value, Mapping):
        allowed = sorted(schema.get("properties", {}))
        unknown = sorted(key for key in value if key not in allowed)
        key = str(unknown[0]) if unknown else "?"
        close = difflib.get_close_matches(key, allowed, n=1)
        fix = f"did you mean {close[0]!r}? " if close else ""
        fix += "allowed keys here: " + ", ".join(allowed)
        return _pointer([*path, key]), f"unknown key {key!r}", fix
    if validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else "?"
        where = "the script" if not path else f"this {_kind_of(path)}"
        return pointer, f"{where} is missing the required key {missing!r}", _required_fix(missing)
    if validator == "type":
        return (
            pointer,
            f"expected {_expected_type(error.validator_value)}, got {_show(value)}",
            _type_fix(path, error.validator_value),
        )
    if validator == "const":
        return (
            pointer,
            f"must be {_show(error.validator_value)}, got {_show(value)}",
            "schema_version: 1 is the only version"
            if path == ["schema_version"]
            else f"write {_show(error.validator_value)} or remove the key",
        )
    if validator == "enum":
        choices = ", ".join(_show(choice) for choice in schema.get("enum", []))
        return pointer, f"{_show(value)} is not one of the allowed values", f"use one of {choices}"
    if validator in ("minimum", "maximum"):
        bound = "at least" if validator == "minimum" else "at most"
        return (
            pointer,
            f"{_show(value)} is too {'small' if validator == 'minimum' else 'large'}",
            f"use a value {bound} {error.validator_value}",
        )
    if validator == "minItems":
        return pointer, "the list is empty", "give at least one item, or remove the key"
    if validator == "minLength":
        return pointer, "the string is empty", "write a non-empty value, or remove the key"
    if validator == "pattern":
        return (
            pointer,
            f"{_show(value)} is not a valid rule id",
            "use letters, digits and . _ : - (starting with a letter or digit)",
        )
    if validator == "oneOf" and path and path[-1] == "turn":
        return (
            pointer,
            f"expected a positive integer or a list of them, got {_show(value)}",
            "write e.g. 'turn: 1' or 'turn: [2, 3]' (1 is the first assistant response)",
        )
    if validator == "oneOf" and path and path[-1] == "side_request":
        kinds = schema["oneOf"][1]["enum"]
        return (
            pointer,
            f"expected true, false or a side-request kind, got {_show(value)}",
            "use true or one of " + ", ".join(kinds),
        )
    return pointer, error.message, "see docs/model-script.md for the format"


def _kind_of(path: list[Any]) -> str:
    if len(path) >= 2 and path[-2] == "rules":
        return "rule"
    if "tool_calls" in path:
        return "tool call"
    if path[-1] == "described":
        return "'described' condition"
    return str(path[-1])


def _required_fix(key: str) -> str:
    return {
        "schema_version": "add 'schema_version: 1' at the top of the script",
        "id": "give the rule a unique id, e.g. 'id: call-bash'",
        "name": "name the tool, e.g. 'name: Bash'",
        "min_overlap": "say how many words must be shared, e.g. 'described: {min_overlap: 2}'",
    }.get(key, f"add {key!r}")


def _type_fix(path: list[Any], expected: object) -> str:
    if path and path[-1] == "rules":
        return "write rules as a list: 'rules:' then '- id: ...' entries"
    if path and path[-1] == "tools":
        return "write tools as a list of names, e.g. 'tools: [Bash]'"
    if path and path[-1] == "described":
        return "write 'described: {min_overlap: 2}'"
    if expected == "string":
        return "quote the value in the YAML file"
    return f"write {_expected_type(expected)} here"
