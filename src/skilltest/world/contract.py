"""A world's fakes against the providers' API descriptions, offline.

A service may name the provider's OpenAPI description (``openapi: specs/tickets.yaml``, 3.0 or
3.1, JSON or YAML). :func:`check_contract` then holds the fake to it, without any network:

* every route is an operation the description has (method and path template, the parameter
  names aside, under each ``servers`` URL's path), each of its ``filters`` (and ``cursor``, with
  ``page_size``) a query parameter of it and each header it ``requires`` a header parameter;
* every answer the world's author controls has a status the operation documents (exactly, as
  ``2XX``, or ``default``) and, where that answer has a JSON schema, a body the schema accepts:
  each fixture record as the ``list``, ``get``, ``create``, ``update`` and ``merge`` routes serve
  it, a ``respond`` route's body, and each fault's status and body (the fake's
  ``{"error": ...}`` when the fault gives none).

Not checked: the fake's own answers to a request it refuses (``401``, ``404``, ``409``, ``412``,
``428``...), whose bodies the world cannot change; and ``rename``, ``drop``, ``malformed`` and
``empty`` faults, which stand for a provider breaking its own description on purpose.

The description itself is checked first with ``openapi-spec-validator``; the bodies with
``openapi-schema-validator`` (OpenAPI 3.0's ``nullable`` and ``readOnly``, 3.1's JSON Schema),
every ``$ref`` resolved against the whole document. Both are imported only here, and this module
only when a world names a description; and only when needed: a description the validator passed
before, unchanged, is not checked again (:mod:`skilltest.world.checked_descriptions`), and a body
:func:`~skilltest.suite.conforms.conforms_openapi` finds valid is not asked about, so every finding
is in the library's words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from skilltest.errors import WorldError
from skilltest.suite.conforms import conforms_openapi
from skilltest.suite.loader import json_pointer, read_yaml
from skilltest.world import checked_descriptions
from skilltest.world.http import error_phrase
from skilltest.world.model import (
    WRITE_ACTIONS,
    Fault,
    Route,
    Service,
    World,
    resolve_fault_route,
)

if TYPE_CHECKING:
    from referencing import Registry

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
"""The operations a path item may hold."""
SUCCESS = {"list": 200, "get": 200, "create": 201, "update": 200, "merge": 200, "delete": 204}
"""The status each action answers when it succeeds (``respond`` answers its own)."""
RECORD_ANSWERS = frozenset({"get", "create", "update", "merge"})
"""Actions that answer one record."""
_BASE = "urn:skilltest:openapi"
"""The URI the description is registered under, for ``$ref`` resolution."""
_PARAM = re.compile(r"\{[^{}/]*\}")
_RECORD_FIX = (
    "make the fixture's records look like the provider's (or correct the description if the "
    "provider sends this)"
)
_LIST_FIX = (
    "the fake answers a list as {COLLECTION: [records]}, with next_cursor when the route has "
    "page_size: give the route page_size, serve the collection the description names, or "
    "correct the description"
)


@dataclass(frozen=True)
class Finding:
    """One way a fake differs from its provider's description."""

    location: str
    """``world.yaml#/services/0/routes/1`` (or a fault's place): what to change in the world."""
    route: str
    """``GET /tickets/{id}``: the route of the fake concerned."""
    problem: str
    """What differs, with the JSON pointer in the answer where there is one."""
    fix: str
    """What to do about it."""

    def __str__(self) -> str:
        return f"{self.location}: {self.route}: {self.problem}\n  fix: {self.fix}"


@dataclass(frozen=True)
class Description:
    """A loaded, valid description: the document, its file and how to resolve ``$ref``."""

    path: Path
    """The description file."""
    document: Mapping[str, Any]
    """Its content (every key text, as OpenAPI's are)."""
    version: str
    """``3.0`` or ``3.1``."""
    prefixes: tuple[str, ...]
    """The path of each ``servers`` URL (``/v1``), or ``("",)``."""
    validators: dict[str, Any] = field(default_factory=dict)
    """The validator of each response schema checked so far, by its pointer."""

    @cached_property
    def registry(self) -> Registry[Any]:
        """The document registered under one URI, against which every ``$ref`` resolves (made
        when a reference or a body needs ``referencing`` and ``openapi-schema-validator``)."""
        from referencing import Registry
        from referencing.jsonschema import DRAFT4, DRAFT202012

        resource = (DRAFT4 if self.version == "3.0" else DRAFT202012).create_resource(self.document)
        return Registry().with_resource(_BASE, resource)

    @cached_property
    def plain_references(self) -> bool:
        """Whether every ``$ref`` resolves as a JSON pointer into the whole document: no schema
        names an identifier (``$id``, ``$anchor``; ``id`` in 3.0) that would move where the
        references under it resolve."""
        keys = ("id",) if self.version == "3.0" else ("$id", "$anchor", "$dynamicAnchor")
        return not _names_any(self.document, keys)


@dataclass(frozen=True)
class _Operation:
    """The description's operation a route stands for."""

    pointer: str
    """``/paths/~1tickets~1{id}/get``."""
    label: str
    """``GET /tickets/{ticketId}``, as the description writes it."""
    node: Mapping[str, Any]
    """The operation object (``responses``, ``parameters``...)."""
    parameters: frozenset[tuple[str, str]]
    """``(in, name)`` of every parameter (the path item's and the operation's); header names
    in lower case."""


def check_contract(world: World) -> list[Finding]:
    """Every way the world's fakes differ from the API descriptions their services name.

    Raises:
        WorldError: a description that cannot be read, or is not valid OpenAPI 3.0 or 3.1,
            naming the file, the place in it and what the validator said.
    """
    findings: list[Finding] = []
    for service in world.services:
        if service.openapi is not None:
            description = load_description(service.openapi, f"{service.location}/openapi")
            findings += _check_service(service, description)
    return findings


def load_description(path: Path, named_at: str | None = None) -> Description:
    """Reads and validates an OpenAPI 3.0 or 3.1 description.

    Args:
        path: The description file.
        named_at: ``world.yaml#/services/0/openapi``, said in messages, when a world names it.

    Raises:
        WorldError: unreadable, not OpenAPI 3.0 or 3.1, or not valid as such.
    """
    document = _string_keys(read_yaml(path, WorldError))
    version = str(document.get("openapi", "")) if isinstance(document, dict) else ""
    short = ".".join(version.split(".")[:2])
    named = f" (named at {named_at})" if named_at else ""
    if short not in ("3.0", "3.1"):
        said = f"says openapi: {version!r}" if version else "has no `openapi:` version"
        raise WorldError(
            f"the API description {said}, not OpenAPI 3.0 or 3.1{named}",
            location=f"{_shown(path)}#/openapi",
            fix="name an OpenAPI 3.0 or 3.1 document (a Swagger 2.0 one converts with "
            "swagger2openapi)",
        )
    outside = _external_ref(document, [])
    if outside is not None:
        where, ref = outside
        raise WorldError(
            f"the API description refers to {ref!r}, outside itself{named}",
            location=f"{_shown(path)}#{where}",
            fix="bundle the description into one file (e.g. `redocly bundle`): nothing is "
            "fetched, so only references inside it (#/components/...) resolve",
        )
    if not checked_descriptions.passed(document):
        _check_description(document, path, short, named)
        checked_descriptions.remember(document)
    prefixes = []
    for server in document.get("servers") or []:
        url = str(server.get("url", ""))
        for name, variable in (server.get("variables") or {}).items():
            url = url.replace(f"{{{name}}}", str(variable.get("default", "")))
        prefixes.append(urlsplit(url).path.rstrip("/"))
    return Description(
        path=path,
        document=document,
        version=short,
        prefixes=tuple(dict.fromkeys(prefixes)) or ("",),
    )


def _check_description(document: dict[str, Any], path: Path, short: str, named: str) -> None:
    """Runs ``openapi-spec-validator`` on a description.

    Raises:
        WorldError: the first problem it finds (the deepest reason inside a ``oneOf``).
    """
    from jsonschema_path import SchemaPath
    from openapi_spec_validator.shortcuts import get_validator_cls
    from openapi_spec_validator.validation.exceptions import ValidatorDetectError
    from referencing.exceptions import Unresolvable

    try:
        validator = get_validator_cls(document)(SchemaPath.from_dict(document, base_uri=_BASE))
        problem = next(iter(validator.iter_errors()), None)
        # The deepest reason inside a oneOf, not "... is not valid under any of the schemas".
        while problem is not None and problem.context:
            problem = max(problem.context, key=lambda error: len(error.absolute_path))
    except (ValidatorDetectError, Unresolvable) as exc:
        raise WorldError(
            f"the API description cannot be read as OpenAPI {short}: {exc!r}{named}",
            location=_shown(path),
            fix="check `openapi:` and that every $ref points inside the file",
        ) from exc
    if problem is not None:
        raise WorldError(
            f"the API description is not valid OpenAPI {short}: {problem.message}{named}",
            location=f"{_shown(path)}#{json_pointer(problem.absolute_path)}",
            fix="correct the description there (a provider's published file passes "
            "openapi-spec-validator)",
        )


def _names_any(node: Any, keys: tuple[str, ...]) -> bool:
    """Whether a mapping anywhere in ``node`` has one of ``keys`` with a text value."""
    if isinstance(node, dict):
        if any(isinstance(node.get(key), str) for key in keys):
            return True
        return any(_names_any(item, keys) for item in node.values())
    if isinstance(node, list):
        return any(_names_any(item, keys) for item in node)
    return False


def _shown(path: Path) -> str:
    """A path as messages show it: relative to the current directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _external_ref(node: Any, at: list[str]) -> tuple[str, str] | None:
    """Where the first ``$ref`` that leaves the document is (a URL or another file), and it."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            return json_pointer([*at, "$ref"]), ref
        items: list[tuple[str, Any]] = list(node.items())
    elif isinstance(node, list):
        items = [(str(index), item) for index, item in enumerate(node)]
    else:
        return None
    for key, item in items:
        found = _external_ref(item, [*at, key])
        if found is not None:
            return found
    return None


def _string_keys(value: Any) -> Any:
    """YAML reads ``200:`` as an integer; OpenAPI's keys are text."""
    if isinstance(value, dict):
        return {str(key): _string_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_string_keys(item) for item in value]
    return value


def _deref(node: Any, pointer: str, description: Description) -> tuple[Any, str]:
    """``node`` (at ``pointer`` in the description), its ``$ref`` to a parameter, response or
    path item followed: what it stands for, and where that is."""
    if description.plain_references:
        plain = _plain_deref(node, pointer, description.document)
        if plain is not None:
            return plain
    resolver = description.registry.resolver(base_uri=_BASE)
    for _ in range(32):
        if not (isinstance(node, Mapping) and isinstance(node.get("$ref"), str)):
            break
        # A description's references are local (``#/components/...``): only it is registered.
        ref = node["$ref"]
        resolved = resolver.lookup(ref)
        node, resolver = resolved.contents, resolved.resolver
        pointer = unquote(ref.partition("#")[2])
    return node, pointer


def _plain_deref(node: Any, pointer: str, document: Mapping[str, Any]) -> tuple[Any, str] | None:
    """What :func:`_deref` gives, the references read as JSON pointers into ``document``;
    ``None`` when one does not resolve so (``referencing`` then says why)."""
    for _ in range(32):
        if not (isinstance(node, Mapping) and isinstance(node.get("$ref"), str)):
            return node, pointer
        ref = node["$ref"]
        if not ref.startswith("#"):
            return None
        pointer = unquote(ref[1:])
        if pointer and not pointer.startswith("/"):
            return None  # an anchor, not a pointer
        node = document
        for part in pointer.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return None
    return None


def _check_service(service: Service, description: Description) -> list[Finding]:
    findings: list[Finding] = []
    operations: dict[str, _Operation] = {}
    for route in service.routes:
        operation = _operation(route, description, findings)
        if operation is None:
            continue
        operations[route.label] = operation
        findings += _check_parameters(route, operation)
        findings += _check_route_answers(route, operation, description)
    record_findings: dict[tuple[str, str], list[tuple[Route, str]]] = {}
    first: dict[tuple[str, str], Finding] = {}
    for route in service.routes:
        operation = operations.get(route.label)
        if operation is None or route.action not in SUCCESS or route.action == "delete":
            continue
        for key, finding, pointer in _check_records(route, service, operation, description):
            first.setdefault(key, finding)
            record_findings.setdefault(key, []).append((route, pointer))
    for key, finding in first.items():
        others = record_findings[key][1:]
        if others:
            also = ", ".join(
                f"{route.label} answers it too, refused at {pointer or 'the top'}"
                for route, pointer in others
            )
            finding = Finding(
                finding.location, finding.route, f"{finding.problem} ({also})", finding.fix
            )
        findings.append(finding)
    for name, faults in service.profiles.items():
        for fault in faults:
            findings += _check_fault(name, fault, service, operations, description)
    return findings


def _shape(path: str) -> str:
    return _PARAM.sub("{}", path)


def _operation(
    route: Route, description: Description, findings: list[Finding]
) -> _Operation | None:
    paths = description.document.get("paths") or {}
    wanted = _shape(route.path)
    for prefix in description.prefixes:
        for template, item in paths.items():
            if _shape(prefix + template) != wanted:
                continue
            item, item_pointer = _deref(item, json_pointer(["paths", template]), description)
            node = item.get(route.method.lower()) if isinstance(item, Mapping) else None
            if node is None:
                has = [m.upper() for m in METHODS if isinstance(item, Mapping) and m in item]
                findings.append(
                    Finding(
                        route.location,
                        route.label,
                        f"the provider has no {route.method} {template} (its {template} has "
                        f"{', '.join(has) or 'no operation'}; {_shown(description.path)})",
                        f"remove the route, or give it a method the provider has: "
                        f"{', '.join(has) or 'none'}",
                    )
                )
                return None
            parameters = frozenset(
                (
                    str(p.get("in")),
                    str(p.get("name")).lower() if p.get("in") == "header" else str(p.get("name")),
                )
                for p, _ in (
                    _deref(raw, "", description)
                    for raw in [*item.get("parameters", []), *node.get("parameters", [])]
                )
                if isinstance(p, Mapping)
            )
            pointer = item_pointer + json_pointer([route.method.lower()])
            return _Operation(pointer, f"{route.method} {template}", node, parameters)
    known = [prefix + template for prefix in description.prefixes for template in paths]
    import difflib  # only a route its description does not have needs it

    close = difflib.get_close_matches(route.path, known, n=1)
    findings.append(
        Finding(
            route.location,
            route.label,
            f"the provider has no path {route.path} ({_shown(description.path)} has "
            f"{', '.join(known) or 'no paths'})",
            (f"did you mean {close[0]!r}? " if close else "")
            + "remove the route, or correct its path to one the provider serves",
        )
    )
    return None


def _check_parameters(route: Route, operation: _Operation) -> Iterator[Finding]:
    queries = {name for where, name in operation.parameters if where == "query"}
    headers = {name for where, name in operation.parameters if where == "header"}
    for name in route.filters:
        if name not in queries:
            yield Finding(
                f"{route.location}/filters",
                route.label,
                f"filters by the query parameter {name!r}, which {operation.label} does not "
                f"have (it has: {', '.join(sorted(queries)) or 'none'})",
                f"remove {name!r} from `filters`, or use the parameter the provider has",
            )
    if route.page_size is not None and "cursor" not in queries:
        yield Finding(
            f"{route.location}/page_size",
            route.label,
            f"pages with ?cursor=, which {operation.label} does not have (its query parameters: "
            f"{', '.join(sorted(queries)) or 'none'})",
            "remove `page_size` (the provider does not page this way)",
        )
    for name in route.requires:
        if name.lower() not in headers:
            yield Finding(
                f"{route.location}/requires",
                route.label,
                f"requires the header {name}, which {operation.label} does not have as a "
                "header parameter",
                f"remove {name} from `requires`, or add the header to the description",
            )


def _response(
    status: int, operation: _Operation, description: Description
) -> tuple[Any, str] | None:
    """The operation's response for ``status`` (exact, ``2XX``, ``default``) and where it is
    in the description, or ``None``."""
    responses = operation.node.get("responses") or {}
    for key in (str(status), f"{str(status)[0]}XX", f"{str(status)[0]}xx", "default"):
        if key in responses:
            where = operation.pointer + json_pointer(["responses", key])
            return _deref(responses[key], where, description)
    return None


def _documented(operation: _Operation) -> str:
    return ", ".join(operation.node.get("responses") or {}) or "none"


def _schema_pointer(response: Any, where: str) -> str | None:
    """The pointer of the JSON schema of a response (at ``where``), or ``None`` when it gives
    none."""
    content = (response.get("content") if isinstance(response, Mapping) else None) or {}
    for media in content:
        base = media.split(";")[0].strip().lower()
        json_like = base.endswith(("/json", "+json")) or base in ("*/*", "application/*")
        if json_like and isinstance(content[media], Mapping) and "schema" in content[media]:
            return where + json_pointer(["content", media, "schema"])
    return None


def _errors(body: Any, pointer: str, description: Description) -> list[tuple[str, str]]:
    """``(JSON pointer in the body, what is wrong there)`` for each place where ``body`` breaks
    the schema at ``pointer`` (the reasons at one place joined: a renamed field is one)."""
    if description.plain_references:
        ref = "#" + quote(pointer, safe="/~")
        target = _plain_deref({"$ref": ref}, pointer, description.document)
        if target is not None and conforms_openapi(
            body, target[0], description.document, description.version
        ):
            return []  # valid: openapi-schema-validator is asked only what is wrong with a body
    from openapi_schema_validator import OAS30ReadValidator, OAS31Validator

    validator = description.validators.get(pointer)
    if validator is None:
        cls = OAS30ReadValidator if description.version == "3.0" else OAS31Validator
        schema = {"$ref": f"{_BASE}#{quote(pointer, safe='/~')}"}
        validator = description.validators[pointer] = cls(schema, registry=description.registry)
    found: dict[str, list[str]] = {}
    for error in validator.iter_errors(body):
        messages = found.setdefault(json_pointer(error.absolute_path), [])
        if error.message not in messages:
            messages.append(error.message)
    return [(place, "; ".join(messages)) for place, messages in sorted(found.items())]


def _check_answer(
    status: int,
    body: Any,
    operation: _Operation,
    description: Description,
) -> tuple[str | None, list[tuple[str, str]], str]:
    """Whether an answer is documented, and how its body breaks the schema.

    Returns:
        ``(problem with the status or None, [(pointer, message)], where in the description)``.
    """
    found = _response(status, operation, description)
    if found is None:
        return (
            f"answers {status}, which {operation.label} does not document (it documents "
            f"{_documented(operation)})",
            [],
            f"{_shown(description.path)}#{operation.pointer}/responses",
        )
    response, where = found
    pointer = _schema_pointer(response, where)
    place = f"{_shown(description.path)}#{where}"
    if pointer is None or body is None:
        return None, [], place
    return None, _errors(body, pointer, description), place


def _check_route_answers(
    route: Route, operation: _Operation, description: Description
) -> Iterator[Finding]:
    status = (route.status or 200) if route.action == "respond" else SUCCESS[route.action]
    body = route.body if route.action == "respond" else None
    problem, errors, place = _check_answer(status, body, operation, description)
    if problem is not None:
        yield Finding(
            route.location,
            route.label,
            problem,
            f"answer a status the provider documents, or add {status} to {place}",
        )
    for pointer, message in errors:
        yield Finding(
            f"{route.location}/body",
            route.label,
            f"its {status} body breaks the schema of {place} at {pointer or 'the top'}: {message}",
            "answer the body the provider sends",
        )


def _check_records(
    route: Route, service: Service, operation: _Operation, description: Description
) -> Iterator[tuple[tuple[str, str], Finding, str]]:
    """Each fixture record as the route serves it, against the schema of its answer."""
    collection = str(route.collection)
    records = [
        {**record, "version": record.get("version", 1)}
        for record in service.data.get(collection) or []
        if isinstance(record, Mapping)
    ]
    status = SUCCESS[route.action]
    found = _response(status, operation, description)
    if found is None:
        return  # the undocumented status is a finding of its own
    response, where = found
    schema = _schema_pointer(response, where)
    if schema is None:
        return
    place = f"{_shown(description.path)}#{where}"
    data_where = (
        f"{_shown(service.data_path)}#" if service.data_path else f"{service.location}/data"
    )
    bodies: list[tuple[int, Any]] = []
    if route.action in RECORD_ANSWERS:
        bodies = list(enumerate(records))
    else:
        size = route.page_size or max(len(records), 1)
        for start in range(0, max(len(records), 1), size):
            page: dict[str, Any] = {collection: records[start : start + size]}
            if route.page_size is not None:
                page["next_cursor"] = "cursor" if start + size < len(records) else None
            bodies.append((start, page))
    for start, body in bodies:
        for pointer, message in _errors(body, schema, description):
            index, inside = _record_of(pointer, start, collection, route.action)
            if index is None:
                what, key_part = "its list", f"{route.label} {pointer}"
            else:
                record = records[index] if index < len(records) else {}
                record_place = f"{data_where}{json_pointer([collection, index])}"
                what = f"the record {record.get('id')!r} ({record_place})"
                key_part = f"{record_place} {inside}"
            yield (
                (key_part, message),
                Finding(
                    route.location,
                    route.label,
                    f"answers {what} with {status}, and {place} refuses it at "
                    f"{pointer or 'the top'}: {message}",
                    _RECORD_FIX if index is not None else _LIST_FIX,
                ),
                pointer,
            )


def _record_of(pointer: str, start: int, collection: str, action: str) -> tuple[int | None, str]:
    """The index of the fixture record a pointer into an answer falls in, and the rest."""
    if action in RECORD_ANSWERS:
        return start, pointer
    prefix = json_pointer([collection])
    if pointer.startswith(prefix + "/"):
        head, _, rest = pointer[len(prefix) + 1 :].partition("/")
        if head.isdigit():
            return start + int(head), f"/{rest}" if rest else ""
    return None, pointer


def _check_fault(
    profile: str,
    fault: Fault,
    service: Service,
    operations: Mapping[str, _Operation],
    description: Description,
) -> Iterator[Finding]:
    if fault.timeout or fault.malformed:
        return
    routes = (
        list(service.routes) if fault.route == "*" else resolve_fault_route(fault.route, service)
    )
    for route in routes:
        operation = operations.get(route.label)
        if operation is None:
            continue  # the route's own finding says so
        answer = _fault_answer(fault, route)
        if answer is None:
            continue
        status, body = answer
        problem, errors, place = _check_answer(status, body, operation, description)
        label = f"the profile {profile!r} on {route.label}"
        if problem is not None:
            yield Finding(
                fault.location,
                label,
                problem,
                f"answer a status {operation.label} documents ({_documented(operation)}), or "
                f"add {status} to {place} if the provider answers it",
            )
            continue
        for pointer, message in errors:
            yield Finding(
                f"{fault.location}/body" if fault.body is not None else fault.location,
                label,
                f"its {status} body breaks the schema of {place} at "
                f"{pointer or 'the top'}: {message}",
                "give the fault the body the provider sends (`body:`)",
            )


def _fault_answer(fault: Fault, route: Route) -> tuple[int, Any] | None:
    """The status and body a fault makes a route answer, as the fake does, or ``None`` when
    it leaves them alone (a body of ``None``: the route's own, not checked again)."""
    if fault.partial and route.action in WRITE_ACTIONS:
        status = fault.status or 500
        if fault.body is not None:
            return status, fault.body
        return status, {"error": error_phrase(status)} if status >= 300 else None
    if fault.status is not None:
        body = fault.body if fault.body is not None else {"error": error_phrase(fault.status)}
        return fault.status, body
    if fault.body is not None:
        success = (route.status or 200) if route.action == "respond" else SUCCESS[route.action]
        return success, fault.body
    return None
