"""Reading eval case folders: ``case.yaml``, ``prompt.md`` and ``graders/*.md``, combined.

A case folder holds ``case.yaml``, or ``prompt.md`` (its frontmatter takes the keys of
case.yaml's top level and of its ``execution``; its body is the prompt) with ``graders/*.md``
(each file one grader named after it: frontmatter ``type:`` and the grader's fields, the body
filling ``criteria`` for ``llm`` and ``baseline`` and ``pattern`` for ``regex``), or both: the
markdown files then win over case.yaml's keys, add their graders after its graders, and add
their ``disallowed_tools`` to its own. A grader file without frontmatter is not a grader.

Everything is checked as Claude Code 2.1.328 checks it, with its words where they help, and each
error names the file, the place in it and the fix: the JSON Schema ``evalcase.schema.json``
(types and limits of every field), then what the CLI checks besides (a prompt, graders with
unique names, ``EVAL_*`` variables only, paths that stay in the case folder and exist, no
template placeholder left) and what skilltest checks early that the CLI finds only when
grading (patterns that compile).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any, cast

from skilltest.errors import SuiteError
from skilltest.evalcases.frontmatter import read_markdown
from skilltest.evalcases.model import (
    DEFAULT_MAX_TURNS,
    DEFAULT_RUNS,
    DEFAULT_TIMEOUT_SECONDS,
    GRADER_TYPES,
    Context,
    EvalCase,
    Execution,
    Grader,
    GraderType,
)
from skilltest.javascript import compile_js_pattern
from skilltest.suite.loader import read_yaml, validate

SCHEMA = "evalcase"
SUPPORTED_MAJOR = 1
"""The newest ``schema_version`` major this reads (as 2.1.328)."""
DEFAULT_VERSION = "1.1"
"""The version of a case written only as markdown files."""

TOP_KEYS = ("schema_version", "name", "description", "tags", "plugins", "runs", "expected_outcome")
EXECUTION_KEYS = (
    "model",
    "max_turns",
    "timeout_seconds",
    "allowed_tools",
    "disallowed_tools",
    "artifact_publish",
    "growthbook_overrides",
    "append_system_prompt",
    "env",
)
"""The frontmatter keys of prompt.md: case.yaml's top level and its ``execution``."""

PROMPT_PLACEHOLDER = "TODO: describe what the agent should do"
CRITERIA_PLACEHOLDER = "TODO: describe what a successful response looks like"
"""What ``claude plugin eval init --bare`` leaves for the author to fill in."""

BODY_FIELD = {"llm": "criteria", "baseline": "criteria", "regex": "pattern"}
"""The field a grader file's body fills."""

SKIPPED_FOLDERS = frozenset({"mocks", "results", "output", "node_modules", "__pycache__"})
"""Folders of an eval folder that never hold cases."""


def is_case_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a case: ``case.yaml``, ``prompt.md`` or ``graders/``."""
    return (
        (folder / "case.yaml").is_file()
        or (folder / "prompt.md").is_file()
        or (folder / "graders").is_dir()
    )


def find_cases(root: Path) -> list[Path]:
    """The case folders at and below ``root``, in path order (a case's own folders and
    ``mocks/``, ``results/``, ``output/`` and hidden folders are not searched)."""
    if is_case_folder(root):
        return [root]
    found: list[Path] = []
    for child in sorted(p for p in root.iterdir() if p.is_dir()):
        if child.name.startswith(".") or child.name in SKIPPED_FOLDERS:
            continue
        found.extend(find_cases(child))
    return found


def read_case(folder: Path, *, plugin_root: Path | None = None) -> EvalCase:
    """Reads and checks one case folder.

    Args:
        folder: The case folder.
        plugin_root: The plugin the case tests; files a case names may also be in it.

    Raises:
        SuiteError: anything the CLI would refuse, named with its file, place and fix.
        PatternError: a pattern that does not compile.
    """
    case_file, prompt_file = folder / "case.yaml", folder / "prompt.md"
    data: dict[str, Any] | None = None
    if case_file.is_file():
        loaded = read_yaml(case_file)
        if not isinstance(loaded, dict):
            raise SuiteError(
                "case.yaml must be a YAML object",
                location=f"{case_file}#",
                fix='write keys such as schema_version: "1.0", name, execution and graders',
            )
        _check_version(loaded, case_file)
        validate(loaded, SCHEMA, case_file)
        data = loaded
    top, execution, prompt, md_graders = _markdown_parts(folder, prompt_file)
    if data is None and prompt is None and not md_graders and not top and not execution:
        raise SuiteError(
            "not an eval case: no case.yaml, and no prompt.md or graders/*.md with content",
            location=str(folder),
            fix="write prompt.md (the prompt, with frontmatter such as max_turns) and "
            "graders/<name>.md, or case.yaml",
        )
    merged: dict[str, Any] = dict(data or {"schema_version": DEFAULT_VERSION, "name": folder.name})
    if "schema_version" in top:
        _check_version(top, prompt_file)
    merged.update(top)
    base_execution = dict(merged.get("execution") or {})
    disallowed = [
        *(base_execution.get("disallowed_tools") or ()),
        *(execution.get("disallowed_tools") or ()),
    ]
    merged["execution"] = {**base_execution, **execution}
    if disallowed:
        merged["execution"]["disallowed_tools"] = disallowed
    if prompt is not None:
        merged["execution"]["prompt"] = prompt
    location = str(case_file if data is not None else prompt_file)
    graders = [
        *(
            _grader(raw, f"{case_file}#/graders/{index}")
            for index, raw in enumerate((data or {}).get("graders") or ())
        ),
        *md_graders,
    ]
    name = str(merged.get("name") or folder.name)
    return _checked_case(folder, name, merged, graders, location, plugin_root)


def _check_version(data: Mapping[str, Any], path: Path) -> None:
    version = data.get("schema_version")
    if not isinstance(version, str):
        raise SuiteError(
            'missing required field schema_version (e.g. "1.0")',
            location=f"{path}#/schema_version",
            fix='add schema_version: "1.0" (quoted: a string)',
        )
    major = version.split(".", 1)[0].strip()
    if not major.isdigit():
        raise SuiteError(
            f'schema_version "{version}" is not a valid version string',
            location=f"{path}#/schema_version",
            fix='write schema_version: "1.0"',
        )
    if int(major) > SUPPORTED_MAJOR:
        raise SuiteError(
            f'schema_version "{version}" requires a newer Claude Code (this binary supports up '
            f"to {SUPPORTED_MAJOR}.x)",
            location=f"{path}#/schema_version",
            fix=f'write schema_version: "{SUPPORTED_MAJOR}.0", with only the fields it has',
        )


def _markdown_parts(
    folder: Path, prompt_file: Path
) -> tuple[dict[str, Any], dict[str, Any], str | None, list[Grader]]:
    """prompt.md's top-level keys, execution keys and body, and the graders of graders/*.md."""
    top: dict[str, Any] = {}
    execution: dict[str, Any] = {}
    prompt: str | None = None
    if prompt_file.is_file():
        markdown = read_markdown(prompt_file)
        for key, value in markdown.frontmatter.items():
            if key in TOP_KEYS:
                top[key] = value
            elif key in EXECUTION_KEYS:
                execution[key] = value
            else:
                raise SuiteError(
                    f'unknown frontmatter key "{key}" (expected one of: '
                    + ", ".join([*TOP_KEYS, *EXECUTION_KEYS])
                    + ")",
                    location=f"{prompt_file}:{markdown.line_of(str(key))}",
                    fix="use one of those keys (graders go in graders/<name>.md)",
                )
        validate(markdown.frontmatter, SCHEMA, prompt_file, definition="prompt_frontmatter")
        body = markdown.body.strip()
        prompt = body or None
    graders: list[Grader] = []
    grader_folder = folder / "graders"
    if grader_folder.is_dir():
        for path in sorted(p for p in grader_folder.iterdir() if p.suffix == ".md" and p.is_file()):
            markdown = read_markdown(path)
            if not markdown.had_frontmatter:
                continue  # not a grader (a note beside them), as the CLI skips it
            fields = dict(markdown.frontmatter)
            kind = fields.get("type")
            if not isinstance(kind, str):
                raise SuiteError(
                    'frontmatter must include "type:" (regex | tool_order | tool_used | '
                    "file_exists | llm | baseline)",
                    location=f"{path}:1",
                    fix="add type: llm (or another grader type) to the frontmatter",
                )
            body = markdown.body.strip()
            target = BODY_FIELD.get(kind)
            if target and fields.get(target) is None and body:
                fields[target] = body
            fields.setdefault("name", path.stem)
            validate(fields, SCHEMA, path, definition="grader")
            graders.append(_grader(fields, str(path)))
    return top, execution, prompt, graders


def _grader(raw: Mapping[str, Any], location: str) -> Grader:
    fields = {k: v for k, v in raw.items() if k not in ("name", "type", "weight", "arm")}
    kind = str(raw["type"])
    assert kind in GRADER_TYPES
    arm = raw.get("arm")
    return Grader(
        name=str(raw["name"]),
        type=cast(GraderType, kind),
        fields=fields,
        location=location,
        weight=float(raw.get("weight", 1)),
        arm=arm if arm in ("with-only", "both") else None,
    )


def _checked_case(
    folder: Path,
    name: str,
    merged: dict[str, Any],
    graders: list[Grader],
    location: str,
    plugin_root: Path | None,
) -> EvalCase:
    """The merged case, checked as the CLI checks it after merging."""
    execution: dict[str, Any] = merged["execution"]
    context: dict[str, Any] = dict(merged.get("context") or {})
    prompt = execution.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise SuiteError(
            "context.history_file requires execution.prompt (the resumed session needs a next turn)"
            if context.get("history_file")
            else "execution.prompt is required (a prompt.md body, or execution.prompt in "
            "case.yaml)",
            location=location,
            fix="write the prompt as prompt.md's body, or as execution.prompt in case.yaml",
        )
    if PROMPT_PLACEHOLDER in prompt:
        raise SuiteError(
            f'the prompt is still the blank `init` template — replace the "{PROMPT_PLACEHOLDER}" '
            "line with the user prompt to test",
            location=location,
            fix="write the user prompt the case tests",
        )
    if not graders:
        raise SuiteError(
            "the case has no grader (at least one is required)",
            location=location,
            fix="add graders/<name>.md with frontmatter type: ... (or graders: in case.yaml)",
        )
    seen: dict[str, str] = {}
    for grader in graders:
        if grader.name in seen:
            raise SuiteError(
                f'duplicate grader name "{grader.name}" (also at {seen[grader.name]})',
                location=grader.location,
                fix="give each grader its own name",
            )
        seen[grader.name] = grader.location
        text = str(grader.fields.get("criteria") or grader.fields.get("pattern") or "")
        if CRITERIA_PLACEHOLDER in text:
            raise SuiteError(
                f'grader "{grader.name}" is still the blank `init` template — replace the '
                f'"{CRITERIA_PLACEHOLDER}" line with concrete pass criteria',
                location=grader.location,
                fix="write what a passing run shows, as checkable claims",
            )
        _check_grader(grader, folder, plugin_root)
    env = execution.get("env") or {}
    for key in env:
        if not str(key).startswith("EVAL_") or not all(
            c.isupper() or c.isdigit() or c == "_" for c in str(key)
        ):
            raise SuiteError(
                f'execution.env key "{key}" is not allowed — only EVAL_* keys can be set from '
                "case.yaml",
                location=location,
                fix="rename it EVAL_<NAME> (upper case, digits, _), or set it in your shell",
            )
    roots = (folder, *((plugin_root,) if plugin_root is not None else ()))
    return EvalCase(
        name=name,
        folder=folder,
        location=location,
        execution=Execution(
            prompt=prompt.strip(),
            max_turns=int(execution.get("max_turns", DEFAULT_MAX_TURNS)),
            timeout_seconds=int(execution.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
            model=execution.get("model"),
            allowed_tools=tuple(execution.get("allowed_tools") or ()),
            disallowed_tools=tuple(execution.get("disallowed_tools") or ()),
            append_system_prompt=execution.get("append_system_prompt") or None,
            env={str(k): str(v) for k, v in env.items()},
        ),
        graders=tuple(graders),
        context=Context(
            scaffold_script=_case_path(
                context.get("scaffold_script"), "context.scaffold_script", name, (folder,), location
            ),
            history_file=_case_path(
                context.get("history_file"), "context.history_file", name, roots, location
            ),
            add_dirs=tuple(
                _case_path(entry, f"context.add_dirs/{i}", name, roots, location, folder_ok=True)
                for i, entry in enumerate(context.get("add_dirs") or ())
            ),
        ),
        runs=int(merged.get("runs", DEFAULT_RUNS)),
        description=merged.get("description"),
        tags=tuple(merged.get("tags") or ()),
        expected_outcome=merged.get("expected_outcome"),
    )


def _case_path(
    value: Any,
    key: str,
    case: str,
    roots: tuple[Path, ...],
    location: str,
    *,
    folder_ok: bool = False,
) -> Any:
    """A path a case names, resolved against the case folder; it must stay inside the case
    folder (or the plugin) and exist."""
    if value is None:
        return None
    text = str(value)
    resolved = (roots[0] / text).resolve()
    inside = [root.resolve() for root in roots]
    if PurePosixPath(text).is_absolute() or not any(
        resolved == r or r in resolved.parents for r in inside
    ):
        raise SuiteError(
            f'case "{case}": path "{text}" escapes the case directory (`..` or an absolute path) '
            "— it must name something inside it",
            location=f"{location} ({key})",
            fix="give a path relative to the case folder, inside it",
        )
    if not resolved.exists() or (not folder_ok and not resolved.is_file()):
        raise SuiteError(
            f'case "{case}": path "{text}" does not exist',
            location=f"{location} ({key})",
            fix="create the file, or fix the path (relative to the case folder)",
        )
    return resolved


def _check_grader(grader: Grader, folder: Path, plugin_root: Path | None) -> None:
    """What the CLI finds only when grading: patterns that do not compile, files that are not
    there."""
    fields = grader.fields
    where = grader.location
    if grader.type == "regex":
        compile_js_pattern(fields["pattern"], str(fields.get("flags") or ""), f"{where} (pattern)")
    for key in ("before", "after"):
        ref = fields.get(key)
        if isinstance(ref, dict) and ref.get("input_match") is not None:
            compile_js_pattern(ref["input_match"], "", f"{where} ({key}.input_match)")
    if grader.type == "tool_used" and fields.get("input_match") is not None:
        compile_js_pattern(fields["input_match"], "", f"{where} (input_match)")
    if grader.type == "tool_used":
        low, high = fields.get("min", 1), fields.get("max")
        if high is not None and high < low:
            raise SuiteError(
                f"max {high} is below min {low}: no run can pass",
                location=where,
                fix="give max at least min",
            )
    if grader.type == "baseline":
        roots = (folder, *((plugin_root,) if plugin_root is not None else ()))
        _case_path(fields["baseline_file"], "baseline_file", grader.name, roots, where)
    for key in ("target", "focus"):
        target = fields.get(key)
        if isinstance(target, dict):
            path = PurePosixPath(str(target.get("path", "")))
            if path.is_absolute() or ".." in path.parts:
                raise SuiteError(
                    f'{key}.path "{path}" leaves the run directory',
                    location=where,
                    fix="give a path relative to the run's working directory",
                )
