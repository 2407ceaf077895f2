"""Outcome checks: did the work get done, whatever the agent said or tried?

A scenario's ``checks:`` are evaluated after each run, in the run's own workspace, before its
sandbox is removed; together they are the rubric's ``checks`` component (see
:mod:`skilltest.scenarios.rubric`), and any of them can veto the run (``veto: true``: a run that
fails it scores 0 and fails, whatever else it did).

``model``
    the check kinds, parsed and validated from a suite (``file_exists``, ``file_matches``,
    ``files_match``, ``command``, ``python_assertion``, ``final_answer``, ``trace_matches``,
    ``mock_calls_match``, ``tool_used``, ``tool_order``, ``judge``), and :class:`CheckResult`
``evaluate``
    evaluating checks against a finished run (:class:`RunView`): files, a command run in the
    workspace with a time limit, the answer the user saw, the tool calls
``assertion``
    ``python_assertion``: a Python expression about the run in its own process, as waza's
    ``code`` grader evaluates its assertions
``judge``
    model-graded checks: ``votes`` independent calls through the run's own endpoint (so the
    emulator answers them offline and cassettes record and replay them), majority decides
"""

from __future__ import annotations

from skilltest.checks.model import (
    Check,
    CheckResult,
    Match,
    parse_checks,
)

__all__ = ["Check", "CheckResult", "Match", "parse_checks"]
