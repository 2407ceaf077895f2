"""An eval case as read: its prompt and how to run it, its graders, its context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

GraderType = Literal["regex", "tool_order", "tool_used", "file_exists", "llm", "baseline"]
"""The graders of Claude Code 2.1.328's plugin eval."""

GRADER_TYPES: tuple[str, ...] = (
    "regex",
    "tool_order",
    "tool_used",
    "file_exists",
    "llm",
    "baseline",
)

READ_ONLY_TOOLS: tuple[str, ...] = (
    "Read",
    "Glob",
    "Grep",
    "NotebookRead",
    "Skill",
    "AskUserQuestion",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskStop",
    "Agent",
    "TodoWrite",
)
"""Tools every eval run may use without being granted (the CLI's read-only set); anything else
a case must list in ``allowed_tools``."""

DEFAULT_MAX_TURNS = 10
DEFAULT_TIMEOUT_SECONDS = 300
DEFAULT_RUNS = 3


@dataclass(frozen=True)
class Grader:
    """One grader, as the case writes it."""

    name: str
    """Its name: ``name:`` in case.yaml, the file name of ``graders/<name>.md``."""
    type: GraderType
    """Which grader."""
    fields: Mapping[str, Any]
    """Its own fields (``pattern``, ``target``, ``tool``...), the body of a ``.md`` grader
    filled in as ``criteria`` or ``pattern``; ``name``, ``type``, ``weight`` and ``arm`` left
    out."""
    location: str
    """``.../case.yaml#/graders/2`` or ``.../graders/<name>.md``."""
    weight: float = 1.0
    """Its share of the case's score (> 0)."""
    arm: Literal["with-only", "both"] | None = None
    """``with-only``: an indicator of the arm with the plugin; ``None`` when not written."""


@dataclass(frozen=True)
class Execution:
    """How the agent runs."""

    prompt: str
    """The user prompt (``prompt.md``'s body, or ``execution.prompt``)."""
    max_turns: int = DEFAULT_MAX_TURNS
    """``--max-turns``."""
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS
    """The run's time limit."""
    model: str | None = None
    """``--model``."""
    allowed_tools: tuple[str, ...] = ()
    """Tools granted beyond the read-only set."""
    disallowed_tools: tuple[str, ...] = ()
    """Tools kept from the model."""
    append_system_prompt: str | None = None
    """``--append-system-prompt``."""
    env: Mapping[str, str] = field(default_factory=dict)
    """``EVAL_*`` variables the run gets."""


@dataclass(frozen=True)
class Context:
    """What the run starts from (paths resolved, inside the case folder or its plugin)."""

    scaffold_script: Path | None = None
    """A bash script run in the working directory before the agent."""
    history_file: Path | None = None
    """A session (``.jsonl``) the run resumes before the prompt."""
    add_dirs: tuple[Path, ...] = ()
    """Folders the agent may also read (``--add-dir``)."""


@dataclass(frozen=True)
class EvalCase:
    """One case folder, read and checked."""

    name: str
    """``name:`` or the folder's name."""
    folder: Path
    """The case folder."""
    location: str
    """The file that defines it (``case.yaml``, else ``prompt.md``), for messages."""
    execution: Execution
    """How the agent runs."""
    graders: tuple[Grader, ...]
    """case.yaml's graders, then ``graders/*.md`` in file-name order."""
    context: Context = field(default_factory=Context)
    """Scaffold, history, extra folders."""
    runs: int = DEFAULT_RUNS
    """Runs per arm."""
    description: str | None = None
    """What it checks."""
    tags: tuple[str, ...] = ()
    """Its tags."""
    expected_outcome: str | None = None
    """A text about the outcome (shown, not graded)."""
