"""``skilltest validate``: checks suites and model scripts without calling any model."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from skilltest.cli import help_line
from skilltest.cli.plugin_options import add_plugin_dir_option, check_plugin_choice
from skilltest.errors import InputError, ModelScriptError, WorldError
from skilltest.suite.ids import check_unique_scenarios
from skilltest.suite.loader import discover_suites, read_yaml
from skilltest.suite.todo import Todo, todos

if TYPE_CHECKING:
    from skilltest.world.model import World

DEFAULT_PATHS = (
    Path("tests/skill-pressure"),
    Path("tests/scenarios"),
    Path("tests/triggers"),
    Path("tests/model-scripts"),
)


class _LayerSuite(Protocol):
    @property
    def model_script(self) -> Path | None: ...


_Suite = TypeVar("_Suite", bound=_LayerSuite)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help=help_line("validate"),
        description=(
            "Validates pressure suites, scenario suites, emulator model scripts, world files "
            "(fake services: routes, fixtures, profiles, and the fakes against the provider's "
            "OpenAPI description a service names with `openapi:`) and Claude Code eval cases (a "
            "plugin's evals/ folder, or one case folder, with its mocks/): schema, "
            "duplicate ids and keys, the limits on size, nesting and aliases, skills that "
            "exist, the model script a suite names, regexes that compile and do not backtrack "
            "catastrophically; and lists each `# TODO:` comment left to fill in, in the model "
            "script a suite names too (with its line, "
            "exit 2). The kind of each file is read from its content."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="files, folders or suite names (lgtm: every lgtm.yaml/.yml below the default "
        "folders; default: tests/skill-pressure, tests/scenarios, tests/triggers, "
        "tests/model-scripts)",
    )
    parser.add_argument("--skills-dir", type=Path, help="folder holding <skill>/SKILL.md")
    add_plugin_dir_option(parser)
    parser.add_argument("--skill", help="skill name for suites that do not name one")
    parser.add_argument(
        "--allow-code-graders",
        action="store_true",
        help="read a waza eval.yaml's `code` graders as `skilltest scenarios "
        "--allow-code-graders` runs them (without it they are refused)",
    )
    parser.set_defaults(handler=run)


MODEL_SCRIPT_KEYS = frozenset({"rules", "default", "faults", "seed", "model", "schema_version"})
"""Top-level keys of a model script; a suite has ``scenarios`` instead."""


PRESSURE_SCENARIO_KEYS = frozenset(
    {
        "with_skill",
        "without_skill",
        "threshold",
        "max_tokens",
        "temperature",
        "model",
        "prompt_suffix",
        "baseline_red",
    }
)
"""Keys only a pressure suite's scenarios have."""
SCENARIOS_SCENARIO_KEYS = frozenset(
    {
        "expected",
        "turns",
        "expected_skills",
        "config",
        "weights",
        "workspace",
        "comparison",
        "canary",
        "require_skills_fired",
    }
)
"""Keys only a scenario suite's scenarios have."""


def file_kind(data: Any, path: Path | None = None) -> str:
    """``pressure``, ``scenarios``, ``triggers``, ``model-script``, ``world`` or ``openapi`` (an
    API description a world names), from a file's content (a trigger suite has ``queries:``; a
    foreign eval format is its layer's).

    A suite whose scenarios have no key of one layer only (a pressure scenario that lacks
    ``with_skill``) is taken for a pressure suite when a folder on its path says so, as
    ``tests/skill-pressure/`` does, so that the error is the one running it would give.
    """
    from skilltest.formats.detect import foreign_format

    found = foreign_format(data)
    if found is not None:
        return found.layer
    if isinstance(data, dict) and "scenarios" not in data and "queries" in data:
        return "triggers"
    if isinstance(data, dict) and "scenarios" not in data and data.keys() & MODEL_SCRIPT_KEYS:
        return "model-script"
    if isinstance(data, dict) and "scenarios" not in data and "services" in data:
        return "world"
    if isinstance(data, dict) and "scenarios" not in data and "openapi" in data:
        return "openapi"
    scenarios = data.get("scenarios") if isinstance(data, dict) else None
    keys: set[str] = set()
    for scenario in scenarios if isinstance(scenarios, list) else []:
        if isinstance(scenario, dict):
            keys.update(str(key) for key in scenario)
    if keys & PRESSURE_SCENARIO_KEYS:
        return "pressure"
    if keys & SCENARIOS_SCENARIO_KEYS:
        return "scenarios"
    folders = path.resolve().parent.parts if path is not None else ()
    return "pressure" if any("pressure" in folder for folder in folders) else "scenarios"


def _loaders(
    args: argparse.Namespace, scripts: dict[Path, object]
) -> dict[str, Callable[[Path], object]]:
    from skilltest.pressure.suite import Overrides as PressureOverrides
    from skilltest.pressure.suite import load_pressure_suite
    from skilltest.scenarios.suite import Overrides

    def layer_suite(
        path: Path, load: Callable[..., _Suite], overrides: Callable[..., object]
    ) -> _Suite:
        # A pressure or scenario suite, with the skill and plugin the command line gives.
        suite = load(
            path,
            skills_dir=args.skills_dir,
            skill_name=args.skill,
            overrides=overrides(plugin_dir=args.plugin_dir, plugin_name=args.plugin),
        )
        _check_model_script(path, suite.model_script, scripts)
        return suite

    def pressure(path: Path) -> object:
        return layer_suite(path, load_pressure_suite, PressureOverrides)

    def scenarios(path: Path) -> object:
        from skilltest.scenarios.suite import load_scenario_suite

        allowed = bool(getattr(args, "allow_code_graders", False))
        suite = layer_suite(
            path,
            load_scenario_suite,
            lambda **given: Overrides(**given, allow_code_graders=allowed),
        )
        # The servers its scenarios start must answer, and its rubrics name tools that exist.
        from skilltest.scenarios.tools import check_scenario_tools

        check_scenario_tools([s for s in suite.scenarios if not s.skip])
        # Its world's fakes against their API descriptions (the world, loaded once, is shared).
        for world in {id(s.world): s.world for s in suite.scenarios if s.world}.values():
            _check_contract(world)
        return suite

    def triggers(path: Path) -> object:
        from skilltest.triggers.suite import load_trigger_suite

        suite = load_trigger_suite(path, skills_dir=args.skills_dir)
        _check_model_script(path, suite.model_script, scripts)
        return suite

    def model_script(path: Path) -> object:
        return _load_model_script(path, scripts)

    def world(path: Path) -> object:
        from skilltest.world.model import load_world

        loaded = load_world(path)
        _check_contract(loaded)
        return loaded

    def openapi(path: Path) -> object:
        # An API description a world names, met in a folder of worlds: valid OpenAPI 3.0/3.1.
        from skilltest.world.contract import load_description

        return load_description(path)

    return {
        "pressure": pressure,
        "scenarios": scenarios,
        "triggers": triggers,
        "model-script": model_script,
        "world": world,
        "openapi": openapi,
    }


class _ContractBroken(WorldError):
    """A world whose fakes differ from their API descriptions: one message per difference."""

    def __init__(self, findings: list[str]):
        self.findings = findings
        super().__init__("\n".join(findings))


def _check_contract(world: World) -> None:
    """Holds each fake that names an API description (``openapi:``) to it."""
    if not any(service.openapi is not None for service in world.services):
        return  # the validators are imported only for a world that needs them
    from skilltest.world.contract import check_contract

    findings = check_contract(world)
    if findings:
        raise _ContractBroken([str(finding) for finding in findings])


def _load_model_script(path: Path, loaded: dict[Path, object]) -> object:
    """The model script at ``path``, read and checked once per command: a script several
    suites name, also met in the folder of scripts, is in ``loaded`` (by its resolved path)
    after the first time. One that fails is read again each time, and says so each time. The
    lines of its rules, which only a run's answers are traced to, are not looked for."""
    from skilltest.emulator.script import ModelScript

    resolved = path.resolve()
    if resolved not in loaded:
        loaded[resolved] = ModelScript.load(path, lines=False)
    return loaded[resolved]


def _check_model_script(suite: Path, script: Path | None, loaded: dict[Path, object]) -> None:
    """Loads the model script a suite points to: running the suite would refuse a bad one."""
    if script is None:
        return
    try:
        _load_model_script(script, loaded)
    except ModelScriptError as exc:
        raise ModelScriptError(
            f"{exc.message}\n  (the model script of {suite}#/model_script)",
            location=exc.location,
            fix=exc.fix,
        ) from exc


def _scenario_entries(suite: object) -> list[tuple[str, str, str]]:
    """``(skill, id, place)`` of each scenario of a loaded suite, as the runs check them."""
    from skilltest.pressure.suite import PressureSuite
    from skilltest.scenarios.suite import ScenarioSuite

    if isinstance(suite, PressureSuite):
        return [(suite.skill.name, s.id, s.location) for s in suite.scenarios]
    if isinstance(suite, ScenarioSuite):
        return [(s.label, s.id, s.location) for s in suite.scenarios]
    return []


def _eval_cases(path: Path, args: argparse.Namespace, scripts: dict[Path, object]) -> str:
    """Checks a plugin's eval cases as ``skilltest scenarios`` loads them; says how many."""
    from skilltest.scenarios.suite import Overrides, load_eval_cases
    from skilltest.scenarios.tools import check_scenario_tools

    suite = load_eval_cases(path, overrides=Overrides(plugin_dir=args.plugin_dir))
    _check_model_script(path, suite.model_script, scripts)
    check_scenario_tools([s for s in suite.scenarios if not s.skip])
    count = len(suite.scenarios)
    return f"eval cases: {count}" + "".join(f"; {note}" for note in suite.notes)


def _shown(path: Path) -> Path:
    """``path`` relative to the current folder when it lies below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return path


def _names_eval_cases(path: Path) -> bool:
    # Asked only of a path given on the command line: reading eval cases imports a good deal.
    from skilltest.evalcases import names_eval_cases

    return names_eval_cases(path)


def run(args: argparse.Namespace) -> int:
    from skilltest.formats.detect import foreign_format

    check_plugin_choice(args)
    existing = [p for p in DEFAULT_PATHS if p.exists()]
    cases = [path for path in args.paths if _names_eval_cases(path)]
    named = [path for path in args.paths if path not in cases]
    files = (
        discover_suites(
            named or existing,
            DEFAULT_PATHS[0],
            example="tests/skill-pressure/<skill>.yaml",
            name_dirs=existing or DEFAULT_PATHS,
        )
        if named or not cases
        else []
    )
    scripts: dict[Path, object] = {}  # the model scripts loaded, each once
    loaders = _loaders(args, scripts)
    problems: list[str] = []
    invalid = 0
    left: list[Todo] = []
    for path in cases:
        try:
            what = _eval_cases(path, args, scripts)
        except InputError as exc:
            problems.append(str(exc))
            invalid += 1
            print(f"FAIL {path}")
            continue
        print(f"ok   {path} ({what})")
    files_and_cases = len(files) + len(cases)
    # Per layer, as `pressure` and `scenarios` refuse them: one (skill, id) in two files.
    entries: dict[str, list[tuple[str, str, str]]] = {"pressure": [], "scenarios": []}
    validated = {path.resolve() for path in files}
    scripts_seen: set[Path] = set()
    for path in files:
        try:
            # Parsed once: the loader keeps what read_yaml parsed for the second read.
            data = read_yaml(path)
            kind = file_kind(data, path)
            source = foreign_format(data)
            label = f"{kind}: {source.name}" if source is not None else kind
            suite = loaders[kind](path)
            if kind in entries:
                check_unique_scenarios([*entries[kind], *_scenario_entries(suite)])
                entries[kind].extend(_scenario_entries(suite))
        except _ContractBroken as exc:
            problems.extend(exc.findings)
            invalid += 1
            print(f"FAIL {path} ({len(exc.findings)} difference(s) from its API description)")
            continue
        except InputError as exc:
            problems.append(str(exc))
            invalid += 1
            print(f"FAIL {path}")
            continue
        found = todos(path, path.read_text(encoding="utf-8"))
        # The model script a suite runs on offline is unfinished work too, also when it is not
        # among the files validated: its TODOs are listed once, after the suite.
        script = getattr(suite, "model_script", None)
        shown_script: Path | None = None
        script_todos: list[Todo] = []
        if isinstance(script, Path) and script.resolve() not in validated | scripts_seen:
            scripts_seen.add(script.resolve())
            shown_script = _shown(script)
            script_todos = todos(shown_script, script.read_text(encoding="utf-8"))
        left += found + script_todos
        print(
            f"TODO {path} ({label}): {len(found)} to fill in" if found else f"ok   {path} ({label})"
        )
        if script_todos:
            print(f"TODO {shown_script} (model-script of {path}): {len(script_todos)} to fill in")
    if problems or left:
        print()
        for problem in problems:
            print(f"skilltest: error: {problem}")
        for todo in left:
            print(todo)
        counts = []
        if problems:
            counts.append(f"{invalid} of {files_and_cases} file(s) invalid")
        if left:
            counts.append(f"{len(left)} TODO(s) left in {len({t.path for t in left})} file(s)")
        print(f"\n{'; '.join(counts)}")
        return 2
    print(f"\n{files_and_cases} file(s) valid")
    return 0
