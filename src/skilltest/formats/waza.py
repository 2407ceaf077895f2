"""microsoft/waza's ``eval.yaml``, read unchanged into a scenario suite.

A waza eval names the skill, a ``config`` (``trials_per_task``, ``timeout_seconds``,
``model``), suite-wide ``graders`` and ``tasks``: globs of task files relative to the eval file.
Each task has an ``id``, ``inputs.prompt``, ``inputs.files`` (each ``path`` in the fixtures
folder, ``fixtures/`` beside the eval file as ``waza run`` takes by default) and its own
``graders``. :func:`eval_document` makes each task a scenario whose checks are the suite's
graders then the task's:

* ``text``: ``contains`` and ``not_contains`` (case-insensitive), ``contains_cs`` and
  ``not_contains_cs``, ``regex_match`` and ``regex_not_match`` are ``final_answer`` checks;
* ``file``: ``must_exist`` and ``must_not_exist`` are ``file_exists`` checks,
  ``content_patterns`` (``path``, ``must_match``, ``must_not_match``) ``file_matches`` checks;
* ``llm``: its ``rubric`` is a ``judge`` check's criteria;
* ``action_sequence`` (``expected_actions``, ``matching_mode``): ``in_order_match`` is the
  scenario's ``tool_ordering`` (the actions in order, other calls between them allowed),
  ``any_order_match`` a ``tool_used`` check per action (``min``: how often it is listed);
  ``exact_match`` is refused (no check asks for nothing but those calls);
* a task's ``expected.output_contains`` and ``output_not_contains`` are ``final_answer``
  checks, as the ``text`` grader's ``contains`` and ``not_contains``.

Each grader weighs its ``weight`` (default 1), shared among the checks it becomes, as waza scores
a grader by the share of its checks that pass; the ``tool_ordering`` of the in-order sequences
weighs theirs (the scenario's ``weights``).

A ``code`` grader's ``assertions`` (Python, waza's default ``language``) are the eval's own code:
with ``--allow-code-graders`` (:attr:`ReadOptions.allow_code_graders`) each is a
``python_assertion`` check, run after the run in its working directory, in its own process,
with a time limit, seeing the run as waza's grader does (``output``, ``transcript``,
``tool_calls``, ``errors``, ``duration_ms``, ``outcome``); waza scores the grader by the share
of its assertions that hold, and the grader's weight is shared among them alike. Without the
flag, the grader is refused by name, saying so. A ``javascript`` code grader, and every other
type (``script``, which waza itself does not implement, ``program``, ``behavior``, ...), is
refused, naming the grader.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path, PurePosixPath
from typing import Any

from skilltest.errors import SuiteError
from skilltest.formats.detect import Format, ReadOptions
from skilltest.suite.loader import read_yaml

FIXTURES = "fixtures"
"""Where a task's ``inputs.files`` are, beside the eval file (``waza run``'s default
``--context-dir``)."""
SUPPORTED = ("text", "file", "llm", "action_sequence")
"""The grader types read; every other is refused by name."""
SEQUENCE = "__sequence__"
"""The key an ``in_order_match`` action sequence is carried under, on its way to the
scenario's ``tool_ordering``."""
CODE_GRADERS = ("script", "program", "inline_script")
"""Grader types that would run a program of the eval's own, which skilltest never runs
(``code``, Python assertions, runs with ``--allow-code-graders``)."""
ASSERTION_TIMEOUT_S = 60.0
"""How long one assertion of a ``code`` grader may take (waza sets none of its own)."""


def is_eval_file(data: Any) -> bool:
    """Whether ``data`` is a waza eval: a mapping with ``tasks`` (a list of globs) and no
    ``scenarios`` or ``queries``."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("tasks"), list)
        and "scenarios" not in data
        and "queries" not in data
    )


def _strings(value: Any, at: str, what: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SuiteError(f"{what} must be a list of texts", location=at, fix=f"list {what}")
    return list(value)


def _final_answer(pattern: str, absent: bool) -> dict[str, Any]:
    return {"pattern": pattern, "match": "not_contains" if absent else "contains"}


def _text_checks(config: dict[str, Any], at: str) -> list[tuple[str, dict[str, Any]]]:
    checks: list[tuple[str, dict[str, Any]]] = []
    for key, absent, literal, flags in (
        ("contains", False, True, "(?i)"),
        ("not_contains", True, True, "(?i)"),
        ("contains_cs", False, True, ""),
        ("not_contains_cs", True, True, ""),
        ("regex_match", False, False, ""),
        ("regex_not_match", True, False, ""),
    ):
        for text in _strings(config.get(key), f"{at}/config/{key}", key):
            pattern = flags + (re.escape(text) if literal else text)
            checks.append(("final_answer", _final_answer(pattern, absent)))
    return checks


def _file_checks(config: dict[str, Any], at: str) -> list[tuple[str, dict[str, Any]]]:
    checks: list[tuple[str, dict[str, Any]]] = []
    for path in _strings(config.get("must_exist"), f"{at}/config/must_exist", "must_exist"):
        checks.append(("file_exists", {"path": path}))
    for path in _strings(
        config.get("must_not_exist"), f"{at}/config/must_not_exist", "must_not_exist"
    ):
        checks.append(("file_exists", {"path": path, "exists": False}))
    for index, entry in enumerate(config.get("content_patterns") or ()):
        where = f"{at}/config/content_patterns/{index}"
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise SuiteError(
                "a content pattern needs a path",
                location=where,
                fix='write {path: README.md, must_match: ["..."]}',
            )
        for key, match in (("must_match", "contains"), ("must_not_match", "not_contains")):
            for pattern in _strings(entry.get(key), f"{where}/{key}", key):
                checks.append(
                    ("file_matches", {"path": entry["path"], "pattern": pattern, "match": match})
                )
    return checks


def _code_checks(
    grader: dict[str, Any], name: str, at: str, options: ReadOptions
) -> list[tuple[str, dict[str, Any]]]:
    """A ``code`` grader's assertions as ``python_assertion`` checks, when allowed."""
    raw = grader.get("config")
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    language = config.get("language") or "python"
    if language != "python":
        raise SuiteError(
            f"grader {name!r} is a {language!r} code grader: skilltest runs Python assertions only",
            location=f"{at}/config/language",
            fix="write the assertions in Python (language: python), or remove the grader",
        )
    if not options.allow_code_graders:
        raise SuiteError(
            f"grader {name!r} is of type 'code': its assertions are the eval's own Python, "
            "which skilltest runs only when told to",
            location=f"{at}/type",
            fix="pass --allow-code-graders to run them (each after the run, in its working "
            "directory, in its own process, with a time limit), or rewrite the grader as a "
            "text, file, llm or action_sequence grader",
        )
    assertions = _strings(config.get("assertions"), f"{at}/config/assertions", "assertions")
    return [
        ("python_assertion", {"expression": text, "timeout_s": ASSERTION_TIMEOUT_S})
        for text in assertions
    ]


def _grader_checks(
    grader: Any, at: str, options: ReadOptions | None = None
) -> list[dict[str, Any]]:
    """One waza grader as skilltest checks, its weight shared among them.

    Raises:
        SuiteError: a grader type skilltest has no check for, naming the grader; a ``code``
            grader without ``options.allow_code_graders``.
    """
    if not isinstance(grader, dict):
        raise SuiteError("a grader must be a mapping", location=at, fix="write {type: text, ...}")
    kind, name = grader.get("type"), str(grader.get("name") or grader.get("type"))
    if kind in CODE_GRADERS:
        raise SuiteError(
            f"grader {name!r} is of type {kind!r}: it would run a program of the eval's own, "
            "which skilltest does not run",
            location=f"{at}/type",
            fix="rewrite it as a text, file, llm or action_sequence grader (or a skilltest "
            "`command` check), or remove it",
        )
    if kind not in (*SUPPORTED, "code"):
        raise SuiteError(
            f"grader {name!r} is of type {kind!r}, which skilltest does not run (it reads "
            f"{', '.join(SUPPORTED)})",
            location=f"{at}/type",
            fix="remove the grader or rewrite it as one of those types; skilltest runs no "
            "grader code of its own",
        )
    config = grader.get("config") or {}
    if not isinstance(config, dict):
        raise SuiteError("config must be a mapping", location=f"{at}/config", fix="see waza's docs")
    weight = float(grader.get("weight") or 1.0)
    if kind == "action_sequence":
        return _sequence_checks(config, name, weight, at)
    if kind == "text":
        checks = _text_checks(config, at)
    elif kind == "file":
        checks = _file_checks(config, at)
    elif kind == "code":
        checks = _code_checks(grader, name, at, options or ReadOptions())
    else:
        rubric = grader.get("rubric") or config.get("rubric")
        if not isinstance(rubric, str) or not rubric.strip():
            raise SuiteError(
                f"llm grader {name!r} has no rubric",
                location=at,
                fix="write the rubric the judge grades against: rubric: |",
            )
        checks = [("judge", {"criteria": rubric, "focus": "trace"})]
    if not checks:
        raise SuiteError(
            f"grader {name!r} checks nothing",
            location=f"{at}/config",
            fix="give it at least one pattern, file, assertion or rubric",
        )
    weight /= len(checks)
    named = [name] if len(checks) == 1 else [f"{name} {n}" for n in range(1, len(checks) + 1)]
    return [
        {kind_: {**spec, "name": label, "weight": weight}}
        for (kind_, spec), label in zip(checks, named, strict=True)
    ]


def _sequence_checks(
    config: dict[str, Any], name: str, weight: float, at: str
) -> list[dict[str, Any]]:
    """An ``action_sequence`` grader: the ordering it asks for, or a check per action."""
    actions = _strings(
        config.get("expected_actions"), f"{at}/config/expected_actions", "expected_actions"
    )
    if not actions:
        raise SuiteError(
            f"action_sequence grader {name!r} has no expected_actions",
            location=f"{at}/config/expected_actions",
            fix="list the tool calls in order: expected_actions: [Read, Edit]",
        )
    mode = config.get("matching_mode")
    if mode == "in_order_match":
        return [{SEQUENCE: actions, "weight": weight}]
    if mode == "any_order_match":
        counts = {action: actions.count(action) for action in dict.fromkeys(actions)}
        named = [name] if len(counts) == 1 else [f"{name} {n}" for n in range(1, len(counts) + 1)]
        return [
            {
                "tool_used": {
                    "tool": tool,
                    "min": least,
                    "name": label,
                    "weight": weight / len(counts),
                }
            }
            for (tool, least), label in zip(counts.items(), named, strict=True)
        ]
    raise SuiteError(
        f"action_sequence grader {name!r} asks for matching_mode {mode!r}, which skilltest has "
        "no check for (it reads in_order_match and any_order_match)",
        location=f"{at}/config/matching_mode",
        fix="use in_order_match (these calls in this order, others between allowed) or "
        "any_order_match",
    )


def _task_scenario(
    task_path: Path, suite_graders: list[dict[str, Any]], eval_path: Path, options: ReadOptions
) -> dict[str, Any]:
    task = read_yaml(task_path)
    at = f"{task_path}#"
    if not isinstance(task, dict):
        raise SuiteError("a task must be a mapping", location=at, fix="see waza's task format")
    task_id = task.get("id")
    if not isinstance(task_id, str) or not task_id:
        raise SuiteError("a task needs an id", location=f"{at}/id", fix="add id: my-task-001")
    inputs: dict[str, Any] = task["inputs"] if isinstance(task.get("inputs"), dict) else {}
    prompt = inputs.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise SuiteError(
            "a task needs inputs.prompt", location=f"{at}/inputs/prompt", fix="write the prompt"
        )
    checks = list(suite_graders)
    for index, grader in enumerate(task.get("graders") or ()):
        checks += _grader_checks(grader, f"{at}/graders/{index}", options)
    expected: dict[str, Any] = task["expected"] if isinstance(task.get("expected"), dict) else {}
    for key, absent in (("output_contains", False), ("output_not_contains", True)):
        for text in _strings(expected.get(key), f"{at}/expected/{key}", key):
            spec = _final_answer("(?i)" + re.escape(text), absent)
            label = f"expected {key} {text!r}"
            checks.append({"final_answer": {**spec, "name": label}})
    sequences = [check for check in checks if SEQUENCE in check]
    checks = [check for check in checks if SEQUENCE not in check]
    scenario: dict[str, Any] = {"id": task_id, "prompt": prompt, "checks": checks}
    if sequences:
        # The ordering weighs what its graders weigh beside the checks' own weights.
        scenario["expected"] = {"tool_ordering": [entry[SEQUENCE] for entry in sequences]}
        scenario["weights"] = {
            "tool_ordering": sum(entry["weight"] for entry in sequences),
            "checks": sum(next(iter(check.values())).get("weight", 1.0) for check in checks) or 1.0,
        }
    if isinstance(task.get("name"), str):
        scenario["name"] = task["name"]
    if isinstance(task.get("description"), str):
        scenario["description"] = task["description"].strip()
    files = []
    for index, entry in enumerate(inputs.get("files") or ()):
        where = f"{at}/inputs/files/{index}"
        written = entry.get("path") if isinstance(entry, dict) else None
        relative = PurePosixPath(written) if isinstance(written, str) else None
        fixtures = eval_path.parent / FIXTURES
        if relative is None or relative.is_absolute() or ".." in relative.parts:
            raise SuiteError(
                "an input file needs a path inside the fixtures folder",
                location=f"{where}/path",
                fix=f"name a file of {fixtures}: path: sample.py (inline content is not read)",
            )
        if not (fixtures / relative).exists():
            raise SuiteError(
                f"input file {written!r} is not in the fixtures folder (looked at "
                f"{fixtures / relative})",
                location=f"{where}/path",
                fix=f"put it in {fixtures}/, beside the eval file",
            )
        files.append({"path": f"{FIXTURES}/{relative.as_posix()}", "to": relative.as_posix()})
    if files:
        scenario["workspace_files"] = files
    return scenario


def eval_document(data: Any, path: Path, options: ReadOptions | None = None) -> dict[str, Any]:
    """A waza ``eval.yaml`` as a scenario suite document (``scenarios.schema.json``); its
    paths are relative to the eval file's folder.

    Raises:
        SuiteError: no skill, no task file, a task without an id or prompt, an input file not
            in the fixtures folder, or a grader type skilltest does not run (by its name), a
            ``code`` grader among them unless ``options`` allow code graders.
    """
    options = options or ReadOptions()
    skill = data.get("skill")
    if not isinstance(skill, str) or not skill:
        raise SuiteError(
            "the eval names no skill", location=f"{path}#/skill", fix="add skill: NAME"
        )
    suite_graders: list[dict[str, Any]] = []
    for index, grader in enumerate(data.get("graders") or ()):
        suite_graders += _grader_checks(grader, f"{path}#/graders/{index}", options)
    task_files: list[Path] = []
    for index, pattern in enumerate(_strings(data["tasks"], f"{path}#/tasks", "the task globs")):
        found = sorted(glob.glob(str(path.parent / pattern)))
        if not found:
            raise SuiteError(
                f"no task file matches {pattern!r}",
                location=f"{path}#/tasks/{index}",
                fix="a glob relative to the eval file, e.g. tasks/*.yaml",
            )
        task_files += [Path(f) for f in found if Path(f) not in task_files]
    document: dict[str, Any] = {
        "schema_version": 1,
        "name": str(data.get("name") or f"{skill} waza eval"),
        "scenarios": [_task_scenario(task, suite_graders, path, options) for task in task_files],
    }
    # The skill beside the eval file (waza's examples keep SKILL.md there), else found by name.
    document["skill"] = skill
    if (path.parent / "SKILL.md").is_file():
        document["skill_file"] = "SKILL.md"
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    trials = config.get("trials_per_task")
    if isinstance(trials, int) and not isinstance(trials, bool) and trials >= 1:
        document["repetitions"] = trials
    run_config: dict[str, Any] = {}
    timeout = config.get("timeout_seconds")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout >= 1:
        run_config["timeout_ms"] = timeout * 1000
    if isinstance(config.get("model"), str) and config["model"]:
        run_config["model"] = config["model"]
    if run_config:
        document["config"] = run_config
    return document


EVAL_FILE = Format(
    name="waza eval.yaml",
    layer="scenarios",
    command="skilltest scenarios eval.yaml",
    how="scenario ids are the tasks' ids, each grader's patterns, files and rubric a check",
    read=eval_document,
)
"""waza's eval specification."""
