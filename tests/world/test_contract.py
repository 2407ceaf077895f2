"""A world against its provider's API description (`openapi:`), checked by `skilltest validate`
offline: one finding per difference, naming the world file, the route, the pointer and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.cli import main

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
        "required property (so do GET /tickets/{id} at (the whole body))\n"
        "  fix: make the fixture's records look like the provider's (or correct the "
        "description if the provider sends this)",
        "world.yaml#/services/0/profiles/conflict/0: the profile 'conflict' on GET /tickets/{id}: "
        "answers 409, which GET /tickets/{ticketId} does not document (it documents 200, 401, "
        "404)\n"
        "  fix: answer a status GET /tickets/{ticketId} documents (200, 401, 404), or add 409 "
        "to specs/tickets.yaml#/paths/~1tickets~1{ticketId}/get/responses if the provider "
        "answers it\n\n1 of 1 file(s) invalid",
    ]
