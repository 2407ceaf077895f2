"""The quick way a world is held to its API description gives what the validators give.

A body is checked against a response schema without ``openapi-schema-validator`` when the quick
check can tell it is valid; it never accepts what that library refuses (seeded mutations of the
example fixtures, against every response schema of the example description, in 3.0 and 3.1). A
description ``openapi-spec-validator`` passed is recorded in skilltest's cache and not checked
again while it and the validating libraries stay the same; a failing one is checked every time,
with the validator's own words.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openapi_schema_validator import OAS30ReadValidator, OAS31Validator
from referencing import Registry
from referencing.jsonschema import DRAFT4, DRAFT202012

from skilltest.cli import main
from skilltest.suite.conforms import conforms_openapi
from skilltest.suite.loader import read_yaml
from skilltest.world import checked_descriptions
from skilltest.world.contract import _string_keys
from tests.suite.test_conforms import mutated

from ..conftest import REPO_ROOT

WORLDS = REPO_ROOT / "tests/scenarios/worlds"
SPEC = WORLDS / "specs/tickets.yaml"
BASE = "urn:test:openapi"


def description(version: str) -> dict[str, Any]:
    """The example description, as OpenAPI 3.0 (as it is) or 3.1 (``nullable`` as a type)."""
    document: dict[str, Any] = _string_keys(read_yaml(SPEC))
    if version == "3.1":
        text = json.dumps(document).replace(
            '"type": "string", "nullable": true', '"type": ["string", "null"]'
        )
        document = {**json.loads(text), "openapi": "3.1.0"}
    return document


def response_schemas(document: dict[str, Any]) -> list[Any]:
    found = []
    for item in document["paths"].values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for response in operation.get("responses", {}).values():
                while "$ref" in response:
                    response = document["components"]["responses"][response["$ref"].split("/")[-1]]
                schema = response.get("content", {}).get("application/json", {}).get("schema")
                if schema is not None:
                    found.append(schema)
    return found


def library_accepts(body: Any, schema: Any, document: dict[str, Any], version: str) -> bool:
    """As the contract check asks the library: the schema in place in the whole document."""
    cls = OAS30ReadValidator if version == "3.0" else OAS31Validator
    specification = DRAFT4 if version == "3.0" else DRAFT202012
    resource = specification.create_resource({**document, "x-schema": schema})
    registry: Registry[Any] = Registry().with_resource(BASE, resource)
    validator = cls({"$ref": f"{BASE}#/x-schema"}, registry=registry)
    return not any(validator.iter_errors(body))


RECORDS: list[dict[str, Any]] = json.loads((WORLDS / "tickets.json").read_text())["tickets"]


@pytest.mark.parametrize("version", ["3.0", "3.1"])
def test_a_body_the_quick_check_accepts_the_library_accepts(version):
    document = description(version)
    rng = random.Random(version)
    bodies: list[Any] = [
        *RECORDS,
        {"tickets": RECORDS[:2], "next_cursor": "cursor"},
        {"tickets": RECORDS[:2], "next_cursor": None},
        {"error": "Conflict"},
        {"queued": True},
    ]
    checked = accepted = 0
    for schema in response_schemas(document):
        for body in bodies:
            for candidate in [body, *(mutated(body, rng) for _ in range(40))]:
                checked += 1
                if conforms_openapi(candidate, schema, document, version):
                    accepted += 1
                    assert library_accepts(candidate, schema, document, version), candidate
    assert checked > 1000
    assert accepted > 50  # the quick way is taken, not only refused


@pytest.mark.parametrize("version", ["3.0", "3.1"])
def test_every_example_record_and_page_is_accepted_quickly(version):
    document = description(version)
    ticket = {"$ref": "#/components/schemas/Ticket"}
    page = response_schemas(document)[0]
    for record in RECORDS:
        assert conforms_openapi(record, ticket, document, version)
    assert conforms_openapi({"tickets": RECORDS, "next_cursor": None}, page, document, version)


@pytest.mark.parametrize(
    ("body", "schema", "version", "expected"),
    [
        (None, {"type": "string", "nullable": True}, "3.0", True),
        (None, {"type": "string"}, "3.0", False),
        (None, {"type": ["string", "null"]}, "3.1", True),
        (1.0, {"type": "integer"}, "3.0", False),  # draft 4: 1.0 is no integer
        (1.0, {"type": "integer"}, "3.1", True),
        (3, {"minimum": 3, "exclusiveMinimum": True}, "3.0", False),
        ({"a": 1}, {"properties": {"a": {"writeOnly": True}}}, "3.0", False),
        ({"a": 1}, {"properties": {"a": {"readOnly": True}}}, "3.0", True),
        ("a1", {"type": "string", "pattern": "^a"}, "3.0", False),  # an ECMAScript regex
        ("not a date", {"type": "string", "format": "date-time"}, "3.0", True),
        ({"kind": "a"}, {"oneOf": [{}], "discriminator": {"propertyName": "kind"}}, "3.0", False),
        ("x", {"type": "string", "$id": "urn:x"}, "3.1", False),
        ("x", {"type": "string"}, "2.0", False),
    ],
)
def test_keywords_read_as_the_library_reads_them(body, schema, version, expected):
    """``False`` is also "not known here"; each ``True`` is one the library gives too."""
    document = description(version if version != "2.0" else "3.0")
    assert conforms_openapi(body, schema, document, version) is expected
    if expected:
        assert library_accepts(body, schema, document, version)


PROBE = (
    "import contextlib, io, sys\n"
    "from skilltest.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
    "    code = main(sys.argv[1:])\n"
    "loaded = sorted(m for m in sys.modules if m.startswith(('openapi_spec', 'jsonschema')))\n"
    "print(code, bool(loaded))\n"
)


def validate_in_a_process(project: Path, cache: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-c", PROBE, "validate", "world.yaml"],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "SKILLTEST_CACHE_DIR": str(cache)},
        check=True,
    )
    return run.stdout.strip()


def test_a_description_that_passed_is_not_checked_again_until_it_changes(tmp_path):
    project, cache = tmp_path / "project", tmp_path / "cache"
    (project / "specs").mkdir(parents=True)
    (project / "specs/tickets.yaml").write_text(SPEC.read_text())
    (project / "tickets.json").write_text((WORLDS / "tickets.json").read_text())
    (project / "world.yaml").write_text((WORLDS / "tickets.yaml").read_text())
    # First: checked by openapi-spec-validator, and recorded.
    assert validate_in_a_process(project, cache) == "0 True"
    assert len(list((cache / "openapi-checked").iterdir())) == 1
    # Again: the record answers; no validator (nor jsonschema) is imported.
    assert validate_in_a_process(project, cache) == "0 False"
    # A changed description is checked again (and recorded on its own).
    spec = project / "specs/tickets.yaml"
    spec.write_text(spec.read_text().replace("title: Tickets API", "title: Tickets API v2"))
    assert validate_in_a_process(project, cache) == "0 True"
    assert len(list((cache / "openapi-checked").iterdir())) == 2


def test_a_description_that_fails_is_checked_every_time_and_never_recorded(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("SKILLTEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs/tickets.yaml").write_text(
        SPEC.read_text().replace("      summary: One ticket\n", "      summary: [One ticket]\n")
    )
    (tmp_path / "tickets.json").write_text((WORLDS / "tickets.json").read_text())
    (tmp_path / "world.yaml").write_text((WORLDS / "tickets.yaml").read_text())
    outputs = []
    for _ in range(2):
        assert main(["validate", "world.yaml"]) == 2
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    refused = "the API description is not valid OpenAPI 3.0: ['One ticket'] is not of type"
    assert refused in outputs[0]
    assert not (tmp_path / "cache" / "openapi-checked").exists()


def test_the_record_names_the_validating_libraries_as_installed():
    installed = checked_descriptions._installed()
    assert installed is not None
    names = [Path(line).name for line in installed.splitlines()]
    assert len(names) == len(checked_descriptions.VALIDATING)
    assert all(name.endswith(".dist-info") for name in names)
    assert any(name.startswith("openapi_spec_validator-") for name in names)
