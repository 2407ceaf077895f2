"""A script's tool calls in the suite's vocabulary, sent as the tools each agent offers.

Model scripts name tools as Claude Code does (``Bash`` with ``{command}``, ``Read`` with
``{file_path}``, ``Skill`` with ``{skill}``). Other agents offer the same abilities under other
names and inputs: Codex 0.171.0 runs a command with ``exec_command`` (``{cmd}``), OpenCode
1.18.33 with ``bash`` (``{command, timeout, workdir}``), Gemini CLI 0.61.0 with
``run_shell_command`` (``{command, description}``) and loads a skill with ``activate_skill``
(``{name}``). Codex has no file tools: a scripted
``Read`` reaches it as ``cat`` through ``exec_command``, ``Write`` and ``Edit`` as an
``apply_patch`` it runs there (an ``Edit``'s ``old_string`` must then be whole lines), and a
``Skill`` as the ``cat`` of the skill's ``SKILL.md`` that loads a skill in Codex.
:func:`as_offered` rewrites a scripted call into the tool the request offers, so one script
drives every agent:

* a call whose name the request offers is sent as written (Claude Code's requests, and any
  script that names an agent's own tool);
* an MCP tool ``mcp__server__tool`` as OpenCode (``server_tool``) or Gemini CLI
  (``mcp_server_tool``) offers it;
* else the first equivalent in :data:`EQUIVALENTS` that the request offers, its input rewritten;
* else the call as written (the agent answers that it has no such tool, as it would).

The table is the emulator's share of the agents' tool-name table: an agent added to the
toolkit adds its names here, one :class:`Equivalent` per tool.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from skilltest.emulator.script import ToolCall

Translate = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Equivalent:
    """An agent's tool that does what a suite tool does."""

    name: str
    """The tool's name as the agent offers it."""
    translate: Translate
    """The suite tool's input rewritten as this tool's input."""
    beside: str | None = None
    """A tool the request must offer too: tells apart two agents' tools of one name (OpenCode's
    and Gemini CLI's ``glob``)."""


def _renamed(**names: str) -> Translate:
    """Keys renamed (``suite key=agent key``); keys not named pass as they are."""

    def translate(given: Mapping[str, Any]) -> dict[str, Any]:
        return {names.get(key, key): value for key, value in given.items()}

    return translate


def _codex_exec(given: Mapping[str, Any]) -> dict[str, Any]:
    # exec_command takes the command line as `cmd`; Bash's description has no place there.
    return {"cmd": str(given.get("command", ""))}


def _codex_read(given: Mapping[str, Any]) -> dict[str, Any]:
    return {"cmd": f"cat {shlex.quote(str(given.get('file_path', '')))}"}


def _codex_skill(given: Mapping[str, Any]) -> dict[str, Any]:
    # Codex lists each skill's SKILL.md under .agents/skills and the model reads it to load it.
    path = f".agents/skills/{given.get('skill', '')}/SKILL.md"
    return {"cmd": f"cat {shlex.quote(path)}"}


def _patch_command(body: list[str]) -> dict[str, Any]:
    # apply_patch reads its patch from a here-document: every line of a patch starts with
    # `+`, `-`, `@@` or `***`, so none of them can be the bare end marker.
    lines = ["*** Begin Patch", *body, "*** End Patch"]
    return {"cmd": "apply_patch <<'PATCH'\n" + "\n".join(lines) + "\nPATCH\n"}


def _codex_write(given: Mapping[str, Any]) -> dict[str, Any]:
    content = str(given.get("content", ""))
    added = [f"+{line}" for line in content.splitlines()]
    return _patch_command([f"*** Add File: {given.get('file_path', '')}", *added])


def _codex_edit(given: Mapping[str, Any]) -> dict[str, Any]:
    removed = [f"-{line}" for line in str(given.get("old_string", "")).splitlines()]
    added = [f"+{line}" for line in str(given.get("new_string", "")).splitlines()]
    return _patch_command(
        [f"*** Update File: {given.get('file_path', '')}", "@@", *removed, *added]
    )


def _opencode_bash(given: Mapping[str, Any]) -> dict[str, Any]:
    # bash takes command, timeout (ms) and workdir; Bash's description is not among them.
    return {key: value for key, value in given.items() if key in ("command", "timeout")}


def _gemini_shell(given: Mapping[str, Any]) -> dict[str, Any]:
    # run_shell_command takes command and description as Bash does, and dir_path; no timeout.
    return {key: value for key, value in given.items() if key in ("command", "description")}


def _gemini_read(given: Mapping[str, Any]) -> dict[str, Any]:
    # read_file takes a 1-based start_line and end_line where Read takes offset and limit.
    read: dict[str, Any] = {"file_path": given.get("file_path", "")}
    offset, limit = given.get("offset"), given.get("limit")
    if isinstance(offset, int):
        read["start_line"] = max(1, offset)
    if isinstance(limit, int):
        read["end_line"] = (read.get("start_line") or 1) + limit - 1
    return read


def _gemini_replace(given: Mapping[str, Any]) -> dict[str, Any]:
    # replace also asks for an instruction saying what the change is for.
    edit = {
        "file_path": given.get("file_path", ""),
        "instruction": "Replace old_string with new_string as given.",
        "old_string": given.get("old_string", ""),
        "new_string": given.get("new_string", ""),
    }
    if given.get("replace_all"):
        edit["allow_multiple"] = True
    return edit


def _gemini_search(given: Mapping[str, Any]) -> dict[str, Any]:
    # glob and grep_search name the folder dir_path where Glob and Grep name it path.
    return {("dir_path" if key == "path" else key): value for key, value in given.items()}


def _gemini_webfetch(given: Mapping[str, Any]) -> dict[str, Any]:
    # web_fetch takes one prompt holding the URL and what to do with it.
    return {"prompt": f"{given.get('url', '')} {given.get('prompt', '')}".strip()}


def _opencode_webfetch(given: Mapping[str, Any]) -> dict[str, Any]:
    # webfetch takes url and format; WebFetch's prompt has no place there.
    return {"url": given.get("url", ""), "format": "markdown"}


EQUIVALENTS: dict[str, tuple[Equivalent, ...]] = {
    "Bash": (
        Equivalent("exec_command", _codex_exec),  # Codex 0.171.0
        Equivalent("bash", _opencode_bash),  # OpenCode 1.18.33
        Equivalent("run_shell_command", _gemini_shell),  # Gemini CLI 0.61.0
    ),
    "Read": (
        Equivalent("read", _renamed(file_path="filePath")),
        Equivalent("read_file", _gemini_read),
        Equivalent("exec_command", _codex_read),  # Codex 0.171.0: no file tools
    ),
    "Write": (
        Equivalent("write", _renamed(file_path="filePath")),
        Equivalent("write_file", _renamed()),
        Equivalent("exec_command", _codex_write),
    ),
    "Edit": (
        Equivalent(
            "edit",
            _renamed(file_path="filePath", old_string="oldString", new_string="newString"),
        ),
        Equivalent("replace", _gemini_replace),
        Equivalent("exec_command", _codex_edit),
    ),
    "Glob": (
        Equivalent("glob", _gemini_search, beside="run_shell_command"),  # Gemini CLI 0.61.0
        Equivalent("glob", _renamed()),
    ),
    "Grep": (Equivalent("grep", _renamed()), Equivalent("grep_search", _gemini_search)),
    "Skill": (
        Equivalent("skill", _renamed(skill="name")),
        Equivalent("activate_skill", _renamed(skill="name")),  # Gemini CLI 0.61.0
        Equivalent("exec_command", _codex_skill),  # Codex: a skill is loaded by reading it
    ),
    "WebFetch": (
        Equivalent("webfetch", _opencode_webfetch),
        Equivalent("web_fetch", _gemini_webfetch),
    ),
}
"""Per suite tool, the agents' equivalents, tried in order."""


_SANITISED = re.compile(r"[^A-Za-z0-9_-]")
_GEMINI_SANITISED = re.compile(r"[^a-zA-Z0-9_\-.:]")


def _mcp_offered(name: str, offered: tuple[str, ...]) -> str | None:
    """The name under which the request offers the MCP tool ``mcp__server__tool``: OpenCode
    1.18.33's ``server_tool`` (each part with every character but letters, digits, ``_`` and
    ``-`` made ``_``), Gemini CLI 0.61.0's ``mcp_server_tool`` (``.`` and ``:`` kept too);
    ``None`` when it offers no such tool."""
    parts = name.split("__", 2)
    if len(parts) != 3 or parts[0] != "mcp":
        return None
    opencode = f"{_SANITISED.sub('_', parts[1])}_{_SANITISED.sub('_', parts[2])}"
    gemini = _GEMINI_SANITISED.sub("_", f"mcp_{parts[1]}_{parts[2]}")
    return next((each for each in (opencode, gemini) if each in offered), None)


def as_offered(call: ToolCall, offered: tuple[str, ...]) -> ToolCall:
    """``call`` as the tool the request offers (see the module's rules)."""
    if call.name in offered or not offered:
        return call
    mcp = _mcp_offered(call.name, offered)
    if mcp is not None:
        return ToolCall(name=mcp, input=dict(call.input))
    for equivalent in EQUIVALENTS.get(call.name, ()):
        if equivalent.name in offered and (equivalent.beside in (None, *offered)):
            return ToolCall(name=equivalent.name, input=equivalent.translate(call.input))
    return call
