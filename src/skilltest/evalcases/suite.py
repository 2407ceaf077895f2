"""An eval folder as a scenario suite: each case a scenario, each grader a check.

:func:`read_eval_target` finds what a command-line path names (a plugin's eval folder, or one
case folder), the plugin under test (the folder above the eval folder, or ``--plugin-dir``) and
every case; :func:`suite_document` writes the scenario suite those cases are, in the format
``scenarios.schema.json`` validates, so that the scenario layer loads it as it loads any suite:

* ``execution`` becomes the scenario's prompt and ``config`` (``max_turns``, ``timeout_ms``,
  ``model``, ``allowed_tools``: the read-only set plus the case's own, ``disallowed_tools``,
  ``append_system_prompt``, ``env``, ``add_dirs``); ``runs`` its ``repetitions``;
  ``context.scaffold_script`` its ``setup`` and ``context.history_file`` its ``resume``;
* the with-plugin arm loads the plugin; the baseline arm loads none of it, nor a stand-in for
  its MCP servers (``plugin_mcp: with``); a plugin server no mock stands in for is not started
  (``plugin_servers: mocked``), as the CLI does not start it;
* a run cut short by its time limit or turns is graded on what it did (``score_partial``), as
  the CLI grades it;
* each grader is a check of dialect ``plugin_eval`` (:mod:`skilltest.checks.plugin_eval`):
  ``regex`` by target is ``final_answer``, ``trace_matches``, ``files_match``,
  ``mock_calls_match`` or ``file_matches``; ``tool_used``, ``tool_order`` and ``file_exists``
  keep their names; ``llm`` and ``baseline`` are judges; ``weight`` is the check's weight;
* ``arm: with-only`` graders, a ``tool_used`` grader on ``Skill`` without an ``arm``, and (when
  no mock serves the baseline arm) ``mock_calls`` graders without an ``arm`` are indicators of
  the with-plugin arm, shown and never scored; when every grader is one, they are all scored in
  both arms, as the CLI does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import InputError, SuiteError
from skilltest.evalcases.mocks import MockServer, mock_layers, read_mocks
from skilltest.evalcases.model import READ_ONLY_TOOLS, EvalCase, Grader
from skilltest.evalcases.reader import find_cases, is_case_folder, read_case
from skilltest.plugins import MANIFEST, Plugin, load_plugin
from skilltest.suite.repository import Repository, repository_of

DEFAULT_EVAL_FOLDER = "evals"
MODEL_SCRIPT = "model-script.yaml"
"""The emulator's model script for an eval folder, when it has one (``--script`` overrides)."""
OUTPUT_FOLDER = "output"
"""Raw transcripts of an eval folder's runs go to ``<eval folder>/output/``."""

REGEX_KINDS = {
    "last_message": "final_answer",
    "trace": "trace_matches",
    "files": "files_match",
    "mock_calls": "mock_calls_match",
}


@dataclass(frozen=True)
class EvalTarget:
    """What a command-line path names: an eval folder, all of it or one case."""

    root: Path
    """The eval folder (``<plugin>/evals``)."""
    cases: tuple[EvalCase, ...]
    """The cases to run, in path order."""
    plugin: Plugin | None
    """The plugin under test."""
    mocks: dict[str, tuple[MockServer, ...]]
    """Each case's mock servers, by case name."""
    layers: dict[str, tuple[Path, ...]]
    """Each case's ``mocks/`` folders, the eval folder's first, by case name."""
    repository: Repository
    """Where every file the cases name must lie: the repository of the plugin holding them
    (:func:`skilltest.suite.repository.repository_of`)."""
    notes: tuple[str, ...] = ()
    """What the mocks do not cover (a server folder with no responder)."""

    @property
    def model_script(self) -> Path | None:
        """``<eval folder>/model-script.yaml``, when there is one."""
        path = self.root / MODEL_SCRIPT
        return path if path.is_file() else None


def _plugin_root(folder: Path) -> Path | None:
    for candidate in (folder, *folder.parents):
        if (candidate / MANIFEST).is_file():
            return candidate
    return None


def plugin_eval_folder(plugin_root: Path, manifest: Mapping[str, Any] | None = None) -> Path:
    """A plugin's eval folder: the one its manifest names under ``experimental.evals``, else
    ``evals/``."""
    if manifest is None:
        try:
            manifest = json.loads((plugin_root / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            manifest = {}
    experimental = manifest.get("experimental") if isinstance(manifest, Mapping) else None
    named = experimental.get("evals") if isinstance(experimental, Mapping) else None
    return plugin_root / str(named or DEFAULT_EVAL_FOLDER)


def names_eval_cases(path: Path) -> bool:
    """Whether a command-line path names eval cases: a case folder (or its ``case.yaml`` or
    ``prompt.md``), a plugin's eval folder (or an ``evals/`` folder) holding case folders, or a
    plugin whose eval folder holds some. A folder that merely has eval cases deep below it (a
    repository's ``tests/``) is a folder of suites."""
    if path.is_file():
        return path.name in ("case.yaml", "prompt.md") and is_case_folder(path.parent)
    if not path.is_dir():
        return False
    if is_case_folder(path):
        return True
    if (path / MANIFEST).is_file():
        folder = plugin_eval_folder(path)
        return folder.is_dir() and bool(find_cases(folder))
    eval_folder = path.name == DEFAULT_EVAL_FOLDER or (path.parent / MANIFEST).is_file()
    return eval_folder and bool(find_cases(path))


def read_eval_target(path: Path, *, plugin_dir: Path | None = None) -> EvalTarget:
    """The cases ``path`` names, the plugin they test and their mocks.

    Args:
        path: An eval folder, a case folder, or a case's ``case.yaml`` or ``prompt.md``.
        plugin_dir: ``--plugin-dir``: the plugin under test, instead of the folder above the
            eval folder.

    Raises:
        SuiteError: no case there, no plugin to test, or a case or mock the CLI would refuse.
    """
    folder = path.parent if path.is_file() else path
    folder = folder.resolve()
    if (folder / MANIFEST).is_file() and not is_case_folder(folder):
        folder = plugin_eval_folder(folder).resolve()  # a plugin stands for its eval folder
    found_root = _plugin_root(folder.parent if is_case_folder(folder) else folder)
    plugin_root = plugin_dir.resolve() if plugin_dir is not None else found_root
    # The cases, their mocks and the plugin holding them are read, copied into runs and sent to
    # the model: no link among them may lead out of their repository (the plugin's, when the
    # cases are in one). A plugin given with --plugin-dir is the person's own choice.
    repository = repository_of(found_root or folder)
    if found_root is not None and plugin_dir is None:
        repository.check_links(found_root, location=str(found_root))
    if plugin_root is None:
        raise SuiteError(
            "eval cases test a plugin, and no plugin holds this folder",
            location=str(path),
            fix="run the cases of a plugin's evals/ folder (the plugin holds "
            ".claude-plugin/plugin.json), or pass --plugin-dir PLUGIN",
        )
    try:
        plugin = load_plugin(plugin_root, location="--plugin-dir" if plugin_dir else str(path))
    except InputError as exc:
        raise SuiteError(exc.message, location=exc.location, fix=exc.fix) from exc
    root = _eval_root(folder, found_root, plugin)
    repository.check_links(root, location=str(root))
    case_folders = find_cases(folder)
    if not case_folders:
        raise SuiteError(
            "no eval case here (a case folder holds case.yaml, or prompt.md and graders/*.md)",
            location=str(path),
            fix="pass a plugin's evals/ folder or one of its case folders",
        )
    cases, mocks, layers, notes = [], {}, {}, []
    for case_folder in case_folders:
        case = read_case(case_folder, plugin_root=plugin.root)
        layers[case.name] = mock_layers(case_folder, root)
        servers, found_notes = read_mocks(layers[case.name])
        cases.append(case)
        mocks[case.name] = servers
        notes += [note for note in found_notes if note not in notes]
    return EvalTarget(root, tuple(cases), plugin, mocks, layers, repository, tuple(notes))


def _eval_root(folder: Path, plugin_root: Path | None, plugin: Plugin) -> Path:
    """The eval folder holding ``folder``: the plugin's eval folder (:func:`plugin_eval_folder`)
    when ``folder`` is in it, else the folder of the plugin ``folder`` is in, else the folder
    itself (or, for a case folder, the one holding it)."""
    if plugin_root is not None:
        candidate = plugin_eval_folder(plugin_root, plugin.manifest).resolve()
        if folder == candidate or candidate in folder.parents:
            return candidate
        if plugin_root in folder.parents:
            return plugin_root / folder.relative_to(plugin_root).parts[0]
    return folder.parent if is_case_folder(folder) else folder


# --- the scenario suite document -----------------------------------------------------------


def registered_name(plugin: Plugin | None, server: str) -> tuple[str, bool]:
    """The name a mock server gets in the run and whether it stands in for a plugin server:
    ``plugin_<plugin>_<server>`` when the plugin declares the server (by its key or by that
    name), else its own folder's name."""
    if plugin is not None:
        for declared in plugin.mcp_servers:
            segment = f"plugin_{plugin.name}_{declared.name}"
            if server in (declared.name, segment):
                return segment, True
    return server, False


def _indicator(grader: Grader, mock_calls_with_only: bool) -> bool:
    """Whether the CLI treats a grader as an indicator of the with-plugin arm."""
    if grader.arm == "with-only":
        return True
    if grader.arm is None and grader.type == "tool_used" and grader.fields.get("tool") == "Skill":
        return True
    if mock_calls_with_only and grader.arm is None:
        focus = grader.fields.get("target" if grader.type == "regex" else "focus")
        return grader.type in ("regex", "llm") and focus == "mock_calls"
    return False


def _focus(value: Any) -> Any:
    if isinstance(value, dict):
        return {"file": value["path"]}
    return value or "last_message"


def grader_check(grader: Grader, case: EvalCase, *, indicator: bool) -> dict[str, Any]:
    """One grader as a check entry of a scenario suite."""
    fields = dict(grader.fields)
    common: dict[str, Any] = {"name": grader.name, "weight": grader.weight}
    common["dialect"] = "plugin_eval"
    if indicator:
        common.update(arm="with", scored=False)
    if grader.type == "regex":
        target = fields.get("target") or "last_message"
        spec: dict[str, Any] = {
            "pattern": fields["pattern"],
            "flags": fields.get("flags") or "",
            "match": fields.get("match") or "contains",
        }
        if isinstance(target, dict):
            return {"file_matches": {"path": target["path"], **spec, **common}}
        return {REGEX_KINDS[target]: {**spec, **common}}
    if grader.type == "tool_used":
        spec = {"tool": fields["tool"], "min": fields.get("min", 1)}
        for key in ("input_match", "max"):
            if fields.get(key) is not None:
                spec[key] = fields[key]
        return {"tool_used": {**spec, **common}}
    if grader.type == "tool_order":
        return {"tool_order": {"before": fields["before"], "after": fields["after"], **common}}
    if grader.type == "file_exists":
        spec = {"path": fields["path"], "exists": fields.get("exists", True)}
        return {"file_exists": {**spec, **common}}
    if grader.type == "llm":
        spec = {"criteria": fields["criteria"], "focus": _focus(fields.get("focus")), "votes": 3}
        return {"judge": {**spec, **common}}
    baseline = (case.folder / str(fields["baseline_file"])).resolve()
    spec = {"criteria": fields["criteria"], "baseline_file": str(baseline), "votes": 3}
    return {"judge": {**spec, **common}}


def case_scenario(
    case: EvalCase,
    mocks: Sequence[MockServer],
    plugin: Plugin | None,
    layers: Sequence[Path] = (),
) -> dict[str, Any]:
    """One case as a scenario entry (``layers``: its ``mocks/`` folders)."""
    execution = case.execution
    standalone = [server for server in mocks if not registered_name(plugin, server.name)[1]]
    # With no mock serving the baseline arm, a mock_calls grader could only pass in one arm.
    with_only_calls = bool(mocks) and not standalone
    marked = [_indicator(grader, with_only_calls) for grader in case.graders]
    every = all(marked)
    config: dict[str, Any] = {
        "max_turns": execution.max_turns,
        "timeout_ms": execution.timeout_seconds * 1000,
        "allowed_tools": list(dict.fromkeys([*READ_ONLY_TOOLS, *execution.allowed_tools])),
    }
    if execution.disallowed_tools:
        config["disallowed_tools"] = list(execution.disallowed_tools)
    if execution.model:
        config["model"] = execution.model
    if execution.append_system_prompt:
        config["append_system_prompt"] = execution.append_system_prompt
    if execution.env:
        config["env"] = dict(execution.env)
    if case.context.add_dirs:
        config["add_dirs"] = [str(path) for path in case.context.add_dirs]
    scenario: dict[str, Any] = {
        "id": case.name,
        "prompt": execution.prompt,
        "repetitions": case.runs,
        "config": config,
        "checks": [
            grader_check(grader, case, indicator=flag and not every)
            for grader, flag in zip(case.graders, marked, strict=True)
        ],
    }
    # Always written, so that no mocks/ folder beside the eval folder is read by default.
    scenario["mocks"] = [str(layer) for layer in layers]
    if case.description:
        scenario["description"] = case.description
    if case.context.scaffold_script is not None:
        scenario["setup"] = str(case.context.scaffold_script)
    if case.context.history_file is not None:
        scenario["resume"] = str(case.context.history_file)
    return scenario


def suite_document(target: EvalTarget, *, model_script: Path | None = None) -> dict[str, Any]:
    """The scenario suite the target's cases are (paths absolute)."""
    plugin = target.plugin
    script = model_script or target.model_script
    document: dict[str, Any] = {
        "name": f"{plugin.name if plugin else target.root.name} eval cases",
        "plugin_mcp": "with",
        "plugin_servers": "mocked",
        "score_partial": True,
        "require_skills_fired": False,
        "scenarios": [
            case_scenario(
                case,
                target.mocks.get(case.name, ()),
                plugin,
                target.layers.get(case.name, ()),
            )
            for case in target.cases
        ],
    }
    if plugin is not None:
        document["plugin"] = str(plugin.root.resolve())
    if script is not None:
        document["model_script"] = str(script.resolve())
    return document


def case_locations(target: EvalTarget) -> list[str]:
    """Where each scenario of :func:`suite_document` comes from, for messages."""
    return [case.location for case in target.cases]
