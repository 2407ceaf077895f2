"""The quick check of a document against a shipped schema never accepts what ``jsonschema``
refuses, and accepts the repository's own valid files (so they never import ``jsonschema``).

Every YAML and JSON file of the repository (suites, model scripts, eval cases, cassettes,
worlds, plugin manifests, the bad inputs' fixtures) is checked against every shipped schema it
could be, as it is and after seeded mutations (a value of another type, a date, a key that is
not a string, a key taken away or added), against ``jsonschema`` itself.
"""

from __future__ import annotations

import copy
import datetime
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from skilltest.errors import InputError
from skilltest.suite.conforms import conforms
from skilltest.suite.loader import load_schema, read_yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = sorted(
    path.name.removesuffix(".schema.json")
    for path in (ROOT / "src" / "skilltest" / "suite" / "schemas").glob("*.schema.json")
)
DEFINITIONS = (("evalcase", "grader"), ("evalcase", "prompt_frontmatter"))
"""Parts of a schema validated on their own (a grader's and a prompt's frontmatter)."""

REPLACEMENTS: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    1.0,
    -1,
    2.5,
    10_000,
    "",
    "x",
    "with_skill",
    [],
    {},
    [1],
    ["a"],
    {"k": 1},
    {1: "a"},
    datetime.date(2026, 1, 1),
)
"""Values a mutation puts in a document's place."""


def documents() -> list[tuple[str, Any]]:
    found = []
    for path in sorted(ROOT.glob("**/*")):
        if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
            continue
        if {".venv", ".tools", "node_modules", ".git", "__pycache__"} & set(path.parts):
            continue
        try:
            data = read_yaml(path) if path.suffix != ".json" else json.loads(path.read_text())
        except (InputError, ValueError, UnicodeDecodeError):
            continue
        found.append((str(path.relative_to(ROOT)), data))
    return found


def schema_of(name: str, definition: str | None = None) -> dict[str, Any]:
    schema = load_schema(name)
    if definition is None:
        return schema
    return {
        **{k: v for k, v in schema.items() if k not in ("required", "type", "description")},
        "$ref": f"#/$defs/{definition}",
    }


def mutated(data: Any, rng: random.Random) -> Any:
    top: list[Any] = [copy.deepcopy(data)]
    holder: Any = top
    key: Any = 0
    while rng.random() < 0.75:
        value = holder[key]
        if isinstance(value, dict) and value:
            holder, key = value, rng.choice(list(value))
        elif isinstance(value, list) and value:
            holder, key = value, rng.randrange(len(value))
        else:
            break
    move = rng.randrange(4)
    target = holder[key]
    if move == 0 and isinstance(target, dict) and target:
        del target[rng.choice(list(target))]
    elif move == 1 and isinstance(target, dict):
        target[rng.choice(["extra", "id", "prompt", 7])] = rng.choice(REPLACEMENTS)
    elif move == 2 and isinstance(target, list) and target:
        target.append(copy.deepcopy(rng.choice(target)))
    else:
        holder[key] = rng.choice(REPLACEMENTS)
    return top[0]


def jsonschema_accepts(data: Any, schema: dict[str, Any]) -> bool:
    return not any(jsonschema.Draft202012Validator(schema).iter_errors(data))


DOCUMENTS = documents()


def test_the_repository_has_documents_of_every_kind():
    assert len(DOCUMENTS) > 100


@pytest.mark.parametrize(
    ("name", "definition"), [(name, None) for name in SCHEMAS] + list(DEFINITIONS)
)
def test_a_document_the_quick_check_accepts_jsonschema_accepts(name, definition):
    schema = schema_of(name, definition)
    rng = random.Random(f"{name}/{definition}")
    checked = 0
    for where, data in DOCUMENTS:
        candidates = [data, *(mutated(data, rng) for _ in range(6))]
        if jsonschema_accepts(data, schema):
            # A document of this kind: many more mutations, near the edge of valid.
            candidates += [mutated(data, rng) for _ in range(60)]
        for candidate in candidates:
            checked += 1
            if conforms(candidate, schema):
                assert jsonschema_accepts(candidate, schema), (where, candidate)
    assert checked > 0


def test_every_valid_file_of_the_repository_is_accepted_quickly():
    """No valid file goes the slow way: each one jsonschema accepts, the quick check accepts."""
    slow = [
        (where, name)
        for where, data in DOCUMENTS
        # NaN is refused before any schema is asked; a CI workflow is no skilltest file (its
        # `on:` key reads as true, which only jsonschema is asked about).
        if "nan" not in where and not where.startswith("docs/ci/")
        for name in SCHEMAS
        if jsonschema_accepts(data, load_schema(name)) and not conforms(data, load_schema(name))
    ]
    assert slow == []


@pytest.mark.parametrize(
    ("data", "schema", "expected"),
    [
        (1.0, {"type": "integer"}, True),
        (True, {"type": "integer"}, False),
        (True, {"enum": [1]}, False),
        (1, {"const": 1.0}, True),
        ({1: "a"}, {"type": "object", "additionalProperties": False}, False),
        (
            {"a": 1},
            {"properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"minimum": 2}}},
            False,
        ),
        (
            {"a": 3},
            {"properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"minimum": 2}}},
            True,
        ),
        ("ab", {"pattern": "^a"}, True),
        ({"kind": "x"}, {"if": {"properties": {"kind": {"const": "y"}}}, "then": False}, True),
        ({"kind": "y"}, {"if": {"properties": {"kind": {"const": "y"}}}, "then": False}, False),
        (datetime.date(2026, 1, 1), {"type": "string"}, False),
        ("x", {"format": "email"}, False),
    ],
)
def test_keywords_read_as_jsonschema_reads_them(data, schema, expected):
    """``False`` is also "not known here"; each ``True`` is one jsonschema gives too."""
    assert conforms(data, schema) is expected
    if expected:
        assert jsonschema_accepts(data, schema)


def test_the_compiled_check_answers_as_the_keyword_by_keyword_one():
    """``conforms`` runs each schema compiled into functions; the reading it compiles, keyword
    by keyword, gives the same answer for every document and mutation."""
    from skilltest.suite.conforms import _JSON_SCHEMA, _valid

    answers = []
    for name in SCHEMAS:
        schema = load_schema(name)
        rng = random.Random(f"compiled/{name}")
        for where, data in DOCUMENTS:
            for candidate in [data, *(mutated(data, rng) for _ in range(3))]:
                answer = conforms(candidate, schema)
                assert answer is _valid(candidate, schema, schema, _JSON_SCHEMA), (name, where)
                answers.append(answer)
    assert answers.count(True) > 100
    assert answers.count(False) > 100
