"""A world against its provider's API description (`openapi:`), checked by `skilltest validate`
offline: one finding per difference, naming the world file, the route, the pointer and the fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skilltest.cli import main
from tests.projects import write_skill

from ..conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "tests/scenarios/worlds/tickets.yaml"
SPEC = EXAMPLE.parent / "specs/tickets.yaml"

DRIFTED = """\
services:
  - name: tickets
    hosts: [api.tickets.example.com]
    openapi: specs/tickets.yaml
    data:
      tickets:
        - {id: INC-1042, title: Checkout errors, status: P1, owner: payments-team, version: 3}
        - {id: INC-1050, title: Payroll export, status: P1, assignee: finance-team, version: 4}
    routes:
      - {method: GET, path: /tickets, action: list, collection: tickets, filters: [status], page_size: 2}
      - {method: GET, path: "/tickets/{id}", action: get, collection: tickets}
      - {method: POST, path: "/tickets/{id}/archive", action: respond, status: 200, body: {archived: true}}
    profiles:
      conflict: [{route: "GET /tickets/{id}", status: 409, body: {error: conflict}}]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the example description as specs/tickets.yaml, the current one."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs/tickets.yaml").write_text(SPEC.read_text())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_example_world_passes_against_its_description(monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    world = "tests/scenarios/worlds/tickets.yaml"
    assert main(["validate", world, "tests/scenarios/worlds/specs/tickets.yaml"]) == 0
    out = capsys.readouterr().out
    assert f"ok   {world} (world)" in out
    assert "ok   tests/scenarios/worlds/specs/tickets.yaml (openapi)" in out


def test_a_drifted_world_fails_with_one_finding_per_difference(project, capsys):
    (project / "world.yaml").write_text(DRIFTED)
    assert main(["validate", "world.yaml"]) == 2
    out = capsys.readouterr().out
    assert "FAIL world.yaml (3 difference(s) from its API description)" in out
    findings = out.split("skilltest: error: ")[1:]
    assert [finding.strip() for finding in findings] == [
        "world.yaml#/services/0/routes/2: POST /tickets/{id}/archive: the provider has no path "
        "/tickets/{id}/archive (specs/tickets.yaml has /tickets, /tickets/{ticketId}, "
        "/tickets/{ticketId}/escalate)\n"
        "  fix: did you mean '/tickets/{ticketId}'? remove the route, or correct its path to "
        "one the provider serves",
        # The renamed field: owner missing, assignee unknown (additionalProperties: false), in
        # the list and in the get alike: one finding.
        "world.yaml#/services/0/routes/0: GET /tickets: answers the record 'INC-1050' "
        "(world.yaml#/services/0/data/tickets/1) with 200, and "
        "specs/tickets.yaml#/paths/~1tickets/get/responses/200 refuses it at /tickets/1: "
        "Additional properties are not allowed ('assignee' was unexpected); 'owner' is a "
        "required property (GET /tickets/{id} answers it too, refused at the top)\n"
        "  fix: make the fixture's records look like the provider's (or correct the "
        "description if the provider sends this)",
        "world.yaml#/services/0/profiles/conflict/0: the profile 'conflict' on GET /tickets/{id}: "
        "answers 409, which GET /tickets/{ticketId} does not document (it documents 200, 401, "
        "404)\n"
        "  fix: answer a status GET /tickets/{ticketId} documents (200, 401, 404), or add 409 "
        "to specs/tickets.yaml#/paths/~1tickets~1{ticketId}/get/responses if the provider "
        "answers it\n\n1 of 1 file(s) invalid",
    ]
    # docs/world.md shows this output as printed.
    assert out.strip() in (REPO_ROOT / "docs" / "world.md").read_text()


def test_a_scenario_suite_is_invalid_when_its_world_differs_from_its_description(project, capsys):
    write_skill(project, "---\nname: demo\n---\nbody\n")
    (project / "world.yaml").write_text(DRIFTED)
    (project / "suite.yaml").write_text(
        "skill: demo\nworld: world.yaml\nscenarios:\n"
        "  - {id: a, prompt: p, expected: {required_patterns: [x]}}\n"
    )
    assert main(["validate", "suite.yaml"]) == 2
    out = capsys.readouterr().out
    assert "FAIL suite.yaml (3 difference(s) from its API description)" in out
    assert "world.yaml#/services/0/profiles/conflict/0: the profile 'conflict' on GET" in out


def test_a_description_that_is_not_valid_openapi_is_an_error_naming_the_file(project, capsys):
    (project / "specs/tickets.yaml").write_text(
        "openapi: 3.0.3\ninfo: {title: Tickets}\npaths: {}\n"  # info without version
    )
    (project / "world.yaml").write_text(DRIFTED)
    assert main(["validate", "world.yaml", "specs/tickets.yaml"]) == 2
    out = capsys.readouterr().out
    message = (
        "specs/tickets.yaml#/info: the API description is not valid OpenAPI 3.0: 'version' is "
        "a required property{named}\n"
        "  fix: correct the description there (a provider's published file passes "
        "openapi-spec-validator)"
    )
    assert "FAIL world.yaml\n" in out and "FAIL specs/tickets.yaml\n" in out
    assert message.format(named=" (named at world.yaml#/services/0/openapi)") in out
    assert message.format(named="") + "\n" in out
    assert "2 of 2 file(s) invalid" in out


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n",
            "has no `openapi:` version",
        ),
        ("openapi: 2.0.0\ninfo: {title: t, version: '1'}\npaths: {}\n", "says openapi: '2.0.0'"),
    ],
)
def test_a_description_of_another_version_is_refused(project, capsys, document, message):
    (project / "specs/tickets.yaml").write_text(document)
    (project / "world.yaml").write_text(DRIFTED)
    assert main(["validate", "world.yaml"]) == 2
    assert (
        f"skilltest: error: specs/tickets.yaml#/openapi: the API description {message}, not "
        "OpenAPI 3.0 or 3.1 (named at world.yaml#/services/0/openapi)\n"
        "  fix: name an OpenAPI 3.0 or 3.1 document (a Swagger 2.0 one converts with "
        "swagger2openapi)"
    ) in capsys.readouterr().out


def test_a_description_outside_the_repository_is_refused(project, capsys):
    (project / "world.yaml").write_text(DRIFTED.replace("specs/tickets.yaml", "/etc/passwd.yaml"))
    assert main(["validate", "world.yaml"]) == 2
    out = capsys.readouterr().out
    assert "world.yaml#/services/0/openapi: '/etc/passwd.yaml' is outside the suite's" in out


SMALL = """\
services:
  - name: tickets
    hosts: [api.tickets.example.com]
    openapi: specs/small.yaml
    data: {{tickets: [{{id: INC-1, status: P1, owner: {owner}}}]}}
    routes:
{routes}
    profiles:
      broken: [{faults}]
"""

SMALL_SPEC = """\
openapi: {version}
info: {{title: small, version: "1"}}
servers: [{{url: "https://api.tickets.example.com/v2"}}]
paths:
  /tickets/{{key}}:
    parameters: [{{name: key, in: path, required: true, schema: {{type: string}}}}]
    get:
      parameters: [{{name: X-Tenant, in: header, schema: {{type: string}}}}]
      responses:
        "200":
          description: one
          content:
            application/json:
              schema:
                type: object
                required: [id, status]
                properties:
                  id: {{type: string}}
                  status: {{type: string, enum: [P1, P2]}}
                  owner: {owner}
        default:
          description: anything else
          content:
            application/json:
              schema: {{type: object, required: [message], properties: {{message: {{type: string}}}}}}
  /tickets:
    get:
      parameters: [{{name: status, in: query, schema: {{type: string}}}}]
      responses:
        "200":
          description: all
          content:
            application/json:
              schema: {{type: object, properties: {{tickets: {{type: array}}}}}}
"""

GET = '      - {method: GET, path: "/v2/tickets/{id}", action: get, collection: tickets'


@pytest.mark.parametrize(
    ("version", "owner"),
    [("3.0.3", "{type: string, nullable: true}"), ("3.1.0", "{type: [string, 'null']}")],
)
def test_a_null_the_description_allows_passes_under_both_versions(project, capsys, version, owner):
    (project / "specs/small.yaml").write_text(SMALL_SPEC.format(version=version, owner=owner))
    (project / "world.yaml").write_text(
        SMALL.format(routes=GET + "}", faults='{route: "*", delay_ms: 10}', owner="null")
    )
    assert main(["validate", "world.yaml"]) == 0, capsys.readouterr().out


def test_a_null_a_3_0_description_does_not_mark_nullable_is_a_finding(project, capsys):
    (project / "specs/small.yaml").write_text(
        SMALL_SPEC.format(version="3.0.3", owner="{type: string}")
    )
    (project / "world.yaml").write_text(
        SMALL.format(routes=GET + "}", faults='{route: "*", delay_ms: 10}', owner="null")
    )
    assert main(["validate", "world.yaml"]) == 2
    assert (
        "skilltest: error: world.yaml#/services/0/routes/0: GET /v2/tickets/{id}: answers the "
        "record 'INC-1' (world.yaml#/services/0/data/tickets/0) with 200, and "
        "specs/small.yaml#/paths/~1tickets~1{key}/get/responses/200 refuses it at /owner: "
        "None for not nullable; None is not of type 'string'\n"
        "  fix: make the fixture's records look like the provider's (or correct the "
        "description if the provider sends this)\n"
    ) in capsys.readouterr().out


@pytest.mark.parametrize(
    ("routes", "faults", "finding"),
    [
        # A header the operation does not have.
        (
            GET + ", requires: [If-Match]}",
            '{route: "*", delay_ms: 10}',
            "world.yaml#/services/0/routes/0/requires: GET /v2/tickets/{id}: requires the header "
            "If-Match, which GET /tickets/{key} does not have as a header parameter",
        ),
        # A filter the list does not have, and paging it does not do.
        (
            "      - {method: GET, path: /v2/tickets, action: list, collection: tickets, "
            "filters: [owner]}",
            '{route: "*", delay_ms: 10}',
            "world.yaml#/services/0/routes/0/filters: GET /v2/tickets: filters by the query "
            "parameter 'owner', which GET /tickets does not have (it has: status)",
        ),
        # A method the path does not have.
        (
            '      - {method: DELETE, path: "/v2/tickets/{id}", action: delete, collection: tickets}',
            '{route: "*", delay_ms: 10}',
            "world.yaml#/services/0/routes/0: DELETE /v2/tickets/{id}: the provider has no DELETE "
            "/tickets/{key} (its /tickets/{key} has GET; specs/small.yaml)",
        ),
        # Without the server's /v2, the provider has no such path.
        (
            '      - {method: GET, path: "/tickets/{id}", action: get, collection: tickets}',
            '{route: "*", delay_ms: 10}',
            "world.yaml#/services/0/routes/0: GET /tickets/{id}: the provider has no path "
            "/tickets/{id} (specs/small.yaml has /v2/tickets/{key}, /v2/tickets)",
        ),
        # A fault's status falls under `default`, whose schema the fake's body breaks.
        (
            GET + "}",
            '{route: "GET /v2/tickets/INC-1", status: 503}',
            "world.yaml#/services/0/profiles/broken/0: the profile 'broken' on GET "
            "/v2/tickets/{id}: its 503 body breaks the schema of "
            "specs/small.yaml#/paths/~1tickets~1{key}/get/responses/default at the top: "
            "'message' is a required property",
        ),
        # A fault's body with a value the enum does not have.
        (
            GET + "}",
            '{route: "*", body: {id: INC-1, status: P9}}',
            "world.yaml#/services/0/profiles/broken/0/body: the profile 'broken' on GET "
            "/v2/tickets/{id}: its 200 body breaks the schema of "
            "specs/small.yaml#/paths/~1tickets~1{key}/get/responses/200 at /status: 'P9' is not "
            "one of ['P1', 'P2']",
        ),
    ],
)
def test_each_difference_is_one_finding(project, capsys, routes, faults, finding):
    owner = "{type: string}"
    (project / "specs/small.yaml").write_text(SMALL_SPEC.format(version="3.0.3", owner=owner))
    (project / "world.yaml").write_text(SMALL.format(routes=routes, faults=faults, owner="nobody"))
    assert main(["validate", "world.yaml"]) == 2
    out = capsys.readouterr().out
    assert "FAIL world.yaml (1 difference(s) from its API description)" in out
    assert f"skilltest: error: {finding}\n  fix: " in out


def test_the_validators_are_imported_only_for_a_world_that_names_a_description(tmp_path):
    world = tmp_path / "world.yaml"
    world.write_text(DRIFTED.replace("    openapi: specs/tickets.yaml\n", ""))
    probe = (
        "import contextlib, io, sys\n"
        "from skilltest.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(sys.argv[1:])\n"
        "print(sorted(m for m in sys.modules if m.startswith(('openapi', 'jsonschema_path'))))\n"
    )
    for args in (["--help"], ["validate", str(world)]):
        run = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True
        )
        assert run.stdout.strip() == "[]", (args, run.stdout, run.stderr)


def test_a_description_referring_outside_itself_is_refused_before_anything_is_fetched(
    project, capsys
):
    spec = project / "specs/tickets.yaml"
    spec.write_text(
        spec.read_text().replace(
            '$ref: "#/components/schemas/Priority"}}', '$ref: "https://127.0.0.1:9/p.yaml"}}', 1
        )
    )
    (project / "world.yaml").write_text(DRIFTED)
    assert main(["validate", "world.yaml"]) == 2
    assert (
        "skilltest: error: specs/tickets.yaml#/paths/~1tickets/get/parameters/0/schema/$ref: the "
        "API description refers to 'https://127.0.0.1:9/p.yaml', outside itself (named at "
        "world.yaml#/services/0/openapi)\n"
        "  fix: bundle the description into one file (e.g. `redocly bundle`): nothing is "
        "fetched, so only references inside it (#/components/...) resolve\n"
    ) in capsys.readouterr().out
