"""World files: the services a skill acts on, faked on their real hostnames.

A world file is YAML, validated once by ``world.schema.json`` and then by the checks here
(names, hosts, routes, fixtures, profiles, canary), and typed as a :class:`World`::

    services:
      - name: tickets
        hosts: [api.tickets.example.com]
        auth: {env: TICKETS_API_TOKEN}
        data: tickets.json
        routes:
          - {method: GET, path: /tickets, action: list, collection: tickets, filters: [status]}
          - {method: PATCH, path: "/tickets/{id}", action: merge, collection: tickets,
             requires: [If-Match]}
        profiles:
          rate_limited: [{route: "GET /tickets", status: 429, headers: {Retry-After: "1"}}]
        canary: {method: GET, path: /tickets/FAKE-CANARY}
    mcp:
      crm: {tools: [{name: lookup, responses: [{match: {id: "7"}, result: "..."}]}]}

What each action and fault does is described in :mod:`skilltest.world.fake`.

Every problem is a :class:`~skilltest.errors.WorldError` naming the file and the JSON pointer
(``tickets.yaml#/services/0/routes/3``), or the fixture file and its pointer, with a fix.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skilltest.errors import WorldError
from skilltest.limits import MAX_YAML_BYTES
from skilltest.suite.loader import json_pointer, read_yaml, reject_non_finite, validate
from skilltest.suite.repository import Repository, repository_of
from skilltest.world.expect import READ_METHODS
from skilltest.world.policy import host_problem, model_api_hosts, normalise_host

ACTIONS = ("list", "get", "create", "update", "merge", "delete", "respond")
"""What a route does with its collection."""
READ_ACTIONS = frozenset({"list", "get"})
"""Actions that only read (their routes must be GET)."""
WRITE_ACTIONS = frozenset({"create", "update", "merge", "delete"})
"""Actions that change the collection (their routes must not be GET)."""
RECORD_ACTIONS = frozenset({"get", "update", "merge", "delete"})
"""Actions on one record, named by the last ``{param}`` of the path."""
CONTROL_PATHS = ("/health", "/_skilltest")
"""Paths the fake answers itself on every host (the control plane)."""

RESERVED_ENV = frozenset(
    {
        "PATH", "HOME", "SHELL", "USER", "LOGNAME", "PWD", "TMPDIR", "TEMP", "TMP", "LANG",
        "TERM", "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE",
        "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "GIT_CONFIG_NOSYSTEM",
    }
)  # fmt: skip
"""Variables the run sets itself (or that steer every program in it): an agent token put there
would break the run or turn its traffic elsewhere."""
RESERVED_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "SKILLTEST_", "LD_", "DYLD_", "NODE_", "PYTHON")
"""Prefixes of variables that configure the model API, the CLI, skilltest or the interpreters."""


def env_problem(name: str) -> str | None:
    """Why ``name`` cannot carry a world's agent token, or ``None``."""
    upper = name.upper()
    if upper in RESERVED_ENV or upper.startswith(RESERVED_ENV_PREFIXES):
        return f"{name} is a variable the run sets or reads itself, not one for an agent token"
    return None


_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Route:
    """One route of a fake service: a method and path template, and what it does."""

    method: str
    """``GET``, ``POST``, ``PUT``, ``PATCH`` or ``DELETE``."""
    path: str
    """The path template, ``/tickets/{id}`` (at most one ``{param}`` per segment)."""
    action: str
    """``list``, ``get``, ``create``, ``update``, ``merge``, ``delete`` or ``respond``."""
    collection: str | None = None
    """The key of the fixture's list of records the route works on."""
    filters: tuple[str, ...] = ()
    """``list``: query parameters that filter the records by equal field value."""
    page_size: int | None = None
    """``list``: records per page, reached with an opaque cursor; ``None`` answers all."""
    requires: tuple[str, ...] = ()
    """Request headers that must be present (``If-Match``: 428 without it)."""
    status: int | None = None
    """``respond``: the status answered."""
    body: Any = None
    """``respond``: the JSON body answered."""
    location: str = ""
    """``file#/services/N/routes/M``, for messages."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """``respond``: headers answered."""
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    """The path template compiled: one named group per ``{param}``."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", compile_template(self.path))

    @property
    def label(self) -> str:
        """``PATCH /tickets/{id}``."""
        return f"{self.method} {self.path}"

    @property
    def params(self) -> tuple[str, ...]:
        """The ``{param}`` names of the path, in order."""
        return tuple(_PARAM.findall(self.path))

    @property
    def id_param(self) -> str | None:
        """The parameter that names the record (the last one), if any."""
        return self.params[-1] if self.params else None

    @property
    def literal_segments(self) -> int:
        """How many segments have no parameter: the more, the more specific the route."""
        return sum(1 for segment in self.path.split("/") if "{" not in segment)

    def match(self, path: str) -> dict[str, str] | None:
        """The parameters of a concrete path this route serves (still percent-encoded)."""
        found = self.pattern.fullmatch(path)
        return found.groupdict() if found else None


@dataclass(frozen=True)
class Fault:
    """One entry of a profile: what goes wrong for the requests of one route (or all)."""

    route: str
    """``GET /tickets``, ``GET /tickets/{id}``, a concrete ``GET /tickets/INC-1042``, or ``*``."""
    status: int | None = None
    """Answer this status. Without ``partial`` the request is not carried out."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Headers added to the answer (``Retry-After``)."""
    times: int | None = None
    """How many requests the fault applies to; ``None``: every one."""
    malformed: bool = False
    """Answer a body that is not JSON (the real one cut off half-way)."""
    delay_ms: int = 0
    """Milliseconds to wait before answering."""
    timeout: bool = False
    """Never answer; the request is not carried out."""
    body: Any = None
    """The JSON body answered instead of the real one (``None``: the real one)."""
    empty: bool = False
    """Lists answer no records and gets answer 404, as if the collection were empty."""
    partial: bool = False
    """A write is applied only in part, then answered with ``status`` (default 500)."""
    rename: Mapping[str, str] = field(default_factory=dict)
    """Fields renamed in every record answered (a schema change)."""
    drop: tuple[str, ...] = ()
    """Fields removed from every record answered (a schema change)."""
    location: str = ""
    """``file#/services/N/profiles/NAME/M``, for messages."""

    def applies_to(self, method: str, path: str, route: Route | None) -> bool:
        """Whether a request (with the route it matched, if any) is one this fault is for."""
        if self.route == "*":
            return True
        fault_method, _, fault_path = self.route.partition(" ")
        if method != fault_method and not (method == "HEAD" and fault_method == "GET"):
            return False
        return fault_path == path or (route is not None and fault_path == route.path)


PROBE_METHODS = ("GET", "HEAD")
"""Methods a contract probe may use: a probe reaches the real service, so it only reads."""


@dataclass(frozen=True)
class Probe:
    """One read ``skilltest world contract --live`` may send to the real service
    (``contract: {probe: ["GET /tickets?status=P1"]}``)."""

    method: str
    """``GET`` or ``HEAD``."""
    target: str
    """The path with its query, as written (``/tickets?status=P1``)."""
    location: str = ""
    """``file#/services/N/contract/probe/M``, for messages."""

    @property
    def label(self) -> str:
        """``GET /tickets?status=P1``."""
        return f"{self.method} {self.target}"


@dataclass(frozen=True)
class Service:
    """One service of a world: its hosts, fixture, routes, fault profiles and canary."""

    name: str
    """The service's name (``tickets``); ``/health`` answers it."""
    hosts: tuple[str, ...]
    """The real host names it is faked on, normalised (lower case, punycode)."""
    auth_env: str | None
    """The environment variable the run's agent token goes in; ``None``: no token needed."""
    data: Mapping[str, Any]
    """The fixture: collections of records by key (``{"tickets": [{"id": ...}]}``)."""
    data_path: Path | None
    """The fixture file, when ``data:`` names one."""
    routes: tuple[Route, ...]
    """The declared routes; anything else on its hosts answers 404 (and is recorded)."""
    profiles: Mapping[str, tuple[Fault, ...]]
    """Fault profiles by name."""
    canary: tuple[str, str] | None
    """``(method, path)`` of the canary read, e.g. ``("GET", "/tickets/FAKE-CANARY")``."""
    auth_header: str = "Authorization"
    """The header that carries the token."""
    auth_scheme: str = "Bearer"
    """The word before the token in that header; ``""`` for the token alone."""
    openapi: Path | None = None
    """The provider's API description (``openapi:``), which :mod:`skilltest.world.contract`
    checks the routes and answers against; ``None``: none named."""
    probes: tuple[Probe, ...] = ()
    """The reads ``world contract --live`` may send to the real service (``contract:``)."""
    location: str = ""
    """``file#/services/N``, for messages."""

    @property
    def collections(self) -> tuple[str, ...]:
        """The collections its routes work on, in the order the routes name them."""
        return tuple(dict.fromkeys(r.collection for r in self.routes if r.collection))


@dataclass(frozen=True)
class McpTool:
    """One tool of a mock MCP server."""

    name: str
    """The tool's name (``lookup_order``)."""
    description: str
    """What the agent reads about it."""
    input_schema: Mapping[str, Any]
    """The JSON Schema of its arguments."""
    responses: tuple[tuple[Mapping[str, Any], Any], ...]
    """``(match, result)`` pairs; the first whose every argument in ``match`` equals the call's
    answers it. A call none matches is an error that names the tool."""
    writes: bool = False
    """Whether a call counts as a write."""
    location: str = ""
    """``file#/mcp/NAME/tools/M``, for messages."""


@dataclass(frozen=True)
class McpMock:
    """A mock MCP server: tools with canned answers, every call recorded."""

    name: str
    """The server's name (tools appear to the agent as ``mcp__NAME__tool``)."""
    tools: tuple[McpTool, ...]
    """Its tools."""
    location: str = ""
    """``file#/mcp/NAME``, for messages."""


@dataclass(frozen=True)
class World:
    """A loaded world file: fake services and mock MCP servers."""

    path: Path
    """The world file."""
    services: tuple[Service, ...]
    """The fake HTTP services."""
    mcp: tuple[McpMock, ...] = ()
    """The mock MCP servers."""

    def service_for(self, host: str) -> Service | None:
        """The service faked on ``host`` (any case, trailing dot, IDN), or ``None``."""
        try:
            name = normalise_host(host)
        except ValueError:
            return None
        for service in self.services:
            if name in service.hosts:
                return service
        return None

    def hosts(self) -> tuple[str, ...]:
        """Every declared host, normalised."""
        return tuple(host for service in self.services for host in service.hosts)

    def profiles(self) -> set[str]:
        """The names of every profile any service declares."""
        return {name for service in self.services for name in service.profiles}

    def variables(self) -> tuple[str, ...]:
        """The environment variables its services' tokens travel in (``auth: {env: ...}``): a
        run's agent gets a token of its own there, and the caller's value of each is a secret."""
        return tuple(dict.fromkeys(s.auth_env for s in self.services if s.auth_env))


def compile_template(path: str) -> re.Pattern[str]:
    """``/tickets/{id}`` -> a pattern with one named group per parameter (one segment each)."""
    out = []
    for segment in path.split("/"):
        pieces = _PARAM.split(segment)  # [literal, name, literal] or [literal]
        out.append(
            re.escape(pieces[0])
            + "".join(
                f"(?P<{name}>[^/]+?)" + re.escape(literal)
                for name, literal in zip(pieces[1::2], pieces[2::2], strict=True)
            )
        )
    return re.compile("/".join(out))


def load_world(
    path: Path,
    repository: Repository | None = None,
    *,
    model_hosts: Iterable[str] | None = None,
) -> World:
    """Reads, validates and types a world file and the fixtures it names.

    Args:
        path: The world file.
        repository: Where its fixtures must lie: the repository of the suite naming the world
            (default: the world file's own, :func:`skilltest.suite.repository.repository_of`).
        model_hosts: The hosts of the model API the runs use, which no service may claim
            (by default :func:`~skilltest.world.policy.model_api_hosts` of this process's
            environment).

    Raises:
        WorldError: the file or a fixture cannot be read or parsed, breaks the schema, or
            declares something a fake cannot serve (the model API's host, a look-alike name);
            the message names the place and the fix.
    """
    data = read_yaml(path, WorldError)
    validate(data, "world", path, WorldError)
    top = f"{path}#"
    repository = repository or repository_of(path)
    reserved = frozenset(model_api_hosts(os.environ) if model_hosts is None else model_hosts)
    services = tuple(
        _service(raw, path, f"{top}/services/{index}", repository, reserved)
        for index, raw in enumerate(data["services"])
    )
    _check_unique(services, top)
    mcp = tuple(
        _mcp_mock(name, raw, f"{top}{json_pointer(['mcp', name])}")
        for name, raw in (data.get("mcp") or {}).items()
    )
    for mock in mcp:
        if any(service.name == mock.name for service in services):
            raise WorldError(
                f"the MCP server {mock.name!r} has the name of a service",
                location=mock.location,
                fix="give it another name: calls are recorded under their server's name",
            )
    return World(path=path, services=services, mcp=mcp)


def _check_unique(services: tuple[Service, ...], top: str) -> None:
    names: dict[str, str] = {}
    hosts: dict[str, str] = {}
    for service in services:
        if service.name in names:
            raise WorldError(
                f"two services are named {service.name!r} (the first at {names[service.name]})",
                location=f"{service.location}/name",
                fix="give each service its own name",
            )
        names[service.name] = service.location
        for host in service.hosts:
            if host in hosts and hosts[host] != service.name:
                raise WorldError(
                    f"the host {host} is declared by the services {hosts[host]!r} and "
                    f"{service.name!r}",
                    location=f"{service.location}/hosts",
                    fix="a host is answered by one fake: declare it in one service",
                )
            hosts[host] = service.name


def _service(
    raw: dict[str, Any],
    world_path: Path,
    where: str,
    repository: Repository,
    reserved: frozenset[str],
) -> Service:
    hosts: list[str] = []
    for index, host in enumerate(raw["hosts"]):
        problem = host_problem(host, reserved=reserved)
        if problem:
            raise WorldError(
                f"cannot fake this host: {problem}",
                location=f"{where}/hosts/{index}",
                fix="declare the real host name the skill text uses, e.g. api.tickets.example.com",
            )
        name = normalise_host(host)
        if name not in hosts:
            hosts.append(name)
    data, data_path, data_where = _fixture(raw.get("data"), world_path, f"{where}/data", repository)
    routes = tuple(
        _route(item, f"{where}/routes/{index}") for index, item in enumerate(raw["routes"])
    )
    seen: dict[tuple[str, str], str] = {}
    for route in routes:
        shape = (route.method, _PARAM.sub("{}", route.path))
        if shape in seen:
            raise WorldError(
                f"{route.label} serves the same requests as the route at {seen[shape]}",
                location=route.location,
                fix="keep one of the two routes",
            )
        seen[shape] = route.location
        if route.collection is not None:
            _check_collection(route, data, data_where)
    auth = raw.get("auth") or {}
    problem = env_problem(auth["env"]) if "env" in auth else None
    if problem is not None:
        raise WorldError(
            problem,
            location=f"{where}/auth/env",
            fix="name a variable of the service's own, such as TICKETS_API_TOKEN",
        )
    service = Service(
        name=raw["name"],
        hosts=tuple(hosts),
        auth_env=auth.get("env"),
        data=data,
        data_path=data_path,
        routes=routes,
        profiles={},
        canary=None,
        auth_header=auth.get("header", "Authorization"),
        auth_scheme=auth.get("scheme", "Bearer"),
        openapi=_description(raw.get("openapi"), world_path, f"{where}/openapi", repository),
        location=where,
    )
    profiles = {
        name: tuple(
            _fault(item, service, f"{where}{json_pointer(['profiles', name, index])}")
            for index, item in enumerate(faults)
        )
        for name, faults in (raw.get("profiles") or {}).items()
    }
    canary = _canary(raw.get("canary"), service, f"{where}/canary", data_where)
    probes = tuple(
        _probe(text, service, f"{where}/contract/probe/{index}")
        for index, text in enumerate((raw.get("contract") or {}).get("probe") or [])
    )
    return replace(service, profiles=profiles, canary=canary, probes=probes)


def _probe(text: str, service: Service, where: str) -> Probe:
    method, _, target = text.partition(" ")
    method = method.upper()
    if method not in PROBE_METHODS:
        raise WorldError(
            f"the contract probe {text!r} would write to the real service: only GET and HEAD "
            "are sent to it",
            location=where,
            fix="probe a read (GET /tickets?status=P1); a write cannot be checked against a "
            "live service without changing it",
        )
    path = target.split("?", 1)[0]
    if "{" in path or "#" in target:
        raise WorldError(
            f"the contract probe {text!r} is not one concrete request",
            location=where,
            fix="name a record and the query, e.g. GET /tickets/INC-1042",
        )
    if not any(
        route.method == "GET" and route.match(path.rstrip("/") or "/") is not None
        for route in service.routes
    ):
        raise WorldError(
            f"no GET route of {service.name!r} serves the contract probe {text!r}",
            location=where,
            fix="probe a path a GET route of the service serves, or add the route",
        )
    return Probe(method=method, target=target, location=where)


def _route(raw: dict[str, Any], where: str) -> Route:
    method, path, action = raw["method"], raw["path"], raw["action"]
    _check_template(path, f"{where}/path")
    if path == CONTROL_PATHS[0] or path.startswith(CONTROL_PATHS[1]):
        raise WorldError(
            f"{path} is the fake's own control plane",
            location=f"{where}/path",
            fix="the fake answers GET /health and /_skilltest/* itself; declare other paths",
        )
    if action in READ_ACTIONS and method != "GET":
        raise WorldError(
            f"a {action} route must be GET, not {method}",
            location=f"{where}/method",
            fix=f"write method: GET (a {action} only reads)",
        )
    if action in WRITE_ACTIONS and method in READ_METHODS:
        raise WorldError(
            f"a {action} route changes records and cannot be {method}",
            location=f"{where}/method",
            fix="use POST, PUT, PATCH or DELETE: writes are told from reads by their method",
        )
    collection = raw.get("collection")
    if action != "respond" and collection is None:
        raise WorldError(
            f"a {action} route needs `collection:`",
            location=where,
            fix="name the key of the fixture's list of records, e.g. collection: tickets",
        )
    if action == "respond" and "status" not in raw:
        raise WorldError(
            "a respond route needs `status:`",
            location=where,
            fix="add the status it answers, e.g. status: 202 (and `body:`)",
        )
    if action in RECORD_ACTIONS and not _PARAM.search(path):
        raise WorldError(
            f"a {action} route names one record: its path needs a {{param}}",
            location=f"{where}/path",
            fix='e.g. path: "/tickets/{id}" (the last {param} is the record\'s id)',
        )
    only = {
        "filters": "list",
        "page_size": "list",
        "status": "respond",
        "body": "respond",
        "headers": "respond",
    }
    for key, wanted in only.items():
        if key in raw and action != wanted:
            raise WorldError(
                f"`{key}` is for {wanted} routes, not {action}",
                location=f"{where}/{key}",
                fix=f"remove `{key}`, or make the route action: {wanted}",
            )
    if action == "respond" and collection is not None:
        raise WorldError(
            "a respond route answers a fixed body and has no collection",
            location=f"{where}/collection",
            fix="remove `collection`, or give the route an action that uses it",
        )
    return Route(
        method=method,
        path=path,
        action=action,
        collection=collection,
        filters=tuple(raw.get("filters") or ()),
        page_size=raw.get("page_size"),
        requires=tuple(raw.get("requires") or ()),
        status=raw.get("status"),
        body=raw.get("body"),
        headers=dict(raw.get("headers") or {}),
        location=where,
    )


def _check_template(path: str, where: str) -> None:
    names: list[str] = []
    for segment in path.split("/")[1:]:
        found = _PARAM.findall(segment)
        rest = _PARAM.sub("", segment)
        if len(found) > 1 or "{" in rest or "}" in rest:
            raise WorldError(
                f"the segment {segment!r} of {path} is not a literal or one {{param}}",
                location=where,
                fix="write at most one {name} per segment, a name of letters, digits and _",
            )
        names.extend(found)
    if len(set(names)) != len(names):
        raise WorldError(
            f"{path} names a parameter twice",
            location=where,
            fix="give each {param} its own name",
        )


def _fixture(
    raw: Any, world_path: Path, where: str, repository: Repository
) -> tuple[dict[str, Any], Path | None, str]:
    """The fixture data, its file, and the ``file#`` prefix its own errors are located by."""
    if raw is None:
        return {}, None, where
    if isinstance(raw, dict):
        return raw, None, where
    file = _json_or_yaml_file(
        raw,
        world_path,
        where,
        repository,
        "the fixture",
        "",
        "the path is relative to the world file",
    )
    data = _read_json(file) if file.suffix.lower() == ".json" else read_yaml(file, WorldError)
    if not isinstance(data, dict):
        raise WorldError(
            f"the fixture holds {type(data).__name__}, not a mapping of collections",
            location=f"{file}#",
            fix='write {"tickets": [{"id": "INC-1042", "version": 3, ...}]}',
        )
    reject_non_finite(data, file, WorldError)
    return data, file, f"{file}#"


def _description(
    raw: str | None, world_path: Path, where: str, repository: Repository
) -> Path | None:
    """The API description file ``openapi:`` names, inside the repository; read only when
    checked (:mod:`skilltest.world.contract`)."""
    if raw is None:
        return None
    return _json_or_yaml_file(
        raw,
        world_path,
        where,
        repository,
        "the API description",
        " OpenAPI",
        "the path is relative to the world file, e.g. openapi: specs/tickets.yaml",
    )


def _json_or_yaml_file(
    raw: str,
    world_path: Path,
    where: str,
    repository: Repository,
    what: str,
    kind: str,
    not_found_fix: str,
) -> Path:
    """The JSON or YAML file a world names (``what``, e.g. "the fixture"), relative to the world
    file and inside the repository, which must exist."""
    file = repository.inside(world_path.parent / raw, written=raw, location=where, error=WorldError)
    if file.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise WorldError(
            f"{what} {raw!r} is neither JSON nor YAML",
            location=where,
            fix=f"name a .json, .yaml or .yml{kind} file (relative to the world file)",
        )
    if not file.is_file():
        raise WorldError(
            f"{what} {raw!r} was not found (looked at {file})", location=where, fix=not_found_fix
        )
    return file


def _read_json(file: Path) -> Any:
    if file.stat().st_size > MAX_YAML_BYTES:
        raise WorldError(
            f"the fixture is more than {MAX_YAML_BYTES / 2**20:g} MiB",
            location=str(file),
            fix="keep fixtures small: the records the scenarios need",
        )

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise WorldError(
                    f"duplicate key {key!r} (JSON keeps only the last)",
                    location=str(file),
                    fix="keep one of the two",
                )
            out[key] = value
        return out

    try:
        return json.loads(file.read_text(encoding="utf-8"), object_pairs_hook=no_duplicates)
    except UnicodeDecodeError:
        raise WorldError("not UTF-8", location=str(file), fix="save the fixture as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise WorldError(
            f"not valid JSON: {exc.msg}",
            location=f"{file}:{exc.lineno}:{exc.colno}",
            fix="check the commas, quotes and brackets there",
        ) from None


def _check_collection(route: Route, data: Mapping[str, Any], data_where: str) -> None:
    name = str(route.collection)
    records = data.get(name)
    if name not in data:
        import difflib  # only a world with a wrong collection needs it

        close = difflib.get_close_matches(name, [str(k) for k in data], n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise WorldError(
            f"{route.label} works on the collection {name!r}, which the fixture does not have",
            location=f"{route.location}/collection",
            fix=hint
            + (f"the fixture has: {', '.join(map(str, data))}" if data else "add it")
            + f" (an empty list is {name}: [])",
        )
    if not isinstance(records, list):
        raise WorldError(
            f"the collection {name!r} is {type(records).__name__}, not a list of records",
            location=f"{data_where}{json_pointer([name])}",
            fix='write a list of records, each a mapping with "id"',
        )
    ids: dict[str, int] = {}
    for index, record in enumerate(records):
        place = f"{data_where}{json_pointer([name, index])}"
        if not isinstance(record, dict) or "id" not in record:
            raise WorldError(
                "a record must be a mapping with an `id`",
                location=place,
                fix='e.g. {"id": "INC-1042", "version": 3, "status": "open"}',
            )
        key = record["id"]
        if isinstance(key, bool) or not isinstance(key, str | int) or str(key) == "":
            raise WorldError(
                f"the id {key!r} is not a text or an integer",
                location=f"{place}/id",
                fix="give each record an id of text or an integer, as it appears in paths",
            )
        if "/" in str(key):
            raise WorldError(
                f"the id {key!r} contains /, so no path can name the record",
                location=f"{place}/id",
                fix="use ids without /",
            )
        if str(key) in ids:
            raise WorldError(
                f"the id {key!r} is also the id of record {ids[str(key)]}",
                location=f"{place}/id",
                fix="give each record of a collection its own id",
            )
        ids[str(key)] = index
        version = record.get("version", 1)
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            raise WorldError(
                f"the version {version!r} is not an integer >= 0",
                location=f"{place}/version",
                fix="write the record's version as an integer (it is sent as the ETag)",
            )


def resolve_fault_route(text: str, service: Service) -> list[Route]:
    """The routes a fault's ``METHOD /path`` names: by template, or by a concrete path."""
    method, _, path = text.partition(" ")
    by_template = [r for r in service.routes if r.method == method and r.path == path]
    if by_template:
        return by_template
    return [r for r in service.routes if r.method == method and r.match(path) is not None]


def _fault(raw: dict[str, Any], service: Service, where: str) -> Fault:
    fault = Fault(
        route=raw["route"],
        status=raw.get("status"),
        headers=dict(raw.get("headers") or {}),
        times=raw.get("times"),
        malformed=bool(raw.get("malformed")),
        delay_ms=int(raw.get("delay_ms") or 0),
        timeout=bool(raw.get("timeout")),
        body=raw.get("body"),
        empty=bool(raw.get("empty")),
        partial=bool(raw.get("partial")),
        rename=dict(raw.get("rename") or {}),
        drop=tuple(raw.get("drop") or ()),
        location=where,
    )
    routes: list[Route] = []
    if fault.route != "*":
        routes = resolve_fault_route(fault.route, service)
        if not routes:
            labels = [r.label for r in service.routes]
            import difflib  # only a fault on a route that is not there needs it

            close = difflib.get_close_matches(fault.route, labels, n=1)
            raise WorldError(
                f"no route of {service.name!r} serves {fault.route}",
                location=f"{where}/route",
                fix=(f"did you mean {close[0]!r}? " if close else "")
                + f'the routes are: {", ".join(labels)}; or write "*" for every request',
            )
    effects = (
        fault.status is not None,
        bool(fault.headers),
        fault.malformed,
        fault.delay_ms > 0,
        fault.timeout,
        fault.body is not None,
        fault.empty,
        fault.partial,
        bool(fault.rename),
        bool(fault.drop),
    )
    if not any(effects):
        raise WorldError(
            "the fault changes nothing",
            location=where,
            fix="give it an effect: status, headers, malformed, delay_ms, timeout, body, "
            "rename, drop, empty or partial",
        )
    if fault.timeout and sum(effects) - (fault.delay_ms > 0) > 1:
        raise WorldError(
            "a timeout never answers, so nothing else about its answer can apply",
            location=where,
            fix="keep `timeout: true` alone (with `route` and `times`), or remove it",
        )
    if fault.malformed and fault.body is not None:
        raise WorldError(
            "`malformed` and `body` both replace the body",
            location=where,
            fix="keep one of the two",
        )
    actions = {route.action for route in routes}
    if fault.empty and routes and not actions & READ_ACTIONS:
        raise WorldError(
            f"`empty` empties lists and gets, and {fault.route} is neither",
            location=f"{where}/empty",
            fix='put it on a list or get route (or "*")',
        )
    if fault.partial and routes and not actions & WRITE_ACTIONS:
        raise WorldError(
            f"`partial` applies a write in part, and {fault.route} is not a "
            "create, update, merge or delete route",
            location=f"{where}/partial",
            fix='put it on a write route (or "*")',
        )
    if fault.status is not None and fault.partial and fault.status < 200:
        raise WorldError(
            f"a partial write cannot be answered {fault.status}",
            location=f"{where}/status",
            fix="answer 207, 500 or another final status",
        )
    return fault


def _canary(
    raw: dict[str, Any] | None, service: Service, where: str, data_where: str
) -> tuple[str, str] | None:
    if raw is None:
        return None
    method, path = raw.get("method", "GET"), raw["path"]
    if "{" in path:
        raise WorldError(
            f"the canary {path} is a template; it must be one concrete path",
            location=f"{where}/path",
            fix="name the record, e.g. path: /tickets/FAKE-CANARY",
        )
    matched = [
        (route, params)
        for route in service.routes
        if route.method == method and (params := route.match(path)) is not None
    ]
    if not matched:
        raise WorldError(
            f"no GET route of {service.name!r} serves the canary {path}",
            location=f"{where}/path",
            fix="point the canary at a record a GET route serves, e.g. /tickets/FAKE-CANARY",
        )
    route, params = max(matched, key=lambda pair: pair[0].literal_segments)
    if route.action == "get" and route.id_param is not None:
        key = params[route.id_param]
        records = service.data.get(str(route.collection)) or []
        if not any(str(record.get("id")) == key for record in records):
            raise WorldError(
                f"the canary {path} names the record {key!r}, which the collection "
                f"{route.collection!r} does not have",
                location=f"{where}/path",
                fix=f"add a record with id {key!r} to the fixture's {route.collection!r} "
                f"({data_where}{json_pointer([str(route.collection)])}): a record that exists "
                "only in the fake",
            )
    return (method, path)


def _mcp_mock(name: str, raw: dict[str, Any], where: str) -> McpMock:
    tools: list[McpTool] = []
    for index, item in enumerate(raw.get("tools") or []):
        place = f"{where}/tools/{index}"
        if any(tool.name == item["name"] for tool in tools):
            raise WorldError(
                f"two tools of {name!r} are named {item['name']!r}",
                location=f"{place}/name",
                fix="give each tool its own name",
            )
        schema = item.get("input_schema") or {"type": "object", "properties": {}}
        known = schema.get("properties")
        responses = []
        for number, response in enumerate(item.get("responses") or []):
            match = response.get("match") or {}
            if isinstance(known, dict) and schema.get("additionalProperties") is False:
                for argument in match:
                    if argument not in known:
                        raise WorldError(
                            f"the tool {item['name']!r} has no argument {argument!r}",
                            location=f"{place}/responses/{number}/match",
                            fix=f"its arguments are: {', '.join(known) or 'none'}",
                        )
            responses.append((match, response["result"]))
        tools.append(
            McpTool(
                name=item["name"],
                description=item.get("description", ""),
                input_schema=schema,
                responses=tuple(responses),
                writes=bool(item.get("writes")),
                location=place,
            )
        )
    return McpMock(name=name, tools=tuple(tools), location=where)
