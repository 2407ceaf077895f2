"""One service's fake for one run: fixture state, routes, fault profile, auth and control plane.

A :class:`FakeService` turns an :class:`~skilltest.world.http.HttpRequest` into an
:class:`~skilltest.world.http.HttpResponse` and records a :class:`~skilltest.world.calls.Call`
for it. It opens no socket: the world's proxy hands it what arrives for its hosts.

**Order of a request.** (1) The control plane: ``GET /health`` answers ``{"service": NAME,
"mode": "fake"}`` to anyone; ``GET /_skilltest/calls``, ``GET /_skilltest/state`` and
``POST /_skilltest/reset`` need ``Authorization: Bearer <control token>`` (401 otherwise).
Nothing on the control plane is recorded. (2) The agent token: on a service with ``auth:``, a
request without ``<header>: <scheme> <agent token>`` is answered 401 and **not recorded**, so
nobody but the agent adds to the record. (3) The route: the most specific declared route whose
template matches the path (literal segments beat ``{param}``; one trailing ``/`` is ignored);
a path no route serves answers 404 and a known path with another method 405 (with ``Allow``),
both recorded with ``route`` ``None``. ``HEAD`` is served by the ``GET`` route, without a body.
(4) The profile's faults for that request, then (5) headers the route ``requires`` (400 naming
the header, 428 for ``If-Match``), then (6) the action.

**Actions.** Records are matched by their ``id`` compared as text; every record carries an
integer ``version`` (1 when the fixture gives none), sent as ``ETag: "<version>"`` on every
answer that holds one record.

* ``list``: ``200 {COLLECTION: [records], "next_cursor": ...}``. Each query parameter named in
  ``filters`` keeps the records whose field equals one of its values (compared as text;
  ``true``/``false``/``null`` for JSON literals); other parameters are ignored, as most APIs do.
  With ``page_size`` the answer holds that many records and ``next_cursor`` (``null`` on the last
  page), an opaque token passed back as ``?cursor=``; a cursor that is not one, or that was
  made for other filters, answers 400.
* ``get``: the record, or 404.
* ``create``: the body must be a JSON object (else 400). It keeps its ``id`` if it has one (409
  when taken) or gets the next one (``INC-1043`` after ``INC-1042``; ``max + 1`` for integers);
  ``version`` is 1. ``201`` with the record, ``Location`` and ``ETag``.
* ``update`` (PUT): the record's fields are replaced by the body's (``id`` kept); ``merge``
  (PATCH): the body is a JSON merge patch (RFC 7396: ``null`` removes a field, objects merge).
  Either bumps ``version`` by one and answers ``200`` with the record; 404 for an unknown id.
* ``delete``: removes the record, ``204``; 404 for an unknown id.
* ``respond``: answers the route's ``status``, ``body`` and ``headers``; no state changes.

``If-Match`` on update, merge and delete holds the version bare (``3``) or as an ETag (``"3"``,
``W/"3"``); several may be listed, ``*`` matches any. A stale one answers ``412`` with the
current ``ETag`` and changes nothing. A route that ``requires: [If-Match]`` answers ``428``
without one.

**Fault profiles.** A scenario picks one profile by name; each service applies its own faults
of that name (a service without it behaves normally). Every fault whose ``route`` matches the
request (``*``, a route template such as ``GET /tickets/{id}``, or one concrete path) and has
``times`` left applies, in the order written, and uses up one of its ``times``; delays add up,
headers merge, and for the rest the first fault that sets it wins. What each does:

* ``status`` (without ``partial``): the request is **not carried out**; the answer is that
  status with ``body`` or ``{"error": "<reason phrase>"}`` and ``headers``. *Unauthorized*:
  ``{route: "*", status: 401}`` (a ``WWW-Authenticate`` header is added; the call is recorded,
  unlike a missing token). *Rate-limited*: ``{status: 429, headers: {Retry-After: "1"},
  times: 1}``: the first request is refused, the retry succeeds.
* ``timeout``: the request is not carried out and never answered (``hang``: the proxy holds the
  connection until the client gives up); recorded with status 0.
* ``delay_ms``: the answer is sent that much later (the request is carried out at once).
* ``malformed``: the request is carried out, and the answer's body is its JSON cut off half-way
  (still labelled ``application/json``), so it does not parse.
* ``body``: the request is carried out, and the answer's body is replaced by this JSON value.
* ``rename`` / ``drop`` (*schema change*): the request is carried out, and every record in the
  answer has those fields renamed or removed (the state keeps its fields).
* ``empty``: lists answer no records and gets answer 404, as if the collection were empty
  (writes are unaffected).
* ``partial`` (write routes only): the write is applied **in part**: ``create`` stores the
  record with only its id and the first field of the body, ``update`` and ``merge`` apply only
  the first field of the body (and bump ``version``), ``delete`` removes the record; then the
  answer is ``status`` (default 500) with ``body`` or ``{"error": ...}``. The agent is told it
  failed though the state changed, so a blind retry writes twice.
* ``headers`` alone: added to the real answer.

**Record.** Every request past the token check is a :class:`Call` (method, host, path, query,
status, JSON body, whether the method writes, whether the state changed). :meth:`state_diff`
compares the state with the fixture; :meth:`reset` restores the fixture, empties the record and
restarts the faults' ``times``.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import re
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from skilltest.world.calls import Call, is_write
from skilltest.world.http import HttpRequest, HttpResponse, error_phrase, json_response
from skilltest.world.model import READ_ACTIONS, WRITE_ACTIONS, Fault, Route, Service

CONTROL_PREFIX = "/_skilltest/"
"""Where the control routes live on every declared host."""
MAX_RECORDED_TEXT = 10_000
"""The most characters of a non-JSON request body kept in the record."""


@dataclass
class _Answer:
    """An answer being built: payload still a Python value, and whether state changed."""

    status: int
    payload: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    applied: bool = False
    records: str = "none"
    """Where records sit in ``payload`` for ``rename``/``drop``: ``none``, ``one`` (the
    payload is a record) or the collection key of a list answer."""


def _error(status: int, message: str | None = None, **headers: str) -> _Answer:
    return _Answer(status, {"error": message or error_phrase(status)}, dict(headers))


def _etag(record: Mapping[str, Any]) -> str:
    return f'"{record.get("version", 1)}"'


def _text(value: Any) -> str:
    """A field value as a query parameter spells it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


class FakeService:
    """One service's fake for one run.

    Args:
        service: The service as the world file declares it.
        agent_token: The token the agent presents (generated per run, never from the
            environment).
        control_token: The token of the control plane (calls, state, reset).
        profile: The faults of the profile the scenario picked, for this service.
    """

    def __init__(
        self,
        service: Service,
        *,
        agent_token: str,
        control_token: str,
        profile: Sequence[Fault] = (),
    ) -> None:
        if not agent_token or not control_token or agent_token == control_token:
            raise ValueError("the agent and control tokens must be set and differ")
        self.service = service
        self._agent_token = agent_token.encode()
        self._control_token = control_token.encode()
        self._profile = tuple(profile)
        self._lock = threading.Lock()
        self._initial: dict[str, list[dict[str, Any]]] = {}
        for name in service.collections:
            records = copy.deepcopy(list(service.data.get(name) or []))
            for record in records:
                record.setdefault("version", 1)
            self._initial[name] = records
        self._state: dict[str, list[dict[str, Any]]] = {}
        self._uses: list[int | None] = []
        self.calls: list[Call] = []
        """Every recorded call, in the order received."""
        self.reset()

    # -- state ---------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to the fixture: state restored, the record emptied, fault ``times`` restarted."""
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        self._state = copy.deepcopy(self._initial)
        self.calls.clear()
        self._uses = [fault.times for fault in self._profile]

    def state(self) -> dict[str, Any]:
        """The current records, by collection (a copy)."""
        with self._lock:
            return copy.deepcopy(self._state)

    def state_diff(self) -> dict[str, Any]:
        """What changed since the fixture, per collection that changed.

        Returns:
            ``{collection: {"added": [ids], "removed": [ids], "changed": {id: {field: [old,
            new]}}}}``; ids as text, a missing field as ``None``; ``{}`` when nothing changed.
        """
        with self._lock:
            return self._diff()

    def _diff(self) -> dict[str, Any]:
        return {
            name: diff
            for name, records in self._state.items()
            if (diff := _diff(self._initial.get(name, []), records))
        }

    # -- requests ------------------------------------------------------------------------

    def handle(self, request: HttpRequest, now: float) -> HttpResponse:
        """Answers one request and records it (unless it is refused for its token, or is a
        control-plane request).

        Args:
            request: The request, as the proxy parsed it.
            now: ``time.monotonic()`` when it arrived.
        """
        path = request.path
        if len(path) > 1 and path.endswith("/"):
            path = path[:-1]  # one trailing slash, as most routers forgive
        with self._lock:
            control = self._control(request, path)
            if control is not None:
                return control
            if not self._authorised(request):
                return json_response(
                    401, {"error": "Unauthorized"}, {"WWW-Authenticate": self._challenge()}
                )
            route, params, allowed = self._route(request.method, path)
            effects = self._effects(request.method, path, route)
            if effects.timeout:
                # Never answered: the status is the proxy's to give if it ever gives one.
                response, applied = HttpResponse(504, hang=True), False
            else:
                answer = self._answer(request, route, params, allowed, effects)
                response, applied = _finish(request, answer, effects), answer.applied
            self.calls.append(
                Call(
                    service=self.service.name,
                    method=request.method,
                    host=request.host,
                    path=path,
                    status=0 if response.hang else response.status,
                    at=now,
                    write=is_write(request.method),
                    route=route.label if route else None,
                    body=_recorded_body(request.body),
                    query=request.raw_query,
                    applied=applied,
                )
            )
        return response

    def _challenge(self) -> str:
        return self.service.auth_scheme or "Token"

    def _authorised(self, request: HttpRequest) -> bool:
        if self.service.auth_env is None:
            return True
        value = request.header(self.service.auth_header) or ""
        scheme = self.service.auth_scheme
        if scheme:
            given_scheme, _, token = value.strip().partition(" ")
            if given_scheme.lower() != scheme.lower():
                return False
            value = token.strip()
        return hmac.compare_digest(value.encode(), self._agent_token)

    def _control(self, request: HttpRequest, path: str) -> HttpResponse | None:
        if path == "/health":
            if request.method not in ("GET", "HEAD"):
                return json_response(405, {"error": error_phrase(405)}, {"Allow": "GET, HEAD"})
            return json_response(200, {"service": self.service.name, "mode": "fake"})
        if not (path + "/").startswith(CONTROL_PREFIX):
            return None
        given = request.header("authorization") or ""
        scheme, _, token = given.strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), self._control_token
        ):
            return json_response(401, {"error": "Unauthorized"}, {"WWW-Authenticate": "Bearer"})
        routes = {"calls": "GET", "state": "GET", "reset": "POST"}
        name = path[len(CONTROL_PREFIX) :]
        if name not in routes:
            return json_response(404, {"error": error_phrase(404)})
        if request.method != routes[name]:
            return json_response(405, {"error": error_phrase(405)}, {"Allow": routes[name]})
        if name == "calls":
            return json_response(200, {"calls": [call.to_dict() for call in self.calls]})
        if name == "state":
            return json_response(200, {"state": self._state, "diff": self._diff()})
        self._reset()
        return json_response(200, {"reset": True})

    def _route(
        self, method: str, path: str
    ) -> tuple[Route | None, dict[str, str], tuple[str, ...]]:
        """The route serving a request, its parameters (decoded), and the methods the path
        has when none serves this one."""
        wanted = "GET" if method == "HEAD" else method
        serving: list[tuple[Route, dict[str, str]]] = []
        for route in self.service.routes:
            params = route.match(path)
            if params is not None:
                serving.append((route, params))
        for route, params in sorted(serving, key=lambda pair: -pair[0].literal_segments):
            if route.method == wanted:
                return route, {k: unquote(v) for k, v in params.items()}, ()
        return None, {}, tuple(dict.fromkeys(route.method for route, _ in serving))

    def _effects(self, method: str, path: str, route: Route | None) -> Fault:
        applied: list[Fault] = []
        for index, fault in enumerate(self._profile):
            left = self._uses[index]
            if fault.partial and not _writes(route):
                continue  # `partial` on "*" is for the write routes
            if fault.empty and (route is None or route.action not in READ_ACTIONS):
                continue  # `empty` on "*" is for the lists and gets
            if (left is None or left > 0) and fault.applies_to(method, path, route):
                if left is not None:
                    self._uses[index] = left - 1
                applied.append(fault)
        return _merged(applied)

    def _answer(
        self,
        request: HttpRequest,
        route: Route | None,
        params: dict[str, str],
        allowed: tuple[str, ...],
        effects: Fault,
    ) -> _Answer:
        if effects.status is not None and not (effects.partial and _writes(route)):
            answer = _Answer(effects.status, effects.body, {})
            if answer.payload is None:
                answer.payload = {"error": error_phrase(effects.status)}
            if effects.status == 401:
                answer.headers["WWW-Authenticate"] = self._challenge()
            return answer
        if route is None:
            if allowed:
                return _error(405, Allow=", ".join(allowed))
            return _error(404)
        for header in route.requires:
            if request.header(header) is None:
                if header.lower() == "if-match":
                    return _error(
                        428, "precondition required: send If-Match with the record's version"
                    )
                return _error(400, f"missing header {header}")
        if route.action == "respond":
            return _Answer(route.status or 200, route.body, dict(route.headers))
        collection = str(route.collection)
        records = self._state.setdefault(collection, [])
        if route.action == "list":
            return self._list(request, route, [] if effects.empty else records)
        if route.action == "create":
            return self._create(request, route, records, effects.partial)
        key = params[str(route.id_param)]
        index = next((i for i, r in enumerate(records) if str(r.get("id")) == key), None)
        if index is None or (effects.empty and route.action == "get"):
            return _error(404)
        record = records[index]
        if route.action == "get":
            return _Answer(200, copy.deepcopy(record), {"ETag": _etag(record)}, records="one")
        stale = _precondition(request, record)
        if stale is not None:
            return stale
        if route.action == "delete":
            del records[index]
            return _Answer(204, None, {}, applied=True)
        body = _json_object(request.body)
        if body is None:
            return _error(400, "the request body is not a JSON object")
        changes = dict(list(body.items())[:1]) if effects.partial else body
        if route.action == "update":
            updated = {"id": record["id"], **_without_keys(changes)}
            if effects.partial:
                updated = {**record, **_without_keys(changes)}
        else:
            updated = _merge_patch(record, _without_keys(changes))
            updated["id"] = record["id"]
        updated["version"] = int(record.get("version", 1)) + 1
        records[index] = updated
        return _Answer(
            200, copy.deepcopy(updated), {"ETag": _etag(updated)}, applied=True, records="one"
        )

    def _list(self, request: HttpRequest, route: Route, records: list[dict[str, Any]]) -> _Answer:
        chosen = records
        used: list[tuple[str, tuple[str, ...]]] = []
        for name in route.filters:
            values = request.query.get(name)
            if values is None:
                continue
            used.append((name, tuple(values)))
            chosen = [r for r in chosen if _text(r.get(name)) in values]
        collection = str(route.collection)
        if route.page_size is None:
            return _Answer(200, {collection: copy.deepcopy(chosen)}, records=collection)
        digest = hashlib.sha256(json.dumps(sorted(used)).encode()).hexdigest()[:12]
        offset = 0
        cursor = (request.query.get("cursor") or ("",))[0]
        if cursor:
            offset_or_none = _read_cursor(cursor, digest)
            if offset_or_none is None:
                return _error(400, "invalid cursor: pass back the next_cursor of this query")
            offset = offset_or_none
        end = offset + route.page_size
        following = _make_cursor(end, digest) if end < len(chosen) else None
        payload = {collection: copy.deepcopy(chosen[offset:end]), "next_cursor": following}
        return _Answer(200, payload, records=collection)

    def _create(
        self, request: HttpRequest, route: Route, records: list[dict[str, Any]], partial: bool
    ) -> _Answer:
        body = _json_object(request.body)
        if body is None:
            return _error(400, "the request body is not a JSON object")
        taken = {str(r.get("id")) for r in records}
        key = body.get("id")
        if key is not None and str(key) in taken:
            return _error(409, f"a record with id {key} exists")
        if key is None:
            key = _next_id([r.get("id") for r in records], str(route.collection))
        fields = _without_keys(body)
        if partial:
            fields = dict(list(fields.items())[:1])
        record = {"id": key, **fields, "version": 1}
        records.append(record)
        where = route.path.rsplit("/", 1)[0] if "{" in route.path else route.path
        headers = {
            "ETag": _etag(record),
            "Location": f"{where.rstrip('/')}/{quote(str(key), safe='')}",
        }
        return _Answer(201, copy.deepcopy(record), headers, applied=True, records="one")


def _finish(request: HttpRequest, answer: _Answer, effects: Fault) -> HttpResponse:
    """The answer with the faults' changes to it: shape, status, body, headers, delay."""
    status, payload = answer.status, answer.payload
    if effects.rename or effects.drop:
        payload = _reshape(payload, answer.records, effects.rename, effects.drop)
    if effects.partial and answer.applied:
        status = effects.status or 500
        if effects.body is not None:
            payload = effects.body
        elif status >= 300:
            payload = {"error": error_phrase(status)}
    elif effects.body is not None:
        payload = effects.body
    response = json_response(status, payload, {**answer.headers, **effects.headers})
    body = _malformed(response.body) if effects.malformed else response.body
    return HttpResponse(
        status=status,
        headers=response.headers,
        body=b"" if request.method == "HEAD" else body,
        delay_s=effects.delay_ms / 1000,
    )


def _writes(route: Route | None) -> bool:
    return route is not None and route.action in WRITE_ACTIONS


def _precondition(request: HttpRequest, record: Mapping[str, Any]) -> _Answer | None:
    """412 when ``If-Match`` names another version than the record's; ``None`` otherwise."""
    given = request.header("if-match")
    if given is None:
        return None
    version = str(record.get("version", 1))
    for tag in given.split(","):
        tag = tag.strip()
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag == "*" or tag.strip('"') == version:
            return None
    return _error(412, "precondition failed: the record has changed", ETag=_etag(record))


def _json_object(body: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _without_keys(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A body's fields without those the fake owns (``id``, ``version``)."""
    return {k: v for k, v in fields.items() if k not in ("id", "version")}


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _next_id(ids: list[Any], collection: str) -> Any:
    """The id a new record gets: the next integer, or the next ``PREFIX-N`` after the largest."""
    if ids and all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return max(ids) + 1
    numbered = [m for i in ids if (m := _NUMBERED.match(str(i)))]
    if numbered:
        best = max(numbered, key=lambda m: int(m.group(2)))
        width = len(best.group(2))
        taken = {str(i) for i in ids}
        number = int(best.group(2)) + 1
        while f"{best.group(1)}{number:0{width}d}" in taken:
            number += 1
        return f"{best.group(1)}{number:0{width}d}"
    number = len(ids) + 1
    taken = {str(i) for i in ids}
    while f"{collection}-{number}" in taken:
        number += 1
    return f"{collection}-{number}"


def _make_cursor(offset: int, digest: str) -> str:
    return base64.urlsafe_b64encode(f"v1:{offset}:{digest}".encode()).decode().rstrip("=")


def _read_cursor(cursor: str, digest: str) -> int | None:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    version, _, rest = text.partition(":")
    offset, _, made_for = rest.partition(":")
    if version != "v1" or not offset.isdigit() or made_for != digest:
        return None
    return int(offset)


def _merged(faults: list[Fault]) -> Fault:
    """What the faults that apply to one request do together, as one fault: delays add up,
    headers merge, and for the rest the first fault that sets it wins."""
    return Fault(
        route="*",
        status=next((fault.status for fault in faults if fault.status is not None), None),
        headers={k: v for fault in reversed(faults) for k, v in fault.headers.items()},
        malformed=any(fault.malformed for fault in faults),
        delay_ms=sum(fault.delay_ms for fault in faults),
        timeout=any(fault.timeout for fault in faults),
        body=next((fault.body for fault in faults if fault.body is not None), None),
        empty=any(fault.empty for fault in faults),
        partial=any(fault.partial for fault in faults),
        rename={k: v for fault in reversed(faults) for k, v in fault.rename.items()},
        drop=tuple(dict.fromkeys(name for fault in faults for name in fault.drop)),
    )


def _reshape(payload: Any, records: str, rename: Mapping[str, str], drop: Collection[str]) -> Any:
    def one(record: Any) -> Any:
        if not isinstance(record, dict):
            return record
        return {rename.get(k, k): v for k, v in record.items() if k not in drop}

    if records == "one":
        return one(payload)
    if records != "none" and isinstance(payload, dict) and isinstance(payload.get(records), list):
        return {**payload, records: [one(r) for r in payload[records]]}
    return payload


def _malformed(body: bytes) -> bytes:
    """A body cut off half-way, checked not to parse as JSON."""
    cut = body[: max(1, len(body) // 2)] or b"{"
    try:
        json.loads(cut)
    except (ValueError, RecursionError):
        return cut
    return cut + b"\x00{"


def _recorded_body(body: bytes) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return body.decode("utf-8", errors="replace")[:MAX_RECORDED_TEXT]


def _diff(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> dict[str, Any]:
    old = {str(r.get("id")): r for r in before}
    new = {str(r.get("id")): r for r in after}
    added = [key for key in new if key not in old]
    removed = [key for key in old if key not in new]
    changed: dict[str, dict[str, list[Any]]] = {}
    for key in new.keys() & old.keys():
        fields = {
            name: [old[key].get(name), new[key].get(name)]
            for name in dict.fromkeys([*old[key], *new[key]])
            if old[key].get(name) != new[key].get(name) or (name in old[key]) != (name in new[key])
        }
        if fields:
            changed[key] = fields
    if not (added or removed or changed):
        return {}
    ordered = {key: changed[key] for key in new if key in changed}
    return {"added": added, "removed": removed, "changed": ordered}
