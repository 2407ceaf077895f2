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
_Dialect = tuple[Mapping[str, _Check], frozenset[str]]
"""The keywords a dialect checks, by name, and those that never make a document invalid."""


def conforms(data: Any, schema: Mapping[str, Any]) -> bool:
    """Whether ``data`` is certainly valid against ``schema`` (its ``$ref`` read inside it).

    ``False`` means invalid or not known here: ask ``jsonschema``.

    The schema is turned once into nested Python functions, one per keyword (what :func:`_valid`
    would look up and check on every call), kept for the schemas last asked about.
    """
    key = id(schema)
    found = _COMPILED.get(key)
    if found is None or found[0] is not schema:
        found = (schema, _Compiler(schema).node(schema))
        _COMPILED[key] = found
        while len(_COMPILED) > _COMPILED_KEPT:
            del _COMPILED[next(iter(_COMPILED))]
    return found[1](data)


_COMPILED: dict[int, tuple[Mapping[str, Any], Callable[[Any], bool]]] = {}
"""The schemas compiled, by identity (each entry holds its schema, so an identity is not
reused while it is kept)."""
_COMPILED_KEPT = 64


def conforms_openapi(data: Any, schema: Any, document: Mapping[str, Any], version: str) -> bool:
    """Whether ``data`` is certainly valid against ``schema``, a schema inside the OpenAPI
    ``document`` (``version`` ``3.0`` or ``3.1``), as ``openapi-schema-validator`` reads it
    (``OAS30ReadValidator``, ``OAS31Validator``, no format checker), its ``$ref`` read inside
    ``document``.

    ``False`` means invalid or not known here (a ``pattern``, which that library reads as an
    ECMAScript regex; a ``discriminator``; an identifier that moves where references resolve):
    ask ``openapi-schema-validator``.
    """
    dialect = _OPENAPI_30 if version == "3.0" else _OPENAPI_31 if version == "3.1" else None
    return dialect is not None and _valid(data, schema, document, dialect)


def _valid(data: Any, schema: Any, root: Any, dialect: _Dialect) -> bool:
    if schema is True:
        return True
    if schema is False or not isinstance(schema, Mapping):
        return False
    keywords, annotations = dialect
    for keyword, value in schema.items():
        if keyword in annotations:
            continue
        check = keywords.get(keyword)
        if check is None or not check(data, value, (schema, root, dialect)):
            return False
    return True


def _sub(data: Any, schema: Any, context: Any) -> bool:
    """``data`` against a schema inside the one being checked (same root, same dialect)."""
    return _valid(data, schema, context[1], context[2])


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
    return all(_sub(data[key], sub, context) for key, sub in properties.items() if key in data)


def _additional(data: Any, sub: Any, context: Any) -> bool:
    if not isinstance(data, dict):
        return True
    schema = context[0]
    if "patternProperties" in schema or not _string_keys(data):
        return False
    known = schema.get("properties") or {}
    return all(_sub(value, sub, context) for key, value in data.items() if key not in known)


def _property_names(data: Any, sub: Any, context: Any) -> bool:
    if not isinstance(data, dict):
        return True
    return _string_keys(data) and all(_sub(key, sub, context) for key in data)


def _required(data: Any, names: Any, _: Any) -> bool:
    if not isinstance(data, dict):
        return True
    return isinstance(names, list) and all(name in data for name in names)


def _items(data: Any, sub: Any, context: Any) -> bool:
    if not isinstance(data, list):
        return True
    if "prefixItems" in context[0]:
        return False
    return all(_sub(each, sub, context) for each in data)


def _all_of(data: Any, subs: Any, context: Any) -> bool:
    return isinstance(subs, list) and all(_sub(data, sub, context) for sub in subs)


def _any_of(data: Any, subs: Any, context: Any) -> bool:
    return isinstance(subs, list) and any(_sub(data, sub, context) for sub in subs)


def _one_of(data: Any, subs: Any, context: Any) -> bool:
    # Exactly one: a second match, or one this module cannot tell about, leaves it to jsonschema.
    return isinstance(subs, list) and sum(_sub(data, sub, context) for sub in subs) == 1


def _if(data: Any, condition: Any, context: Any) -> bool:
    schema = context[0]
    then, otherwise = schema.get("then", True), schema.get("else", True)
    if _sub(data, then, context) and _sub(data, otherwise, context):
        return True  # whichever way ``if`` goes
    if _sub(data, condition, context):
        return _sub(data, then, context)
    return _certainly_invalid(data, condition) and _sub(data, otherwise, context)


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
    if not isinstance(reference, str) or not reference.startswith("#") or "%" in reference:
        return False  # another document, or escapes jsonschema would unquote first
    target: Any = context[1]
    for part in reference[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            return False
        target = target[part]
    return _sub(data, target, context)


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

_JSON_SCHEMA: _Dialect = (_KEYWORDS, _ANNOTATIONS)
"""Draft 2020-12, as the shipped schemas use it."""

_OPENAPI_ANNOTATIONS = frozenset(
    {"description", "title", "default", "example", "examples", "deprecated", "readOnly"}
    | {"xml", "externalDocs", "$comment", "$defs"}
    # No format checker is given to the validators: a format is an annotation.
    | {"format"}
)
"""Keywords no OpenAPI schema object is refused for (read, not written)."""


def _oas30_type(data: Any, wanted: Any, context: Any) -> bool:
    # OpenAPI 3.0: one type name, no "null" (a None is valid only with ``nullable: true``)
    # and an integer is an int (1.0 is not one, as in JSON Schema draft 4).
    if data is None:
        return context[0].get("nullable") is True
    if wanted == "integer":
        return isinstance(data, int) and not isinstance(data, bool)
    return wanted in ("object", "array", "string", "boolean", "number") and _of_type(data, wanted)


def _oas30_bound(check: _Check, exclusive: str) -> _Check:
    def bound(data: Any, limit: Any, context: Any) -> bool:
        # Draft 4's exclusiveMinimum/Maximum is a boolean beside the bound: left to the library.
        return exclusive not in context[0] and check(data, limit, context)

    return bound


def _not_write_only(data: Any, write_only: Any, _: Any) -> bool:
    return write_only is False  # a write-only property is refused in an answer


_OPENAPI_30: _Dialect = (
    {
        **{
            name: _KEYWORDS[name]
            for name in (
                "enum",
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
                "minProperties",
                "maxProperties",
                "properties",
                "additionalProperties",
                "required",
                "items",
                "allOf",
                "anyOf",
                "oneOf",
                "$ref",
            )
        },
        "type": _oas30_type,
        "minimum": _oas30_bound(_KEYWORDS["minimum"], "exclusiveMinimum"),
        "maximum": _oas30_bound(_KEYWORDS["maximum"], "exclusiveMaximum"),
        "writeOnly": _not_write_only,
    },
    _OPENAPI_ANNOTATIONS | {"nullable"},
)
"""OpenAPI 3.0's schema objects, as ``OAS30ReadValidator`` reads them."""

_OPENAPI_31: _Dialect = (
    {name: check for name, check in _KEYWORDS.items() if name != "pattern"},
    _OPENAPI_ANNOTATIONS | {"writeOnly"},
)
"""OpenAPI 3.1's schema objects (JSON Schema 2020-12), as ``OAS31Validator`` reads them."""


# The compiled form of the Draft 2020-12 reading above: the same answers, keyword for keyword
# (tests/suite/test_conforms.py holds both to jsonschema).

_Test = Callable[[Any], bool]


def _always(data: Any) -> bool:
    return True


def _never(data: Any) -> bool:
    return False


class _Compiler:
    """Turns the schemas under one root into functions of the document."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.done: dict[int, _Test] = {}
        self.kept: list[Any] = []  # the schemas compiled, so that their identities stay theirs

    def node(self, schema: Any) -> _Test:
        if schema is True:
            return _always
        if schema is False or not isinstance(schema, Mapping):
            return _never
        key = id(schema)
        found = self.done.get(key)
        if found is not None:
            return found
        compiled: list[_Test] = []

        def forward(data: Any) -> bool:  # a schema reached again through $ref while compiling
            return compiled[0](data)

        self.done[key] = forward
        self.kept.append(schema)
        tests: list[_Test] = []
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS:
                continue
            make = _MAKERS.get(keyword)
            if make is None:
                tests = [_never]
                break
            tests.append(make(value, schema, self))
        test = _all_of_tests(tests)
        compiled.append(test)
        self.done[key] = test
        return test


def _all_of_tests(tests: list[_Test]) -> _Test:
    if not tests:
        return _always
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda data: first(data) and second(data)
    kept = tuple(tests)
    return lambda data: all(test(data) for test in kept)


def _make_type(wanted: Any, schema: Any, compiler: _Compiler) -> _Test:
    names = tuple(wanted if isinstance(wanted, list) else [wanted])
    if len(names) == 1:
        name = names[0]
        return lambda data: _of_type(data, name)
    return lambda data: any(_of_type(data, name) for name in names)


def _make_const(wanted: Any, schema: Any, compiler: _Compiler) -> _Test:
    return lambda data: _equal(data, wanted)


def _make_enum(wanted: Any, schema: Any, compiler: _Compiler) -> _Test:
    if not isinstance(wanted, list):
        return _never
    return lambda data: any(_equal(data, each) for each in wanted)


def _make_keyword(check: _Check) -> Callable[[Any, Any, _Compiler], _Test]:
    """A keyword whose check does not descend: the check itself, its value bound."""

    def make(value: Any, schema: Any, compiler: _Compiler) -> _Test:
        return lambda data: check(data, value, None)

    return make


def _make_properties(properties: Any, schema: Any, compiler: _Compiler) -> _Test:
    if not isinstance(properties, Mapping):
        return lambda data: not isinstance(data, dict)
    subs = tuple((key, compiler.node(sub)) for key, sub in properties.items())

    def test(data: Any) -> bool:
        if not isinstance(data, dict):
            return True
        if not _string_keys(data):
            return False
        return all(sub(data[key]) for key, sub in subs if key in data)

    return test


def _make_additional(sub: Any, schema: Any, compiler: _Compiler) -> _Test:
    if "patternProperties" in schema:
        return lambda data: not isinstance(data, dict)
    known = schema.get("properties") or {}
    each = compiler.node(sub)

    def test(data: Any) -> bool:
        if not isinstance(data, dict):
            return True
        if not _string_keys(data):
            return False
        return all(each(value) for key, value in data.items() if key not in known)

    return test


def _make_property_names(sub: Any, schema: Any, compiler: _Compiler) -> _Test:
    each = compiler.node(sub)

    def test(data: Any) -> bool:
        if not isinstance(data, dict):
            return True
        return _string_keys(data) and all(each(key) for key in data)

    return test


def _make_items(sub: Any, schema: Any, compiler: _Compiler) -> _Test:
    if "prefixItems" in schema:
        return lambda data: not isinstance(data, list)
    each = compiler.node(sub)
    return lambda data: not isinstance(data, list) or all(each(item) for item in data)


def _subs(subs: Any, compiler: _Compiler) -> tuple[_Test, ...] | None:
    return tuple(compiler.node(sub) for sub in subs) if isinstance(subs, list) else None


def _make_all_of(subs: Any, schema: Any, compiler: _Compiler) -> _Test:
    tests = _subs(subs, compiler)
    if tests is None:
        return _never
    return lambda data: all(test(data) for test in tests)


def _make_any_of(subs: Any, schema: Any, compiler: _Compiler) -> _Test:
    tests = _subs(subs, compiler)
    if tests is None:
        return _never
    return lambda data: any(test(data) for test in tests)


def _make_one_of(subs: Any, schema: Any, compiler: _Compiler) -> _Test:
    tests = _subs(subs, compiler)
    if tests is None:
        return _never
    return lambda data: sum(test(data) for test in tests) == 1


def _make_if(condition: Any, schema: Any, compiler: _Compiler) -> _Test:
    then = compiler.node(schema.get("then", True))
    otherwise = compiler.node(schema.get("else", True))
    holds = compiler.node(condition)

    def test(data: Any) -> bool:
        if then(data) and otherwise(data):
            return True  # whichever way ``if`` goes
        if holds(data):
            return then(data)
        return _certainly_invalid(data, condition) and otherwise(data)

    return test


def _make_branch(sub: Any, schema: Any, compiler: _Compiler) -> _Test:
    return _always  # ``then`` and ``else`` are read with their ``if``


def _make_ref(reference: Any, schema: Any, compiler: _Compiler) -> _Test:
    if not isinstance(reference, str) or not reference.startswith("#") or "%" in reference:
        return _never
    target: Any = compiler.root
    for part in reference[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(target, Mapping) or part not in target:
            return _never
        target = target[part]
    return compiler.node(target)


_MAKERS: dict[str, Callable[[Any, Any, _Compiler], _Test]] = {
    "type": _make_type,
    "const": _make_const,
    "enum": _make_enum,
    **{
        name: _make_keyword(_KEYWORDS[name])
        for name in (
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
            "pattern",
            "required",
        )
    },
    "properties": _make_properties,
    "additionalProperties": _make_additional,
    "propertyNames": _make_property_names,
    "items": _make_items,
    "allOf": _make_all_of,
    "anyOf": _make_any_of,
    "oneOf": _make_one_of,
    "if": _make_if,
    "then": _make_branch,
    "else": _make_branch,
    "$ref": _make_ref,
}
"""Per keyword of :data:`_KEYWORDS`, the function that compiles it."""
