"""MCP mocks held against their real server: the tools a mock offers (names, descriptions,
input schemas) compared with what the server's ``tools/list`` answers now.

A mock is written once, from the server as it was; the server moves on. :func:`compare_tools` is
the pure comparison (data in, drifts out); :func:`check_contracts` starts each real server once
(through :func:`skilltest.mcp.health.check_servers`, the client the health checks use) and
compares every mock of it. Which mocks stand in for which server is the caller's to say
(``skilltest.evalcases.contract`` for a plugin's eval cases).

Drift is reported per tool, each naming the mock file and the JSON pointer in it:

* ``tool added`` (the server has it, the mock does not), ``tool removed`` (the other way round),
  ``unlisted`` (the mock answers it without a ``_tools.json`` entry: no description, any input);
* ``description changed``;
* in the input schema, at every level of ``properties`` (and ``items``): ``parameter added``,
  ``parameter removed``, ``parameter renamed`` (only one removed and one added in the same
  object, of the same declared type), ``type changed``, ``required changed``.

Titles, defaults, formats and the like are not compared: they do not change which calls fit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from skilltest.plugins.servers import McpServer

DriftKind = Literal[
    "tool added",
    "tool removed",
    "unlisted",
    "description changed",
    "parameter added",
    "parameter removed",
    "parameter renamed",
    "type changed",
    "required changed",
]
DRIFT_KINDS: tuple[DriftKind, ...] = get_args(DriftKind)
"""Every kind of drift, in the order a tool's drifts are listed."""


@dataclass(frozen=True)
class MockedTool:
    """A tool as a mock offers it."""

    name: str
    """The tool's name."""
    file: Path
    """The mock file that says it: the ``_tools.json`` listing it, else its ``<tool>.md``."""
    pointer: str = ""
    """Where in ``file`` its listing is (``/tools/0``); empty for a tool ``_tools.json`` does
    not list."""
    description: str = ""
    """Its description in ``_tools.json``."""
    input_schema: Mapping[str, Any] | None = field(default=None, hash=False)
    """Its ``inputSchema`` in ``_tools.json``; ``None`` for a tool it does not list."""

    @property
    def listed(self) -> bool:
        return self.input_schema is not None


@dataclass(frozen=True)
class MockedServer:
    """One mock folder (or the folders merged for one case) standing in for a real server."""

    server: McpServer
    """The real server, as the plugin declares it."""
    folder: Path
    """The mock's folder (``mocks/<server>/``; the last one, when several merge)."""
    tools: tuple[MockedTool, ...]
    """What the mock offers."""
    tools_file: Path | None = None
    """Where a tool the mock lacks belongs: its (last) ``_tools.json``; ``folder/_tools.json``
    when ``None``."""


@dataclass(frozen=True)
class Drift:
    """One difference between a mock's tool and the server's."""

    kind: DriftKind
    detail: str
    """What differs, in words: ``since -> window (string)``, ``mock: optional, server:
    required``."""
    file: Path
    """The mock file to change."""
    pointer: str = ""
    """Where in ``file``, as a JSON pointer (empty: the file as a whole)."""

    @property
    def location(self) -> str:
        return f"{self.file}#{self.pointer}" if self.pointer else str(self.file)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "detail": self.detail,
            "file": str(self.file),
            "pointer": self.pointer,
        }


@dataclass(frozen=True)
class ToolContract:
    """One tool of a server and its mock: the same, or how they differ."""

    tool: str
    drifts: tuple[Drift, ...] = ()

    @property
    def same(self) -> bool:
        return not self.drifts

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "status": "same" if self.same else "drift",
            "drifts": [drift.to_dict() for drift in self.drifts],
        }


@dataclass(frozen=True)
class ServerContract:
    """A mock held against its server."""

    server: McpServer
    folder: Path
    """The mock's folder."""
    tools: tuple[ToolContract, ...]
    """Every tool either side has, in name order."""

    @property
    def same(self) -> bool:
        return all(tool.same for tool in self.tools)

    def to_dict(self) -> dict[str, Any]:
        return {
            "server": self.server.name,
            "declared_at": self.server.origin,
            "mock": str(self.folder),
            "tools": [tool.to_dict() for tool in self.tools],
        }


def _types(schema: Mapping[str, Any]) -> str:
    declared = schema.get("type")
    if isinstance(declared, list):
        return " | ".join(sorted(str(t) for t in declared)) or "any"
    return str(declared) if declared is not None else "any"


def _properties(schema: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    found = schema.get("properties")
    if not isinstance(found, Mapping):
        return {}
    return {str(k): v if isinstance(v, Mapping) else {} for k, v in found.items()}


def _required(schema: Mapping[str, Any]) -> set[str]:
    found = schema.get("required")
    return {str(name) for name in found} if isinstance(found, list) else set()


def _schema_drifts(
    mock: Mapping[str, Any], served: Mapping[str, Any], file: Path, at: str, path: str
) -> list[Drift]:
    """The drifts of one object schema and, below it, of its properties and items.

    Args:
        at: The pointer of ``mock`` in ``file``.
        path: The parameter's dotted name (``filters.level``), for the messages.
    """
    drifts: list[Drift] = []
    mine, theirs = _properties(mock), _properties(served)
    removed = [name for name in mine if name not in theirs]
    added = [name for name in theirs if name not in mine]

    def named(name: str) -> str:
        return f"{path}.{name}" if path else name

    def where(name: str) -> str:
        return f"{at}/properties/{_escape(name)}"

    if (
        len(removed) == 1
        and len(added) == 1
        and "type" in mine[removed[0]]
        and _types(mine[removed[0]]) == _types(theirs[added[0]])
    ):
        old, new = removed[0], added[0]
        drifts.append(
            Drift(
                "parameter renamed",
                f"{named(old)} -> {named(new)} ({_types(theirs[new])})",
                file,
                where(old),
            )
        )
    else:
        for name in removed:
            drifts.append(
                Drift(
                    "parameter removed",
                    f"{named(name)} ({_types(mine[name])}): the server no longer takes it",
                    file,
                    where(name),
                )
            )
        for name in added:
            needed = "required" if name in _required(served) else "optional"
            drifts.append(
                Drift(
                    "parameter added",
                    f"{named(name)} ({_types(theirs[name])}, {needed}): the mock does not list it",
                    file,
                    f"{at}/properties",
                )
            )
    mine_required, theirs_required = _required(mock), _required(served)
    for name in mine:
        if name not in theirs:
            continue
        if _types(mine[name]) != _types(theirs[name]):
            drifts.append(
                Drift(
                    "type changed",
                    f"{named(name)}: mock {_types(mine[name])}, server {_types(theirs[name])}",
                    file,
                    f"{where(name)}/type",
                )
            )
        if (name in mine_required) != (name in theirs_required):
            drifts.append(
                Drift(
                    "required changed",
                    f"{named(name)}: mock "
                    f"{'required' if name in mine_required else 'optional'}, server "
                    f"{'required' if name in theirs_required else 'optional'}",
                    file,
                    f"{at}/required",
                )
            )
        drifts += _schema_drifts(mine[name], theirs[name], file, where(name), named(name))
    mine_items, theirs_items = mock.get("items"), served.get("items")
    if isinstance(mine_items, Mapping) and isinstance(theirs_items, Mapping):
        if _types(mine_items) != _types(theirs_items):
            drifts.append(
                Drift(
                    "type changed",
                    f"{path or 'input'}[]: mock {_types(mine_items)}, server "
                    f"{_types(theirs_items)}",
                    file,
                    f"{at}/items/type",
                )
            )
        drifts += _schema_drifts(mine_items, theirs_items, file, f"{at}/items", f"{path}[]")
    return drifts


def _escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def _ordered(drifts: Sequence[Drift]) -> tuple[Drift, ...]:
    return tuple(sorted(drifts, key=lambda d: DRIFT_KINDS.index(d.kind)))


def compare_tools(
    mocked: Sequence[MockedTool], served: Sequence[Mapping[str, Any]], *, tools_file: Path
) -> tuple[ToolContract, ...]:
    """How a mock's tools differ from a server's ``tools/list``, tool by tool, in name order.

    Args:
        mocked: The tools the mock offers.
        served: The server's tools as ``tools/list`` gave them (``name``, ``description``,
            ``inputSchema``).
        tools_file: The mock's ``_tools.json`` (where a tool the mock lacks belongs).
    """
    mine = {tool.name: tool for tool in mocked}
    theirs = {str(tool.get("name")): tool for tool in served}
    contracts = []
    for name in sorted(mine.keys() | theirs.keys()):
        mock, real = mine.get(name), theirs.get(name)
        drifts: list[Drift] = []
        if mock is None:
            drifts.append(Drift("tool added", "the server has it, the mock does not", tools_file))
        elif real is None:
            drifts.append(
                Drift(
                    "tool removed", "the mock has it, the server does not", mock.file, mock.pointer
                )
            )
        elif mock.input_schema is None:
            drifts.append(
                Drift(
                    "unlisted",
                    f"{tools_file.name} does not list it: the mock offers it with no "
                    "description and any input",
                    mock.file,
                )
            )
        else:
            description = str(real.get("description") or "")
            if mock.description.strip() != description.strip():
                drifts.append(
                    Drift(
                        "description changed",
                        f"server: {_clip(description)!r}",
                        mock.file,
                        f"{mock.pointer}/description",
                    )
                )
            schema = real.get("inputSchema")
            drifts += _schema_drifts(
                mock.input_schema,
                schema if isinstance(schema, Mapping) else {},
                mock.file,
                f"{mock.pointer}/inputSchema",
                "",
            )
        contracts.append(ToolContract(name, _ordered(drifts)))
    return tuple(contracts)


def _clip(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_contracts(
    mocks: Sequence[MockedServer], *, timeout_s: float = 30.0, cwd: Path | None = None
) -> tuple[ServerContract, ...]:
    """Starts (or connects to) each real server once, asks its ``tools/list`` and compares
    every mock of it.

    Raises:
        McpServerError: a server that cannot be started or reached, or does not answer; with
            its (redacted) stderr and the fix.
    """
    from skilltest.mcp.health import check_servers

    servers = list({mock.server.name: mock.server for mock in mocks}.values())
    listed = check_servers(servers, timeout_s=timeout_s, cwd=cwd)
    return tuple(
        ServerContract(
            mock.server,
            mock.folder,
            compare_tools(
                mock.tools,
                listed[mock.server.name].listings,
                tools_file=mock.tools_file or mock.folder / "_tools.json",
            ),
        )
        for mock in mocks
    )


def summary(contracts: Sequence[ServerContract]) -> str:
    """``4 tools: 2 same, 2 drifted (1 tool added, 1 parameter renamed)``."""
    tools = [tool for contract in contracts for tool in contract.tools]
    drifted = [tool for tool in tools if not tool.same]
    counts: dict[str, int] = {}
    for tool in drifted:
        for drift in tool.drifts:
            counts[drift.kind] = counts.get(drift.kind, 0) + 1
    line = (
        f"{len(tools)} tool{'s' if len(tools) != 1 else ''} against "
        f"{len(contracts)} mock{'s' if len(contracts) != 1 else ''}: "
        f"{len(tools) - len(drifted)} same, {len(drifted)} drifted"
    )
    if counts:
        line += " (" + ", ".join(f"{counts[k]} {k}" for k in DRIFT_KINDS if k in counts) + ")"
    return line


def _shown(path: Path, base: Path | None) -> str:
    if base is not None and path.is_absolute() and path.is_relative_to(base):
        return str(path.relative_to(base))
    return str(path)


KIND_WIDTH = max(len(kind) for kind in ("same", *DRIFT_KINDS))


def report_lines(contracts: Sequence[ServerContract], *, base: Path | None = None) -> list[str]:
    """Each mock against its server, a line per tool (``same``) or per drift with the mock file
    and JSON pointer to change below it; paths under ``base`` shown relative to it."""
    lines: list[str] = []
    for contract in contracts:
        lines.append(
            f"{contract.server.name} ({_shown(Path(contract.server.origin), base)}) against "
            f"{_shown(contract.folder, base)}/"
        )
        for tool in contract.tools:
            if tool.same:
                lines.append(f"  {'same':<{KIND_WIDTH}}  {tool.tool}")
            for drift in tool.drifts:
                where = _shown(drift.file, base) + (f"#{drift.pointer}" if drift.pointer else "")
                lines.append(f"  {drift.kind:<{KIND_WIDTH}}  {tool.tool}: {drift.detail}")
                lines.append(f"  {'':<{KIND_WIDTH}}    at {where}")
    return lines
