"""Whether a document is valid against one of the shipped JSON Schemas, answered without
``jsonschema``: the common case, a valid file, costs no import of that library.

:func:`conforms` knows the keywords the shipped schemas use, with Draft 2020-12's meaning and
the ``jsonschema`` library's reading of them (``1.0`` is an integer, ``True`` is not a number
and not ``1``, ``pattern`` is ``re.search``). It answers ``True`` only for a document
``jsonschema`` accepts; for any other document, or a schema or value it does not know
(another keyword, a remote ``$ref``, a key that is not a string, a date), it answers
``False``, and the caller runs ``jsonschema`` itself, whose errors (what is wrong, where, and up
to four more) are then the same as ever.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sized
from functools import cache
from typing import Any

_ANNOTATIONS = frozenset(
    {"description", "title", "$schema", "$id", "$defs", "$comment", "default", "examples"}
)
"""Keywords that never make a document invalid."""

_Check = Callable[[Any, Any, Any], bool]


def conforms(data: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``data`` is certainly valid against ``schema`` (its ``$ref`` read inside it).

    ``False`` means invalid or not known here: ask ``jsonschema``.
    """
    return _valid(data, schema, schema)


def _valid(data: Any, schema: Any, root: Any) -> bool:
    if schema is True:
        return True
    if schema is False or not isinstance(schema, Mapping):
        return False
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        check = _KEYWORDS.get(keyword)
        if check is None or not check(data, value, (schema, root)):
            return False
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _of_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "number":
        return _is_number(value)
    if name == "integer":
        return _is_number(value) and (isinstance(value, int) or float(value).is_integer())
    return False


def _type(data: Any, wanted: Any, _: Any) -> bool:
    names = wanted if isinstance(wanted, list) else [wanted]
    return any(_of_type(data, name) for name in names)


def _equal(one: Any, other: Any) -> bool:
    """Equality as ``jsonschema`` has it: booleans equal only booleans, and lists and mappings
    compare by their members with the same rule."""
    if isinstance(one, bool) or isinstance(other, bool):
        return isinstance(one, bool) and isinstance(other, bool) and one == other
    if isinstance(one, str) or isinstance(other, str):
        return isinstance(one, str) and isinstance(other, str) and one == other
    if isinstance(one, list) or isinstance(other, list):
        return (
            isinstance(one, list)
            and isinstance(other, list)
            and len(one) == len(other)
            and all(_equal(a, b) for a, b in zip(one, other, strict=True))
        )
    if isinstance(one, dict) or isinstance(other, dict):
        return (
            isinstance(one, dict)
            and isinstance(other, dict)
            and one.keys() == other.keys()
            and all(_equal(one[key], other[key]) for key in one)
        )
    if one is None or other is None:
        return one is None and other is None
    return _is_number(one) and _is_number(other) and one == other


def _const(data: Any, wanted: Any, _: Any) -> bool:
    return _equal(data, wanted)


def _enum(data: Any, wanted: Any, _: Any) -> bool:
    return isinstance(wanted, list) and any(_equal(data, each) for each in wanted)


def _bound(compare: Callable[[Any, Any], bool]) -> _Check:
    def check(data: Any, limit: Any, _: Any) -> bool:
        if not _is_number(data):
            return True
        return _is_number(limit) and compare(data, limit)

    return check


def _size(kind: type[Sized], compare: Callable[[int, Any], bool]) -> _Check:
    def check(data: Any, limit: Any, _: Any) -> bool:
        if not isinstance(data, kind):
            return True
        return isinstance(limit, int) and not isinstance(limit, bool) and compare(len(data), limit)

    return check


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _pattern(data: Any, pattern: Any, _: Any) -> bool:
    if not isinstance(data, str):
        return True
    return isinstance(pattern, str) and _compiled(pattern).search(data) is not None


def _string_keys(data: dict[Any, Any]) -> bool:
    return all(isinstance(key, str) for key in data)


def _properties(data: Any, properties: Any, context: Any) -> bool:
    if not isinstance(data, dict):
        return True
    if not isinstance(properties, Mapping) or not _string_keys(data):
        return False
    root = context[1]
    return all(_valid(data[key], sub, root) for key, sub in properties.items() if key in data)


def _additional(data: Any, sub: Any, context: Any) -> bool:
    if not isinstance(data, dict):
        return True
    schema, root = context
    if "patternProperties" in schema or not _string_keys(data):
        return False
    known = schema.get("properties") or {}
    return all(_valid(value, sub, root) for key, value in data.items() if key not in known)


def _property_names(data: Any, sub: Any, context: Any) -> bool:
    if not isinstance(data, dict):
        return True
    return _string_keys(data) and all(_valid(key, sub, context[1]) for key in data)


def _required(data: Any, names: Any, _: Any) -> bool:
    if not isinstance(data, dict):
        return True
    return isinstance(names, list) and all(name in data for name in names)


def _items(data: Any, sub: Any, context: Any) -> bool:
    if not isinstance(data, list):
        return True
    if "prefixItems" in context[0]:
        return False
    return all(_valid(each, sub, context[1]) for each in data)


def _all_of(data: Any, subs: Any, context: Any) -> bool:
    return isinstance(subs, list) and all(_valid(data, sub, context[1]) for sub in subs)


def _any_of(data: Any, subs: Any, context: Any) -> bool:
    return isinstance(subs, list) and any(_valid(data, sub, context[1]) for sub in subs)


def _one_of(data: Any, subs: Any, context: Any) -> bool:
    # Exactly one: a second match, or one this module cannot tell about, leaves it to jsonschema.
    return isinstance(subs, list) and sum(_valid(data, sub, context[1]) for sub in subs) == 1


def _if(data: Any, condition: Any, context: Any) -> bool:
    schema, root = context
    then, otherwise = schema.get("then", True), schema.get("else", True)
    if _valid(data, then, root) and _valid(data, otherwise, root):
        return True  # whichever way ``if`` goes
    if _valid(data, condition, root):
        return _valid(data, then, root)
    return _certainly_invalid(data, condition) and _valid(data, otherwise, root)


def _certainly_invalid(data: Any, condition: Any) -> bool:
    """Whether ``data`` fails an ``if`` for sure: only the shapes the shipped schemas use (a
    ``properties`` of ``const`` or ``enum``, ``required``) are told apart from not knowing."""
    if not isinstance(condition, Mapping) or not set(condition) <= {
        "properties",
        "required",
        "type",
    }:
        return False
    if "type" in condition and not _type(data, condition["type"], None):
        return True
    if not isinstance(data, dict):
        return False
    required = condition.get("required", [])
    if isinstance(required, list) and any(name not in data for name in required):
        return True
    for key, sub in (condition.get("properties") or {}).items():
        if key not in data or not isinstance(sub, Mapping):
            continue
        if set(sub) == {"const"} and not _equal(data[key], sub["const"]):
            return True
        if set(sub) == {"enum"} and not _enum(data[key], sub["enum"], None):
            return True
    return False


def _branch(data: Any, sub: Any, context: Any) -> bool:
    return True  # ``then`` and ``else`` are read with their ``if``


def _ref(data: Any, reference: Any, context: Any) -> bool:
    root = context[1]
    if not isinstance(reference, str) or not reference.startswith("#"):
        return False
    target: Any = root
    for part in reference[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            return False
        target = target[part]
    return _valid(data, target, root)


_KEYWORDS: dict[str, _Check] = {
    "type": _type,
    "const": _const,
    "enum": _enum,
    "minimum": _bound(lambda value, limit: value >= limit),
    "maximum": _bound(lambda value, limit: value <= limit),
    "exclusiveMinimum": _bound(lambda value, limit: value > limit),
    "exclusiveMaximum": _bound(lambda value, limit: value < limit),
    "minLength": _size(str, lambda size, limit: size >= limit),
    "maxLength": _size(str, lambda size, limit: size <= limit),
    "minItems": _size(list, lambda size, limit: size >= limit),
    "maxItems": _size(list, lambda size, limit: size <= limit),
    "minProperties": _size(dict, lambda size, limit: size >= limit),
    "maxProperties": _size(dict, lambda size, limit: size <= limit),
    "pattern": _pattern,
    "properties": _properties,
    "additionalProperties": _additional,
    "propertyNames": _property_names,
    "required": _required,
    "items": _items,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "if": _if,
    "then": _branch,
    "else": _branch,
    "$ref": _ref,
}
"""What each keyword the shipped schemas use demands of a document."""
