"""World files: what loads and how, and every refusal with its place and fix, word for word."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import InputError, WorldError
from skilltest.world.model import Fault, McpTool, Route, load_world

WORLD = Path(__file__).with_name("worlds") / "tickets.yaml"


def test_the_example_world_loads_typed():
    world = load_world(WORLD)
    tickets, status, orders = world.services
    assert (tickets.name, tickets.hosts) == (
        "tickets",
        ("api.tickets.example.com", "tickets.example.com"),
    )
    assert (tickets.auth_env, tickets.auth_header, tickets.auth_scheme) == (
        "TICKETS_API_TOKEN",
        "Authorization",
        "Bearer",
    )
    assert tickets.data_path == WORLD.with_name("tickets.json").resolve()
    assert [record["id"] for record in tickets.data["tickets"]][:2] == ["INC-1001", "INC-1042"]
    assert tickets.routes[0] == Route(
        method="GET",
        path="/tickets",
        action="list",
        collection="tickets",
        filters=("status", "owner", "overdue"),
        page_size=2,
        location=f"{WORLD}#/services/0/routes/0",
    )
    merge = tickets.routes[5]
    assert (merge.label, merge.requires, merge.id_param) == (
        "PATCH /tickets/{id}",
        ("If-Match",),
        "id",
    )
    assert tickets.profiles["rate_limited"] == (
        Fault(
            route="GET /tickets",
            status=429,
            headers={"Retry-After": "1"},
            times=1,
            location=f"{WORLD}#/services/0/profiles/rate_limited/0",
        ),
    )
    assert tickets.canary == ("GET", "/tickets/FAKE-CANARY")
    assert (status.auth_env, status.data, status.data_path, status.canary) == (None, {}, None, None)
    assert (orders.auth_header, orders.auth_scheme) == ("X-Api-Key", "")
    assert orders.data == {"orders": [{"id": 1001, "state": "paid"}, {"id": 1002, "state": "paid"}]}
    (crm,) = world.mcp
    assert crm.name == "crm"
    assert crm.tools[1] == McpTool(
        name="send_email",
        description="",
        input_schema={"type": "object", "properties": {}},
        responses=(({}, "sent"),),
        writes=True,
        location=f"{WORLD}#/mcp/crm/tools/1",
    )
    assert crm.tools[0].responses == (
        ({"id": "7"}, {"name": "Grace Hopper"}),
        ({}, "no such customer"),
    )


def test_world_profiles_and_hosts():
    world = load_world(WORLD)
    assert world.profiles() == {
        "empty",
        "unauthorized",
        "rate_limited",
        "timeout",
        "malformed",
        "schema_change",
        "replaced",
        "partial",
        "partial_207",
        "slow",
    }
    assert world.hosts() == (
        "api.tickets.example.com",
        "tickets.example.com",
        "status.example.com",
        "orders.example.com",
    )


@pytest.mark.parametrize(
    ("host", "service"),
    [
        ("api.tickets.example.com", "tickets"),
        ("API.Tickets.Example.com.", "tickets"),
        ("tickets.example.com", "tickets"),
        ("orders.example.com", "orders"),
        ("x.orders.example.com", None),
        ("orders.example.com.evil.test", None),
        ("", None),
        ("a..b", None),
    ],
)
def test_service_for_a_host(host, service):
    found = load_world(WORLD).service_for(host)
    assert (found.name if found else None) == service


def test_fixtures_in_yaml_json_or_inline(tmp_path):
    (tmp_path / "records.yml").write_text("items:\n  - {id: a}\n")
    (tmp_path / "w.yaml").write_text(
        "services:\n"
        "  - {name: one, hosts: [a.example.com], data: records.yml,\n"
        "     routes: [{method: GET, path: /items, action: list, collection: items}]}\n"
        "  - {name: two, hosts: [b.example.com], data: {items: [{id: 1, version: 4}]},\n"
        "     routes: [{method: GET, path: /items, action: list, collection: items}]}\n"
    )
    one, two = load_world(tmp_path / "w.yaml").services
    assert (one.data, one.data_path) == ({"items": [{"id": "a"}]}, tmp_path / "records.yml")
    assert (two.data, two.data_path) == ({"items": [{"id": 1, "version": 4}]}, None)


def test_the_path_template_matches_one_segment_per_param():
    route = Route(method="GET", path="/a/{id}.json/b", action="respond", status=200)
    assert route.match("/a/x-1.json/b") == {"id": "x-1"}
    assert route.match("/a/x/y.json/b") is None
    assert route.match("/a/.json/b") is None


HEAD = """services:
  - name: tickets
    hosts: [api.tickets.example.com]
    data: {tickets: [{id: T-1, version: 2}]}
    routes:
      - {method: GET, path: "/tickets/{id}", action: get, collection: tickets}
"""
INLINE = "data: {tickets: [{id: T-1, version: 2}]}"


def with_data(file: str) -> str:
    return HEAD.replace(INLINE, f"data: {file}")


REFUSED = [
    # (name, world file, {other file: text}, message with <dir> for the folder)
    (
        "no services",
        "name: x\n",
        {},
        "<dir>/world.yaml#: 'services' is a required property\n"
        "  fix: expected a mapping with `services:` (a list of fake services: name, hosts, auth, "
        "data, routes, profiles, canary) and optionally `mcp:` (mock MCP servers); see docs/world.md",
    ),
    (
        "unknown action",
        HEAD + "      - {method: GET, path: /x, action: fetch}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1/action: 'fetch' is not valid here: 'fetch' is not "
        "one of ['list', 'get', 'create', 'update', 'merge', 'delete', 'respond']\n"
        "  fix: expected one of list, get, create, update, merge, delete, respond",
    ),
    (
        "misspelt route key",
        HEAD + "      - {method: GET, path: /x, action: list, collection: tickets, filter: [a]}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1: Additional properties are not allowed ('filter' "
        "was unexpected; did you mean 'filters'?); accepted: method, path, action, collection, "
        "filters, page_size, requires, status, body, headers, description\n"
        "  fix: expected a route: `method`, `path`, `action` (list, get, create, update, merge, "
        "delete, respond) and the keys that action takes",
    ),
    (
        "duplicate key",
        HEAD.replace("    data:", "    name: again\n    data:"),
        {},
        "<dir>/world.yaml:4:5: duplicate key 'name' (first at line 2)\n"
        "  fix: keep one of the two; YAML would silently use only the last",
    ),
    (
        "metadata address as host",
        HEAD.replace("[api.tickets.example.com]", "[api.tickets.example.com, 169.254.169.254]"),
        {},
        "<dir>/world.yaml#/services/0/hosts/1: cannot fake this host: '169.254.169.254' is an IP "
        "address (cloud metadata address 169.254.169.254), not a host name\n"
        "  fix: declare the real host name the skill text uses, e.g. api.tickets.example.com",
    ),
    (
        "agent token in PATH",
        HEAD.replace("    data:", "    auth: {env: PATH}\n    data:"),
        {},
        "<dir>/world.yaml#/services/0/auth/env: PATH is a variable the run sets or reads itself, "
        "not one for an agent token\n"
        "  fix: name a variable of the service's own, such as TICKETS_API_TOKEN",
    ),
    (
        "agent token in the model API's key",
        HEAD.replace("    data:", "    auth: {env: ANTHROPIC_API_KEY}\n    data:"),
        {},
        "<dir>/world.yaml#/services/0/auth/env: ANTHROPIC_API_KEY is a variable the run sets or "
        "reads itself, not one for an agent token\n"
        "  fix: name a variable of the service's own, such as TICKETS_API_TOKEN",
    ),
    (
        "host with a port",
        HEAD.replace("[api.tickets.example.com]", "['api.tickets.example.com:8443']"),
        {},
        "<dir>/world.yaml#/services/0/hosts/0: cannot fake this host: "
        "'api.tickets.example.com:8443' is not a host name (write the name only: no scheme, "
        "port or path)\n"
        "  fix: declare the real host name the skill text uses, e.g. api.tickets.example.com",
    ),
    (
        "localhost as host",
        HEAD.replace("[api.tickets.example.com]", "[localhost]"),
        {},
        "<dir>/world.yaml#/services/0/hosts/0: cannot fake this host: loopback name localhost\n"
        "  fix: declare the real host name the skill text uses, e.g. api.tickets.example.com",
    ),
    (
        "two services of one name",
        HEAD + HEAD.removeprefix("services:\n").replace("api.tickets", "other"),
        {},
        "<dir>/world.yaml#/services/1/name: two services are named 'tickets' (the first at "
        "<dir>/world.yaml#/services/0)\n"
        "  fix: give each service its own name",
    ),
    (
        "one host in two services",
        HEAD
        + HEAD.removeprefix("services:\n")
        .replace("name: tickets", "name: other")
        .replace("api.tickets.example.com", "API.tickets.example.com."),
        {},
        "<dir>/world.yaml#/services/1/hosts: the host api.tickets.example.com is declared by the "
        "services 'tickets' and 'other'\n"
        "  fix: a host is answered by one fake: declare it in one service",
    ),
    (
        "list that is not GET",
        HEAD + "      - {method: POST, path: /tickets, action: list, collection: tickets}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1/method: a list route must be GET, not POST\n"
        "  fix: write method: GET (a list only reads)",
    ),
    (
        "merge on GET",
        HEAD
        + '      - {method: GET, path: "/tickets/{id}/x", action: merge, collection: tickets}\n',
        {},
        "<dir>/world.yaml#/services/0/routes/1/method: a merge route changes records and cannot "
        "be GET\n"
        "  fix: use POST, PUT, PATCH or DELETE: writes are told from reads by their method",
    ),
    (
        "list without a collection",
        HEAD + "      - {method: GET, path: /tickets, action: list}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1: a list route needs `collection:`\n"
        "  fix: name the key of the fixture's list of records, e.g. collection: tickets",
    ),
    (
        "misspelt collection",
        HEAD + "      - {method: GET, path: /tickets, action: list, collection: ticket}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1/collection: GET /tickets works on the collection "
        "'ticket', which the fixture does not have\n"
        "  fix: did you mean 'tickets'? the fixture has: tickets (an empty list is ticket: [])",
    ),
    (
        "collection that is not a list",
        HEAD.replace(INLINE, "data: {tickets: {id: 1}}"),
        {},
        "<dir>/world.yaml#/services/0/data/tickets: the collection 'tickets' is dict, not a list "
        "of records\n"
        '  fix: write a list of records, each a mapping with "id"',
    ),
    (
        "record without an id",
        HEAD.replace("{id: T-1, version: 2}", "{id: T-1}, {name: x}"),
        {},
        "<dir>/world.yaml#/services/0/data/tickets/1: a record must be a mapping with an `id`\n"
        '  fix: e.g. {"id": "INC-1042", "version": 3, "status": "open"}',
    ),
    (
        "one id twice (as text and as a number)",
        HEAD.replace("{id: T-1, version: 2}", "{id: 7}, {id: '7'}"),
        {},
        "<dir>/world.yaml#/services/0/data/tickets/1/id: the id '7' is also the id of record 0\n"
        "  fix: give each record of a collection its own id",
    ),
    (
        "id with a slash",
        HEAD.replace("{id: T-1, version: 2}", "{id: a/b}"),
        {},
        "<dir>/world.yaml#/services/0/data/tickets/0/id: the id 'a/b' contains /, so no path can "
        "name the record\n"
        "  fix: use ids without /",
    ),
    (
        "version that is not an integer",
        HEAD.replace("version: 2", "version: '2'"),
        {},
        "<dir>/world.yaml#/services/0/data/tickets/0/version: the version '2' is not an integer "
        ">= 0\n"
        "  fix: write the record's version as an integer (it is sent as the ETag)",
    ),
    (
        "respond without a status",
        HEAD + "      - {method: POST, path: /x, action: respond}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1: a respond route needs `status:`\n"
        "  fix: add the status it answers, e.g. status: 202 (and `body:`)",
    ),
    (
        "get without a parameter",
        HEAD + "      - {method: GET, path: /tickets/first, action: get, collection: tickets}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1/path: a get route names one record: its path "
        "needs a {param}\n"
        '  fix: e.g. path: "/tickets/{id}" (the last {param} is the record\'s id)',
    ),
    (
        "filters on a get",
        HEAD.replace(
            "action: get, collection: tickets}", "action: get, collection: tickets, filters: [a]}"
        ),
        {},
        "<dir>/world.yaml#/services/0/routes/0/filters: `filters` is for list routes, not get\n"
        "  fix: remove `filters`, or make the route action: list",
    ),
    (
        "two parameters in one segment",
        HEAD + '      - {method: PUT, path: "/t/{a}-{b}", action: update, collection: tickets}\n',
        {},
        "<dir>/world.yaml#/services/0/routes/1/path: the segment '{a}-{b}' of /t/{a}-{b} is not "
        "a literal or one {param}\n"
        "  fix: write at most one {name} per segment, a name of letters, digits and _",
    ),
    (
        "a route on the control plane",
        HEAD + "      - {method: GET, path: /health, action: respond, status: 200}\n",
        {},
        "<dir>/world.yaml#/services/0/routes/1/path: /health is the fake's own control plane\n"
        "  fix: the fake answers GET /health and /_skilltest/* itself; declare other paths",
    ),
    (
        "two routes for the same requests",
        HEAD + '      - {method: GET, path: "/tickets/{key}", action: get, collection: tickets}\n',
        {},
        "<dir>/world.yaml#/services/0/routes/1: GET /tickets/{key} serves the same requests as "
        "the route at <dir>/world.yaml#/services/0/routes/0\n"
        "  fix: keep one of the two routes",
    ),
    (
        "a fault on no route",
        HEAD + '    profiles:\n      slow: [{route: "GET /ticket/{id}", delay_ms: 5}]\n',
        {},
        "<dir>/world.yaml#/services/0/profiles/slow/0/route: no route of 'tickets' serves "
        "GET /ticket/{id}\n"
        "  fix: did you mean 'GET /tickets/{id}'? the routes are: GET /tickets/{id}; or write "
        '"*" for every request',
    ),
    (
        "a fault that changes nothing",
        HEAD + '    profiles:\n      none: [{route: "*", times: 2}]\n',
        {},
        "<dir>/world.yaml#/services/0/profiles/none/0: the fault changes nothing\n"
        "  fix: give it an effect: status, headers, malformed, delay_ms, timeout, body, rename, "
        "drop, empty or partial",
    ),
    (
        "a timeout with a status",
        HEAD + '    profiles:\n      t: [{route: "*", timeout: true, status: 504}]\n',
        {},
        "<dir>/world.yaml#/services/0/profiles/t/0: a timeout never answers, so nothing else "
        "about its answer can apply\n"
        "  fix: keep `timeout: true` alone (with `route` and `times`), or remove it",
    ),
    (
        "malformed and body",
        HEAD + '    profiles:\n      m: [{route: "*", malformed: true, body: {}}]\n',
        {},
        "<dir>/world.yaml#/services/0/profiles/m/0: `malformed` and `body` both replace the body\n"
        "  fix: keep one of the two",
    ),
    (
        "empty on a write",
        HEAD
        + '      - {method: DELETE, path: "/tickets/{id}", action: delete, collection: tickets}\n'
        + '    profiles:\n      e: [{route: "DELETE /tickets/{id}", empty: true}]\n',
        {},
        "<dir>/world.yaml#/services/0/profiles/e/0/empty: `empty` empties lists and gets, and "
        "DELETE /tickets/{id} is neither\n"
        '  fix: put it on a list or get route (or "*")',
    ),
    (
        "partial on a read",
        HEAD + '    profiles:\n      p: [{route: "GET /tickets/{id}", partial: true}]\n',
        {},
        "<dir>/world.yaml#/services/0/profiles/p/0/partial: `partial` applies a write in part, "
        "and GET /tickets/{id} is not a create, update, merge or delete route\n"
        '  fix: put it on a write route (or "*")',
    ),
    (
        "a canary the fixture lacks",
        HEAD + "    canary: {path: /tickets/FAKE-CANARY}\n",
        {},
        "<dir>/world.yaml#/services/0/canary/path: the canary /tickets/FAKE-CANARY names the "
        "record 'FAKE-CANARY', which the collection 'tickets' does not have\n"
        "  fix: add a record with id 'FAKE-CANARY' to the fixture's 'tickets' "
        "(<dir>/world.yaml#/services/0/data/tickets): a record that exists only in the fake",
    ),
    (
        "a canary no route serves",
        HEAD + "    canary: {path: /canary}\n",
        {},
        "<dir>/world.yaml#/services/0/canary/path: no GET route of 'tickets' serves the canary "
        "/canary\n"
        "  fix: point the canary at a record a GET route serves, e.g. /tickets/FAKE-CANARY",
    ),
    (
        "a canary that writes",
        HEAD + "    canary: {method: POST, path: /tickets/FAKE-CANARY}\n",
        {},
        "<dir>/world.yaml#/services/0/canary/method: 'POST' is not valid here: 'GET' was "
        "expected\n"
        "  fix: expected GET (the canary only reads)",
    ),
    (
        "a canary template",
        HEAD + '    canary: {path: "/tickets/{id}"}\n',
        {},
        "<dir>/world.yaml#/services/0/canary/path: the canary /tickets/{id} is a template; it "
        "must be one concrete path\n"
        "  fix: name the record, e.g. path: /tickets/FAKE-CANARY",
    ),
    (
        "an MCP server named as a service",
        HEAD + "mcp:\n  tickets: {tools: []}\n",
        {},
        "<dir>/world.yaml#/mcp/tickets: the MCP server 'tickets' has the name of a service\n"
        "  fix: give it another name: calls are recorded under their server's name",
    ),
    (
        "an MCP response on an argument the tool lacks",
        HEAD
        + "mcp:\n  crm:\n    tools:\n      - {name: t, input_schema: {type: object, properties: "
        "{id: {}}, additionalProperties: false}, responses: [{match: {key: 1}, result: x}]}\n",
        {},
        "<dir>/world.yaml#/mcp/crm/tools/0/responses/0/match: the tool 't' has no argument 'key'\n"
        "  fix: its arguments are: id",
    ),
    (
        "two MCP tools of one name",
        HEAD + "mcp:\n  crm: {tools: [{name: t}, {name: t}]}\n",
        {},
        "<dir>/world.yaml#/mcp/crm/tools/1/name: two tools of 'crm' are named 't'\n"
        "  fix: give each tool its own name",
    ),
    (
        "a fixture that is not there",
        with_data("nope.json"),
        {},
        "<dir>/world.yaml#/services/0/data: the fixture 'nope.json' was not found (looked at "
        "<dir>/nope.json)\n"
        "  fix: the path is relative to the world file",
    ),
    (
        "a fixture of another kind",
        with_data("data.txt"),
        {"data.txt": "x"},
        "<dir>/world.yaml#/services/0/data: the fixture 'data.txt' is neither JSON nor YAML\n"
        "  fix: name a .json, .yaml or .yml file (relative to the world file)",
    ),
    (
        "a fixture that is not JSON",
        with_data("data.json"),
        {"data.json": '{"tickets": [\n  {"id": "T-1",}\n]}\n'},
        "<dir>/data.json:2:16: not valid JSON: Expecting property name enclosed in double quotes\n"
        "  fix: check the commas, quotes and brackets there",
    ),
    (
        "a JSON fixture with a key twice",
        with_data("data.json"),
        {"data.json": '{"tickets": [], "tickets": []}'},
        "<dir>/data.json: duplicate key 'tickets' (JSON keeps only the last)\n"
        "  fix: keep one of the two",
    ),
    (
        "a YAML fixture with a key twice",
        with_data("data.yaml"),
        {"data.yaml": "tickets: []\ntickets: []\n"},
        "<dir>/data.yaml:2:1: duplicate key 'tickets' (first at line 1)\n"
        "  fix: keep one of the two; YAML would silently use only the last",
    ),
    (
        "a fixture that is a list",
        with_data("data.json"),
        {"data.json": '[{"id": 1}]'},
        "<dir>/data.json#: the fixture holds list, not a mapping of collections\n"
        '  fix: write {"tickets": [{"id": "INC-1042", "version": 3, ...}]}',
    ),
    (
        "a fixture record with a bad id, located in the fixture",
        with_data("data.yaml"),
        {"data.yaml": "tickets:\n  - {id: T-1}\n  - {id: [1]}\n"},
        "<dir>/data.yaml#/tickets/1/id: the id [1] is not a text or an integer\n"
        "  fix: give each record an id of text or an integer, as it appears in paths",
    ),
    (
        "a fixture with NaN",
        with_data("data.json"),
        {"data.json": '{"tickets": [{"id": "T-1", "score": NaN}]}'},
        "<dir>/data.json#/tickets/0/score: nan is not a number a threshold, weight or limit can be\n"
        "  fix: write a finite number",
    ),
]


@pytest.mark.parametrize(
    ("world", "files", "message"),
    [case[1:] for case in REFUSED],
    ids=[case[0] for case in REFUSED],
)
def test_a_world_that_cannot_be_served_is_refused_with_place_and_fix(
    tmp_path, world, files, message
):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "world.yaml").write_text(world)
    with pytest.raises(WorldError) as caught:
        load_world(tmp_path / "world.yaml")
    assert isinstance(caught.value, InputError)
    assert (
        str(caught.value).replace(str(tmp_path.resolve()), "<dir>").replace(str(tmp_path), "<dir>")
        == message
    )


def test_validate_knows_world_files(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.yaml").write_text(HEAD)
    (tmp_path / "bad.yaml").write_text(HEAD.replace("[api.tickets.example.com]", "[127.0.0.1]"))
    assert main(["validate", "good.yaml"]) == 0
    assert "ok   good.yaml (world)" in capsys.readouterr().out
    assert main(["validate", "good.yaml", "bad.yaml"]) == 2
    out = capsys.readouterr().out
    assert "FAIL bad.yaml" in out
    assert (
        "skilltest: error: bad.yaml#/services/0/hosts/0: cannot fake this host: '127.0.0.1' is an "
        "IP address (loopback address 127.0.0.1), not a host name" in out
    )
