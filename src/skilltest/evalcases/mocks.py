"""MCP mocks written as Claude Code's plugin eval writes them: ``mocks/<server>/<tool>.md``.

::

    mocks/
      telemetry/                 # the server: its key in .mcp.json, or any name
        query_logs.md            # one tool: a canned answer (type: fixed, the default)
        search_traces.md         # or type: agent, an agent playing the server
        _server.md               # one agent answering several tools: (type: agent)
        _tools.json              # the server's tools/list (name, description, inputSchema)

A ``<tool>.md`` frontmatter takes ``type`` (``fixed`` or ``agent``), ``expect`` (a guard on the
call's input: a call that breaks it aborts the run), ``error: true`` (a fixed answer sent as a
tool error) and ``abort_when`` (an agent's conditions for stopping the run); its body is the
answer (``{{input.<field>}}`` echoes a field of the call, ``{{file:PATH}}`` a file beside it) or
the description of the server the agent plays. ``_server.md`` is one agent for the tools it
lists in ``tools:``. A tool without a ``_tools.json`` entry is offered with a permissive input
schema and no description.

Several ``mocks/`` folders may apply to one case (the eval folder's, then each folder down to
the case's): a later folder's file for a tool wins. Every rule and message below is the pinned
CLI's (2.1.328).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skilltest.errors import SuiteError
from skilltest.evalcases.expect import guard_problems
from skilltest.evalcases.frontmatter import read_markdown

SERVER_FILE = "_server.md"
TOOLS_FILE = "_tools.json"
NAME = re.compile(r"^[A-Za-z0-9_-]+$")
"""A server folder's and a tool file's name: a segment of an MCP tool name."""
STUB = "TODO: replace with the canned result this tool should return"
"""What a scaffolded mock holds until its author fills it in."""
MAX_ENTRIES = 256
FRONTMATTER_KEYS = ("type", "expect", "error", "tools", "abort_when")


@dataclass(frozen=True)
class Responder:
    """What answers one tool."""

    kind: Literal["fixed", "agent"]
    """A canned answer, or an agent playing the server."""
    text: str
    """The canned answer (fixed), or the description of the server (agent)."""
    source: Path
    """The file it comes from."""
    is_error: bool = False
    """A fixed answer sent as a tool error (``error: true``)."""
    expect: Mapping[str, Any] | None = None
    """The guard on the call's input (values as strings, lists of them, or nested guards)."""
    abort_when: str | None = None
    """An agent's conditions for stopping the run."""

    def to_dict(self) -> dict[str, Any]:
        """How the mock server's spec file holds it."""
        return {
            "kind": self.kind,
            "text": self.text,
            "is_error": self.is_error,
            "expect": self.expect,
            "abort_when": self.abort_when,
            "base_dir": str(self.source.parent),
        }


@dataclass(frozen=True)
class ToolListing:
    """A tool as ``tools/list`` gives it."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "additionalProperties": True}
    )
    source: Path | None = field(default=None, compare=False)
    """The ``_tools.json`` it was read from; ``None`` for a tool it does not list."""
    pointer: str = field(default="", compare=False)
    """Where in ``source`` the entry is, as a JSON pointer (``/tools/0``)."""


@dataclass(frozen=True)
class MockServer:
    """One ``mocks/<server>/`` folder (merged over the folders that apply)."""

    name: str
    """The folder's name: the server's key in the plugin's ``.mcp.json`` (the mock then stands
    in for that server), or the name of a server of its own."""
    responders: Mapping[str, Responder]
    """Each tool's responder, by tool name."""
    listings: Mapping[str, ToolListing] = field(default_factory=dict)
    """``_tools.json``'s entries, by tool name."""
    location: str = ""
    """The (last) folder it was read from."""

    @property
    def tools(self) -> tuple[ToolListing, ...]:
        """The tools it offers, in name order, each with its listing or a permissive one."""
        return tuple(self.listings.get(name, ToolListing(name)) for name in sorted(self.responders))

    def has_agent(self) -> bool:
        """Whether an agent answers any of its tools."""
        return any(r.kind == "agent" for r in self.responders.values())


def _fail(path: Path, message: str, fix: str, line: int | None = None) -> SuiteError:
    where = f"{path}:{line}" if line is not None else str(path)
    return SuiteError(message, location=where, fix=fix)


def _responder(path: Path, server: str) -> tuple[Responder, tuple[str, ...]]:
    """One ``<tool>.md`` or ``_server.md``, checked; and its ``tools:``."""
    label = f"mocks/{server}/{path.name}"
    markdown = read_markdown(path)
    data = markdown.frontmatter
    unknown = [key for key in data if key not in FRONTMATTER_KEYS]
    if unknown:
        raise _fail(
            path,
            f"{label}: {unknown[0]}: unrecognized key (keys: {', '.join(FRONTMATTER_KEYS)})",
            "use only those keys",
            markdown.line_of(unknown[0]),
        )
    kind = data.get("type", "fixed")
    if kind not in ("fixed", "agent"):
        raise _fail(
            path,
            f"{label}: type: must be fixed or agent (keys: {', '.join(FRONTMATTER_KEYS)})",
            "write type: fixed (a canned answer) or type: agent",
            markdown.line_of("type"),
        )
    if "error" in data and not isinstance(data["error"], bool):
        raise _fail(
            path,
            f"{label}: error: must be true or false",
            "write error: true",
            markdown.line_of("error"),
        )
    tools = data.get("tools")
    if tools is not None and (
        not isinstance(tools, list) or not all(isinstance(t, str) and NAME.match(t) for t in tools)
    ):
        raise _fail(
            path,
            f'{label}: tools: tool names may contain only letters, digits, "_" and "-"',
            "write tools: [list_files, get_diff]",
            markdown.line_of("tools"),
        )
    expect = data.get("expect")
    if expect is not None:
        if not isinstance(expect, dict):
            raise _fail(
                path,
                f"{label}: expect: must be a mapping of argument guards",
                "write expect: {project: OPS}",
                markdown.line_of("expect"),
            )
        expect = _strings(expect)
        problems = guard_problems(expect)
        if problems:
            raise _fail(
                path,
                f"{label}: {problems[0]}",
                "fix the guard (a value, a list of values, a type name or /regex/)",
                markdown.line_of("expect"),
            )
    if tools is not None and path.name != SERVER_FILE:
        raise _fail(
            path,
            f"{label}: `tools:` belongs in {SERVER_FILE} (a <tool>.md answers the tool it is "
            "named after)",
            f"move the agent to mocks/{server}/{SERVER_FILE}, or drop tools:",
        )
    body = markdown.body.lstrip("\n").rstrip()
    abort_when = data.get("abort_when")
    if kind == "agent":
        if "error" in data:
            raise _fail(
                path,
                f"{label}: `error:` applies to fixed responders only",
                "drop error: (an agent answers ERROR: lines itself)",
            )
        if not body or STUB in body:
            held = " (it still holds the scaffolded placeholder)" if body else ""
            raise _fail(
                path,
                f"{label}: an agent responder needs a description of the server it plays as its "
                f"body{held}",
                "describe the server and the world it serves below the frontmatter",
            )
        responder = Responder(
            "agent",
            body,
            path,
            expect=expect,
            abort_when=str(abort_when)
            if isinstance(abort_when, str) and abort_when.strip()
            else None,
        )
        return responder, tuple(tools or ())
    if abort_when is not None:
        raise _fail(
            path,
            f"{label}: `abort_when:` needs `type: agent`; a fixed responder guards its input "
            "with `expect:`",
            "write expect: for a fixed answer, or type: agent",
        )
    if STUB in body:
        raise _fail(
            path,
            f"{label}: still holds the scaffolded placeholder — write the tool's canned "
            "answer as the body",
            "replace the TODO line with what the tool returns",
        )
    return Responder("fixed", body, path, is_error=bool(data.get("error")), expect=expect), ()


def _strings(value: Any) -> Any:
    """Guard values as the CLI reads them: every scalar as its string (``5``, ``true``)."""
    if isinstance(value, dict):
        return {str(k): _strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def _listings(path: Path, server: str) -> dict[str, ToolListing]:
    label = f"mocks/{server}/{TOOLS_FILE}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _fail(
            path,
            f"{label}: not valid JSON ({exc})",
            "save the server's tools/list response as JSON",
        ) from exc
    prefix = ""
    if isinstance(data, dict) and "result" in data:
        data = data["result"]
        prefix = "/result"
    tools = data.get("tools") if isinstance(data, dict) else None
    shape = (
        f"{label}: expected a saved tools/list response "
        f'({{"tools": [{{"name", "description", "inputSchema"}}]}})'
    )
    if not isinstance(tools, list):
        raise _fail(path, shape, "save the tools/list result as it came")
    found = {}
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
            raise _fail(path, shape, "give every tool a name")
        schema = tool.get("inputSchema")
        if schema is not None and not isinstance(schema, dict):
            raise _fail(path, shape, "inputSchema must be an object")
        found[tool["name"]] = ToolListing(
            name=tool["name"],
            description=str(tool.get("description") or ""),
            input_schema={"type": "object", **(schema or {"additionalProperties": True})},
            source=path,
            pointer=f"{prefix}/tools/{index}",
        )
    return found


def _read_server(
    folder: Path,
) -> tuple[dict[str, Responder], Responder | None, tuple[str, ...], dict[str, ToolListing]]:
    server = folder.name
    if not NAME.match(server):
        raise _fail(
            folder,
            f"mocks/{server}/: name the directory after the server segment of the tool name "
            '(letters, digits, "_" and "-" only)',
            "rename the folder after the server's key in .mcp.json",
        )
    if "__" in server:
        raise _fail(
            folder,
            f'mocks/{server}/: "__" is the tool-name separator and cannot appear in a mock '
            "server name",
            "rename the folder",
        )
    entries = sorted(folder.iterdir())
    if len(entries) > MAX_ENTRIES:
        raise _fail(
            folder,
            f"mocks/{server}/ has {len(entries)} entries (cap: {MAX_ENTRIES})",
            "keep one file per tool",
        )
    tools: dict[str, Responder] = {}
    agent: Responder | None = None
    agent_tools: tuple[str, ...] = ()
    listings: dict[str, ToolListing] = {}
    for path in entries:
        if path.name == TOOLS_FILE:
            listings = _listings(path, server)
            continue
        if path.name.startswith(".") or path.suffix != ".md" or path.is_dir():
            continue
        if path.name != SERVER_FILE and not NAME.match(path.stem):
            raise _fail(
                path,
                f"mocks/{server}/{path.name}: name responder files after the tool (letters, "
                'digits, "_" and "-" only), e.g. list_issues.md',
                "rename the file after the tool",
            )
        responder, named = _responder(path, server)
        if path.name == SERVER_FILE:
            if responder.kind != "agent":
                raise _fail(
                    path,
                    f"mocks/{server}/{SERVER_FILE}: only `type: agent` is meaningful here (one "
                    "agent answering several tools); put a fixed answer in <tool>.md",
                    "write type: agent, or move the answer to <tool>.md",
                )
            if not named:
                raise _fail(
                    path,
                    f"mocks/{server}/{SERVER_FILE}: an agent answering several tools needs `tools: "
                    "[...]`",
                    "list the tools it answers in tools:",
                )
            if responder.expect is not None and len(named) > 1:
                raise _fail(
                    path,
                    f"mocks/{server}/{SERVER_FILE}: `expect:` here would guard all "
                    f"{len(named)} tools it answers; put the guard on the one tool it is "
                    f"meant for as mocks/{server}/<tool>.md",
                    "move expect: to the tool's own file",
                )
            agent, agent_tools = responder, named
            continue
        tools[path.stem] = responder
    return tools, agent, agent_tools, listings


def read_mocks(layers: Sequence[Path]) -> tuple[tuple[MockServer, ...], tuple[str, ...]]:
    """The mock servers of ``mocks/`` folders, a later folder's files winning; and notes on
    what is not mocked (a server folder with no responder).

    Raises:
        SuiteError: a file or folder the CLI would refuse, with its place and the fix.
    """
    merged: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for layer in layers:
        if not layer.is_dir():
            continue
        for folder in sorted(
            p for p in layer.iterdir() if p.is_dir() and not p.name.startswith(".")
        ):
            tools, agent, agent_tools, listings = _read_server(folder)
            entry = merged.setdefault(
                folder.name, {"responders": {}, "listings": {}, "location": str(folder)}
            )
            for name in agent_tools:
                if agent is not None:
                    entry["responders"][name] = agent
            entry["responders"].update(tools)
            entry["listings"].update(listings)
            entry["location"] = str(folder)
    servers = []
    for name in sorted(merged):
        entry = merged[name]
        if not entry["responders"]:
            notes.append(
                f"mocks: mocks/{name}/ has no <tool>.md responders — nothing is mocked for {name}"
            )
            continue
        servers.append(
            MockServer(name, dict(entry["responders"]), dict(entry["listings"]), entry["location"])
        )
    return tuple(servers), tuple(notes)


def mock_layers(case_folder: Path, eval_root: Path) -> tuple[Path, ...]:
    """The ``mocks/`` folders that apply to a case: the eval folder's, then each folder's down
    to the case's own."""
    folders = [case_folder]
    current = case_folder
    while current != eval_root and eval_root in current.parents:
        current = current.parent
        folders.append(current)
    return tuple(folder / "mocks" for folder in reversed(folders) if (folder / "mocks").is_dir())
