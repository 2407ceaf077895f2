"""Claude Code's plugin eval cases, read unchanged: ``evals/<case>/`` folders and ``mocks/``.

A plugin's ``evals/`` folder holds one folder per case (``case.yaml``, or ``prompt.md`` and
``graders/*.md``, or both) and ``mocks/<server>/<tool>.md`` files that stand in for MCP servers,
in the format ``claude plugin eval`` (Claude Code 2.1.328) runs. This room reads and checks
them with the CLI's own rules and words (``reader``, ``mocks``, ``expect``, ``frontmatter``),
writes the scenario suite the cases are (``suite``), and serves a mocks folder as an MCP server
in a run (``mock_server``, with the agent responder's prompts in ``responder``). The scenario
layer runs that suite as any other: intervals, adaptive K, cassettes, reports and the gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.evalcases.mocks import MockServer, Responder, read_mocks
    from skilltest.evalcases.model import EvalCase, Grader
    from skilltest.evalcases.reader import find_cases, is_case_folder, read_case
    from skilltest.evalcases.suite import (
        EvalTarget,
        names_eval_cases,
        read_eval_target,
        registered_name,
        suite_document,
    )

_NAMES = {
    "MockServer": "mocks",
    "Responder": "mocks",
    "read_mocks": "mocks",
    "EvalCase": "model",
    "Grader": "model",
    "find_cases": "reader",
    "is_case_folder": "reader",
    "read_case": "reader",
    "EvalTarget": "suite",
    "names_eval_cases": "suite",
    "read_eval_target": "suite",
    "registered_name": "suite",
    "suite_document": "suite",
}

__all__ = [
    "EvalCase",
    "EvalTarget",
    "Grader",
    "MockServer",
    "Responder",
    "find_cases",
    "is_case_folder",
    "names_eval_cases",
    "read_case",
    "read_eval_target",
    "read_mocks",
    "registered_name",
    "suite_document",
]


def __getattr__(name: str) -> Any:
    # Imported when first asked for: a mock server started for a run loads only what it serves.
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'skilltest.evalcases' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"skilltest.evalcases.{module}"), name)
