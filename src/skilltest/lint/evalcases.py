"""A plugin's eval cases (``evals/``) as ``skilltest lint`` checks them.

Every case and every ``mocks/`` folder is read as ``claude plugin eval`` would read it; what it
would refuse is a finding with its place and its fix. Besides, what the CLI accepts but cannot
work:

* a key of case.yaml (top level, ``execution``, ``context``) the CLI silently ignores, when it
  looks like a misspelt known key;
* a grader that can never pass with the tools the case grants, as the CLI warns before a run: a
  file grader (``file_exists``, a positive pattern over ``files``, a ``{source: file}`` target)
  when no granted tool can create a file, and a ``tool_used`` (``min`` >= 1) or ``tool_order``
  grader on a tool the case neither grants nor mocks (the run withholds it, so no call occurs).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from skilltest.errors import InputError
from skilltest.evalcases import find_cases, read_case
from skilltest.evalcases.mocks import MockServer, mock_layers, read_mocks
from skilltest.evalcases.model import READ_ONLY_TOOLS, EvalCase, Grader
from skilltest.evalcases.suite import plugin_eval_folder, registered_name
from skilltest.lint.findings import Finding
from skilltest.plugins.plugin import Plugin
from skilltest.suite.loader import load_schema, read_yaml

FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"})
"""Tools that can create a file."""


def eval_folder(plugin: Plugin) -> Path | None:
    """The plugin's eval folder (``experimental.evals`` of its manifest, else ``evals/``)."""
    folder = plugin_eval_folder(plugin.root, plugin.manifest)
    return folder if folder.is_dir() else None


def check_eval_cases(plugin: Plugin) -> tuple[list[Finding], int]:
    """Every case of the plugin's eval folder; the findings and how many cases were read."""
    root = eval_folder(plugin)
    if root is None:
        return [], 0
    findings: list[Finding] = []
    folders = find_cases(root)
    mocked_layers: set[Path] = set()
    for folder in folders:
        layers = mock_layers(folder, root)
        servers: tuple[MockServer, ...] | None
        try:
            servers, _ = read_mocks(layers)
        except InputError as exc:
            # Once per folder; the case's tool graders cannot be judged without its mocks.
            if not any(layer in mocked_layers for layer in layers):
                findings.append(Finding.from_error(exc, "eval-mock", str(folder)))
            mocked_layers.update(layers)
            servers = None
        try:
            case = read_case(folder, plugin_root=plugin.root)
        except InputError as exc:
            findings.append(Finding.from_error(exc, "eval-case", str(folder)))
            continue
        findings += _ignored_keys(case)
        if servers is None:
            continue
        mocked = {
            f"mcp__{registered_name(plugin, server.name)[0]}__{tool.name}"
            for server in servers
            for tool in server.tools
        }
        findings += _cannot_pass(case, mocked)
    return findings, len(folders)


def _ignored_keys(case: EvalCase) -> list[Finding]:
    """case.yaml keys the CLI drops without a word, when they look like a misspelt one."""
    path = case.folder / "case.yaml"
    if not path.is_file():
        return []
    data = read_yaml(path)
    schema = load_schema("evalcase")
    parts = [
        ("", data, schema["properties"]),
        ("execution/", data.get("execution") or {}, schema["$defs"]["execution"]["properties"]),
        ("context/", data.get("context") or {}, schema["$defs"]["context"]["properties"]),
    ]
    findings = []
    for prefix, values, known in parts:
        for key in values if isinstance(values, dict) else ():
            if key in known:
                continue
            close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.7)
            hint = f"did you mean {close[0]!r}? " if close else ""
            findings.append(
                Finding(
                    f"{path}#/{prefix}{key}",
                    f"unknown key {key!r}: claude plugin eval ignores it",
                    f"{hint}known keys: {', '.join(known)}",
                    "eval-case",
                )
            )
    return findings


def _creates_files(grader: Grader) -> bool:
    fields = grader.fields
    if grader.type == "file_exists":
        return bool(fields.get("exists", True))
    target = fields.get("target" if grader.type == "regex" else "focus")
    if isinstance(target, dict):
        return True
    if grader.type == "regex" and target == "files":
        match = str(fields.get("match") or "contains")
        return match not in ("not_contains", "count:0")
    return False


def _named_tools(grader: Grader) -> Iterable[str]:
    fields = grader.fields
    if grader.type == "tool_used" and int(fields.get("min", 1)) >= 1:
        yield str(fields["tool"])
    if grader.type == "tool_order":
        for key in ("before", "after"):
            ref = fields[key]
            yield str(ref["tool"] if isinstance(ref, dict) else ref)


def _cannot_pass(case: EvalCase, mocked: set[str]) -> list[Finding]:
    granted = {rule.split("(", 1)[0] for rule in case.execution.allowed_tools}
    withheld = set(case.execution.disallowed_tools)
    available = (set(READ_ONLY_TOOLS) | granted | mocked) - withheld
    findings = []
    for grader in case.graders:
        if _creates_files(grader) and not (available & FILE_TOOLS):
            findings.append(
                Finding(
                    grader.location,
                    f'grader "{grader.name}" cannot pass with the granted tools: it checks a file '
                    "the run creates, but no tool the run may use can create one",
                    "add Write (or Edit / Bash) to the case's allowed_tools",
                    "eval-case",
                )
            )
        for tool in _named_tools(grader):
            if tool in available or (tool == "Task" and "Agent" in available):
                continue
            reason = "is in disallowed_tools" if tool in withheld else "is not granted"
            findings.append(
                Finding(
                    grader.location,
                    f'grader "{grader.name}" cannot pass with the granted tools: it needs a {tool} '
                    f"call in the trace, but {tool} {reason}, so the run withholds it from the "
                    "model and no call can occur",
                    f"add {tool} to the case's allowed_tools (or mock it under mocks/), or drop "
                    "the grader",
                    "eval-case",
                )
            )
    return findings
