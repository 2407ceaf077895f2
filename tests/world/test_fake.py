"""The fake service: every action and status, If-Match, cursor paging, the agent token, the
control plane, each fault profile, the call record, state_diff and reset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.world.fake import FakeService
from skilltest.world.http import HttpRequest, HttpResponse
from skilltest.world.model import Service, World, load_world

WORLD = Path(__file__).with_name("worlds") / "tickets.yaml"
AGENT = "agent-token-0123456789"
CONTROL = "control-token-9876543210"
BASE = "https://api.tickets.example.com"


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(WORLD)


def service(world: World, name: str = "tickets") -> Service:
    return next(s for s in world.services if s.name == name)


class Client:
    """Sends requests to one fake as an agent would, with the agent token."""

    def __init__(self, fake: FakeService, base: str = BASE) -> None:
        self.fake = fake
        self.base = base
        self.clock = 0.0

    def send(
        self,
        method: str,
        target: str,
        body: Any = b"",
        *,
        token: str | None = AGENT,
        headers: dict[str, str] | None = None,
    ) -> HttpResponse:
        sent = dict(headers or {})
        if token is not None:
            sent.setdefault("Authorization", f"Bearer {token}")
        self.clock += 1.0
        request = HttpRequest.from_url(method, self.base + target, headers=sent, body=body)
        return self.fake.handle(request, self.clock)

    def control(self, method: str, target: str, token: str | None = CONTROL) -> HttpResponse:
        return self.send(method, target, token=token)


def fake_for(world: World, profile: str | None = None, name: str = "tickets") -> FakeService:
    chosen = service(world, name)
    faults = chosen.profiles[profile] if profile else ()
    return FakeService(chosen, agent_token=AGENT, control_token=CONTROL, profile=faults)


@pytest.fixture
def client(world: World) -> Client:
    return Client(fake_for(world))


def ids(response: HttpResponse, key: str = "tickets") -> list[str]:
    return [record["id"] for record in response.json()[key]]


def labels(fake: FakeService) -> list[tuple[str, int]]:
    return [(call.label(), call.status) for call in fake.calls]


# -- list ---------------------------------------------------------------------------------


def test_list_pages_with_an_opaque_cursor_across_the_page_boundary(client):
    first = client.send("GET", "/tickets")
    assert first.status == 200
    assert ids(first) == ["INC-1001", "INC-1042"]
    cursor = first.json()["next_cursor"]
    assert isinstance(cursor, str) and not cursor.isdigit()  # opaque, not an offset
    second = client.send("GET", f"/tickets?cursor={cursor}")
    assert ids(second) == ["INC-1043", "INC-1050"]
    third = client.send("GET", f"/tickets?cursor={second.json()['next_cursor']}")
    assert ids(third) == ["INC 7", "FAKE-CANARY"]
    assert third.json()["next_cursor"] is None


def test_list_filters_by_equal_field_value(client):
    owned = client.send("GET", "/tickets?owner=payments&status=P1")
    assert ids(owned) == ["INC-1042", "INC-1043"]
    assert owned.json()["next_cursor"] is None
    # a JSON literal is spelt as a query parameter spells it; several values are alternatives
    assert ids(client.send("GET", "/tickets?overdue=true&status=P2")) == ["INC-1050"]
    assert ids(client.send("GET", "/tickets?owner=finance&owner=nobody")) == [
        "INC-1050",
        "FAKE-CANARY",
    ]
    # parameters that are not filters are ignored, as most APIs do
    assert ids(client.send("GET", "/tickets?owner=finance&sort=desc")) == ["INC-1050"]
    assert ids(client.send("GET", "/tickets?owner=nobody-at-all")) == []


def test_a_filtered_list_pages_within_the_filter(client):
    first = client.send("GET", "/tickets?owner=payments")
    assert ids(first) == ["INC-1042", "INC-1043"]
    second = client.send("GET", f"/tickets?owner=payments&cursor={first.json()['next_cursor']}")
    assert ids(second) == ["INC 7"]
    assert second.json()["next_cursor"] is None


def test_a_cursor_for_other_filters_or_no_cursor_at_all_is_400(client):
    cursor = client.send("GET", "/tickets?owner=payments").json()["next_cursor"]
    other = client.send("GET", f"/tickets?owner=finance&cursor={cursor}")
    assert other.status == 400
    assert other.json() == {"error": "invalid cursor: pass back the next_cursor of this query"}
    assert client.send("GET", "/tickets?cursor=not-a-cursor").status == 400


# -- get, create, update, delete, respond --------------------------------------------------


def test_get_answers_the_record_with_its_version_as_etag(client):
    response = client.send("GET", "/tickets/INC-1042")
    assert response.status == 200
    assert response.headers["ETag"] == '"3"'
    assert response.json()["title"] == "Checkout errors after deploy"
    # a fixture record without a version is at version 1
    assert client.send("GET", "/tickets/INC-1050").json()["version"] == 1
    # ids are matched after percent-decoding; one trailing slash is ignored
    assert client.send("GET", "/tickets/INC%207").json()["id"] == "INC 7"
    assert client.send("GET", "/tickets/INC-1042/").status == 200
    assert client.fake.calls[-1].label() == "GET /tickets/INC-1042"


def test_get_of_an_unknown_id_is_404_and_recorded(client):
    response = client.send("GET", "/tickets/INC-9999")
    assert (response.status, response.json()) == (404, {"error": "Not Found"})
    assert labels(client.fake) == [("GET /tickets/INC-9999", 404)]


def test_a_literal_route_wins_over_a_parameter(client):
    response = client.send("GET", "/tickets/search")
    assert response.json() == {"hint": "use /tickets?status="}
    assert client.fake.calls[-1].route == "GET /tickets/search"


def test_head_is_served_by_the_get_route_without_a_body(client):
    response = client.send("HEAD", "/tickets/INC-1042")
    assert (response.status, response.body, response.headers["ETag"]) == (200, b"", '"3"')
    assert client.fake.calls[-1].write is False


def test_create_gives_the_next_id_version_1_and_a_location(client):
    response = client.send("POST", "/tickets", {"title": "New", "status": "P3", "version": 9})
    assert response.status == 201
    record = response.json()
    assert (record["id"], record["version"], record["title"]) == ("INC-1051", 1, "New")
    assert response.headers["Location"] == "/tickets/INC-1051"
    assert client.send("GET", "/tickets/INC-1051").status == 200
    assert client.fake.state_diff() == {
        "tickets": {"added": ["INC-1051"], "removed": [], "changed": {}}
    }


def test_create_with_a_taken_id_is_409_and_a_body_that_is_not_an_object_400(client):
    taken = client.send("POST", "/tickets", {"id": "INC-1042", "title": "again"})
    assert (taken.status, taken.json()) == (409, {"error": "a record with id INC-1042 exists"})
    assert client.send("POST", "/tickets", "[1, 2]").status == 400
    assert client.send("POST", "/tickets", "not json").status == 400
    assert client.fake.state_diff() == {}
    # the attempts are writes in the record all the same, with the body as sent
    assert [(c.write, c.applied, c.body) for c in client.fake.calls] == [
        (True, False, {"id": "INC-1042", "title": "again"}),
        (True, False, [1, 2]),
        (True, False, "not json"),
    ]


def test_create_with_integer_ids(world):
    orders = Client(fake_for(world, name="orders"), "https://orders.example.com")
    created = orders.send(
        "POST", "/orders", {"state": "new"}, token=None, headers={"X-Api-Key": AGENT}
    )
    assert (created.status, created.json()["id"]) == (201, 1003)


def test_update_replaces_the_fields_and_bumps_the_version(client):
    response = client.send("PUT", "/tickets/INC-1043", {"title": "Renamed", "id": "X"})
    assert response.status == 200
    assert response.json() == {"id": "INC-1043", "title": "Renamed", "version": 3}
    assert response.headers["ETag"] == '"3"'
    assert client.fake.state_diff()["tickets"]["changed"]["INC-1043"] == {
        "title": ["Checkout latency spikes", "Renamed"],
        "status": ["P1", None],
        "owner": ["payments", None],
        "overdue": [False, None],
        "version": [2, 3],
    }
    assert client.send("PUT", "/tickets/INC-0000", {"title": "x"}).status == 404


def test_delete_removes_the_record(client):
    response = client.send("DELETE", "/tickets/INC-1001")
    assert (response.status, response.body) == (204, b"")
    assert client.send("GET", "/tickets/INC-1001").status == 404
    assert client.send("DELETE", "/tickets/INC-1001").status == 404
    assert client.fake.state_diff() == {
        "tickets": {"added": [], "removed": ["INC-1001"], "changed": {}}
    }
    assert [c.applied for c in client.fake.calls] == [True, False, False]


def test_delete_with_a_stale_if_match_is_412(client):
    response = client.send("DELETE", "/tickets/INC-1042", headers={"If-Match": '"2"'})
    assert response.status == 412
    assert client.fake.state_diff() == {}


def test_respond_answers_its_status_and_body_and_changes_nothing(client):
    response = client.send("POST", "/tickets/INC-1042/escalate")
    assert (response.status, response.json()) == (202, {"queued": True})
    assert response.headers["X-Queue"] == "escalations"
    call = client.fake.calls[-1]
    assert (call.route, call.write, call.applied) == ("POST /tickets/{id}/escalate", True, False)
    assert client.fake.state_diff() == {}


# -- merge and If-Match --------------------------------------------------------------------


def test_merge_without_if_match_is_428(client):
    response = client.send("PATCH", "/tickets/INC-1042", {"owner": "platform"})
    assert response.status == 428
    assert response.json() == {
        "error": "precondition required: send If-Match with the record's version"
    }
    assert client.fake.state_diff() == {}


def test_merge_with_a_stale_version_is_412_with_the_current_etag(client):
    response = client.send(
        "PATCH", "/tickets/INC-1042", {"owner": "platform"}, headers={"If-Match": '"2"'}
    )
    assert response.status == 412
    assert response.headers["ETag"] == '"3"'
    assert response.json() == {"error": "precondition failed: the record has changed"}
    assert client.fake.state_diff() == {}


@pytest.mark.parametrize("if_match", ["3", '"3"', 'W/"3"', '"1", "3"', "*"])
def test_merge_with_the_current_version_bare_or_quoted_applies_and_bumps_it(client, if_match):
    response = client.send(
        "PATCH",
        "/tickets/INC-1042",
        {"owner": "platform", "overdue": None, "meta": {"moved": True}},
        headers={"If-Match": if_match},
    )
    assert response.status == 200
    assert response.headers["ETag"] == '"4"'
    record = response.json()
    assert (record["owner"], record["version"], record["meta"]) == ("platform", 4, {"moved": True})
    assert "overdue" not in record  # null removes a field (JSON merge patch)
    assert client.fake.state_diff() == {
        "tickets": {
            "added": [],
            "removed": [],
            "changed": {
                "INC-1042": {
                    "owner": ["payments", "platform"],
                    "overdue": [True, None],
                    "version": [3, 4],
                    "meta": [None, {"moved": True}],
                }
            },
        }
    }


def test_a_second_merge_with_the_old_version_is_412(client):
    first = client.send("PATCH", "/tickets/INC-1042", {"owner": "a"}, headers={"If-Match": "3"})
    again = client.send("PATCH", "/tickets/INC-1042", {"owner": "b"}, headers={"If-Match": "3"})
    assert (first.status, again.status) == (200, 412)
    assert client.send("GET", "/tickets/INC-1042").json()["owner"] == "a"


def test_merge_of_an_unknown_id_is_404(client):
    response = client.send("PATCH", "/tickets/NOPE", {"owner": "a"}, headers={"If-Match": "1"})
    assert response.status == 404


# -- unknown routes, tokens ----------------------------------------------------------------


def test_an_unknown_route_is_404_and_recorded(client):
    response = client.send("POST", "/admin/drop-everything", {"really": True})
    assert response.status == 404
    call = client.fake.calls[-1]
    assert (call.label(), call.status, call.route, call.write, call.body) == (
        "POST /admin/drop-everything",
        404,
        None,
        True,
        {"really": True},
    )


def test_a_known_path_with_another_method_is_405_with_allow_and_recorded(client):
    response = client.send("DELETE", "/tickets")
    assert response.status == 405
    assert response.headers["Allow"] == "GET, POST"
    assert labels(client.fake) == [("DELETE /tickets", 405)]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token"},
        {"Authorization": f"Bearer {CONTROL}"},
        {"Authorization": f"Basic {AGENT}"},
        {"Authorization": AGENT},
    ],
    ids=["none", "wrong", "control-token", "other-scheme", "no-scheme"],
)
def test_a_call_without_the_agent_token_is_401_and_not_recorded(client, headers):
    response = client.send("DELETE", "/tickets/INC-1042", token=None, headers=headers)
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert client.send("GET", "/nowhere", token=None, headers=headers).status == 401
    assert client.fake.calls == []
    assert client.fake.state_diff() == {}


def test_the_token_scheme_is_case_insensitive(client):
    assert (
        client.send(
            "GET", "/tickets/INC-1042", token=None, headers={"authorization": f"bearer {AGENT}"}
        ).status
        == 200
    )


def test_a_token_in_its_own_header(world):
    orders = Client(fake_for(world, name="orders"), "https://orders.example.com")
    assert orders.send("GET", "/orders/1001", headers={"X-Api-Key": AGENT}).status == 200
    assert orders.send("GET", "/orders/1001", token=None, headers={"X-Api-Key": "x"}).status == 401
    assert len(orders.fake.calls) == 1


def test_a_service_without_auth_needs_no_token(world):
    status = Client(fake_for(world, name="status"), "https://status.example.com")
    assert status.send("GET", "/summary", token=None).json() == {"ok": True}
    assert labels(status.fake) == [("GET /summary", 200)]


def test_the_tokens_must_be_set_and_differ(world):
    with pytest.raises(ValueError, match="differ"):
        FakeService(service(world), agent_token="same", control_token="same")
    with pytest.raises(ValueError, match="set"):
        FakeService(service(world), agent_token="", control_token="x")


# -- control plane -------------------------------------------------------------------------


def test_health_answers_anyone_and_is_not_recorded(client):
    for token in (None, AGENT, "garbage"):
        response = client.send("GET", "/health", token=token)
        assert (response.status, response.json()) == (200, {"service": "tickets", "mode": "fake"})
    assert client.send("POST", "/health").status == 405
    assert client.fake.calls == []


@pytest.mark.parametrize(
    ("method", "target"),
    [("GET", "/_skilltest/calls"), ("GET", "/_skilltest/state"), ("POST", "/_skilltest/reset")],
)
@pytest.mark.parametrize("token", [None, AGENT, "guess"], ids=["none", "agent-token", "guess"])
def test_the_control_routes_need_the_control_token(client, method, target, token):
    client.send("PATCH", "/tickets/INC-1042", {"owner": "x"}, headers={"If-Match": "3"})
    response = client.control(method, target, token=token)
    assert response.status == 401
    assert "tickets" not in response.body.decode()
    assert labels(client.fake) == [("PATCH /tickets/INC-1042", 200)]  # nothing reset or added
    assert client.fake.state_diff() != {}


def test_the_control_routes_with_the_control_token(client):
    client.send("PATCH", "/tickets/INC-1042?notify=no", {"owner": "x"}, headers={"If-Match": "3"})
    calls = client.control("GET", "/_skilltest/calls").json()["calls"]
    assert calls == [
        {
            "service": "tickets",
            "method": "PATCH",
            "host": "api.tickets.example.com",
            "path": "/tickets/INC-1042",
            "query": "notify=no",
            "status": 200,
            "at": 1.0,
            "write": True,
            "applied": True,
            "route": "PATCH /tickets/{id}",
            "body": {"owner": "x"},
        }
    ]
    state = client.control("GET", "/_skilltest/state").json()
    assert state["diff"]["tickets"]["changed"]["INC-1042"]["owner"] == ["payments", "x"]
    assert len(state["state"]["tickets"]) == 6
    assert client.control("GET", "/_skilltest/reset").status == 405
    assert client.control("GET", "/_skilltest/other").status == 404
    assert client.control("POST", "/_skilltest/reset").json() == {"reset": True}
    assert client.fake.calls == []
    assert client.fake.state_diff() == {}
    assert client.send("GET", "/tickets/INC-1042").json()["owner"] == "payments"


def test_the_control_plane_answers_on_every_declared_host(world):
    fake = fake_for(world)
    other = Client(fake, "https://tickets.example.com")
    assert other.send("GET", "/health").json()["service"] == "tickets"
    assert other.control("GET", "/_skilltest/calls").status == 200


# -- the record, state_diff, reset ---------------------------------------------------------


def test_the_record_holds_what_was_received(client):
    client.send("GET", "/tickets?status=P1")
    client.send("POST", "/tickets/INC-1042/escalate", "plain text")
    first, second = client.fake.calls
    assert (first.label(), first.query, first.write, first.route, first.at, first.body) == (
        "GET /tickets",
        "status=P1",
        False,
        "GET /tickets",
        1.0,
        None,
    )
    assert (second.label(), second.write, second.body, second.service, second.host) == (
        "POST /tickets/INC-1042/escalate",
        True,
        "plain text",
        "tickets",
        "api.tickets.example.com",
    )


def test_reset_restores_the_fixture_and_empties_the_record(client):
    client.send("DELETE", "/tickets/INC-1001")
    client.send("POST", "/tickets", {"title": "t"})
    kept = client.fake.calls
    client.fake.reset()
    assert client.fake.state_diff() == {}
    assert kept is client.fake.calls and kept == []
    assert [r["id"] for r in client.fake.state()["tickets"]][:2] == ["INC-1001", "INC-1042"]


def test_state_is_a_copy(client):
    state = client.fake.state()
    state["tickets"].clear()
    assert client.send("GET", "/tickets/INC-1042").status == 200


def test_two_fakes_of_one_service_never_share_state(world):
    one, two = Client(fake_for(world)), Client(fake_for(world))
    one.send("DELETE", "/tickets/INC-1001")
    assert two.send("GET", "/tickets/INC-1001").status == 200
    assert two.fake.state_diff() == {} and len(two.fake.calls) == 1
    # the fixture the world loaded is untouched too
    assert service(world).data["tickets"][0]["id"] == "INC-1001"
    assert "version" not in service(world).data["tickets"][3]


# -- profiles ------------------------------------------------------------------------------


def test_profile_empty(world):
    client = Client(fake_for(world, "empty"))
    assert client.send("GET", "/tickets").json() == {"tickets": [], "next_cursor": None}
    assert client.send("GET", "/tickets/INC-1042").status == 404
    # writes are unaffected
    patched = client.send("PATCH", "/tickets/INC-1042", {"owner": "x"}, headers={"If-Match": "3"})
    assert patched.status == 200


def test_profile_unauthorized_is_recorded_unlike_a_missing_token(world):
    client = Client(fake_for(world, "unauthorized"))
    response = client.send("PATCH", "/tickets/INC-1042", {"owner": "x"}, headers={"If-Match": "3"})
    assert (response.status, response.json()) == (401, {"error": "Unauthorized"})
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert labels(client.fake) == [("PATCH /tickets/INC-1042", 401)]
    assert client.fake.calls[0].applied is False
    assert client.fake.state_diff() == {}
    assert client.send("GET", "/health").status == 200  # the control plane is not faulted


def test_profile_rate_limited_once_with_retry_after(world):
    client = Client(fake_for(world, "rate_limited"))
    limited = client.send("GET", "/tickets")
    assert (limited.status, limited.headers["Retry-After"]) == (429, "1")
    assert limited.json() == {"error": "Too Many Requests"}
    assert client.send("GET", "/tickets/INC-1042").status == 200  # another route
    retried = client.send("GET", "/tickets")
    assert retried.status == 200 and "Retry-After" not in retried.headers
    assert labels(client.fake) == [
        ("GET /tickets", 429),
        ("GET /tickets/INC-1042", 200),
        ("GET /tickets", 200),
    ]
    client.fake.reset()  # the fault's `times` start again
    assert client.send("GET", "/tickets").status == 429


def test_profile_timeout_never_answers_and_changes_nothing(world):
    client = Client(fake_for(world, "timeout"))
    hung = client.send("PATCH", "/tickets/INC-1042", {"owner": "x"}, headers={"If-Match": "3"})
    assert hung.hang is True
    assert labels(client.fake) == [("PATCH /tickets/INC-1042", 0)]
    assert client.fake.state_diff() == {}
    retried = client.send("PATCH", "/tickets/INC-1042", {"owner": "x"}, headers={"If-Match": "3"})
    assert (retried.status, retried.hang) == (200, False)


def test_profile_malformed_answers_a_body_that_is_not_json(world):
    client = Client(fake_for(world, "malformed"))
    response = client.send("GET", "/tickets/INC-1042")
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/json"
    with pytest.raises(ValueError):
        response.json()
    assert response.body.startswith(b'{"id": "INC-1042"')
    assert client.send("GET", "/tickets").status == 200  # only the get route
    assert json.loads(client.send("GET", "/tickets").body)


def test_profile_schema_change_renames_and_drops_fields_in_answers_only(world):
    client = Client(fake_for(world, "schema_change"))
    record = client.send("GET", "/tickets/INC-1042").json()
    assert record["assignee"] == "payments"
    assert "owner" not in record and "overdue" not in record
    listed = client.send("GET", "/tickets").json()["tickets"]
    assert {tuple(sorted(r)) for r in listed} == {("assignee", "id", "status", "title", "version")}
    assert client.fake.state()["tickets"][1]["owner"] == "payments"


def test_profile_body_replaces_the_answer_of_one_concrete_path(world):
    client = Client(fake_for(world, "replaced"))
    assert client.send("GET", "/tickets/INC-1042").json() == {"ticket": {"key": "INC-1042"}}
    assert client.send("GET", "/tickets/INC-1043").json()["id"] == "INC-1043"


def test_profile_partial_applies_the_first_field_then_answers_500(world):
    client = Client(fake_for(world, "partial"))
    response = client.send(
        "PATCH",
        "/tickets/INC-1042",
        {"owner": "platform", "status": "P2"},
        headers={"If-Match": "3"},
    )
    assert (response.status, response.json()) == (500, {"error": "Internal Server Error"})
    assert client.fake.calls[0].applied is True
    assert client.fake.state_diff()["tickets"]["changed"]["INC-1042"] == {
        "owner": ["payments", "platform"],
        "version": [3, 4],
    }
    # a blind retry with the version it had is refused: the state moved on
    retry = client.send(
        "PATCH",
        "/tickets/INC-1042",
        {"owner": "platform", "status": "P2"},
        headers={"If-Match": "3"},
    )
    assert retry.status == 412


def test_profile_partial_with_a_status_answers_it_and_leaves_reads_alone(world):
    client = Client(fake_for(world, "partial_207"))
    assert client.send("GET", "/tickets/INC-1042").status == 200
    created = client.send("POST", "/tickets", {"title": "New", "status": "P3"})
    assert created.status == 207
    assert created.json() == {"id": "INC-1051", "title": "New", "version": 1}
    deleted = client.send("DELETE", "/tickets/INC-1001")
    assert deleted.status == 207
    assert client.fake.state_diff()["tickets"] == {
        "added": ["INC-1051"],
        "removed": ["INC-1001"],
        "changed": {},
    }


def test_profile_delays_add_up_and_headers_merge(world):
    client = Client(fake_for(world, "slow"))
    listed = client.send("GET", "/tickets")
    assert (listed.status, listed.delay_s, listed.headers["X-Slow"]) == (200, 2.0, "yes")
    one = client.send("GET", "/tickets/INC-1042")
    assert (one.delay_s, "X-Slow" in one.headers) == (1.5, False)


def test_without_a_profile_nothing_is_faulted(client):
    response = client.send("GET", "/tickets")
    assert (response.status, response.delay_s, response.hang) == (200, 0.0, False)
