"""Start-up: building the command line imports none of the heavy libraries.

Every command, ``skilltest --help`` included, pays for what building the parser imports. The
libraries below are imported where they are used (a run, a report, a suite being read), so a
command starts in a fraction of the time they take to import.
"""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest

import skilltest.cli

HEAVY = (
    "pandas",  # the verdicts' tidy tables
    "numpy",  # pulled in by pandas and scipy
    "scipy",  # the statistics' quantiles
    "anthropic",  # the SDK runner
    "pydantic",  # pulled in by anthropic and mcp
    "httpx",  # the HTTP client of the anthropic SDK (named httpx2 in its newer releases)
    "httpx2",
    "mcp",  # the MCP SDK: health checks, mock servers
    "mcp_types",
    "jsonschema",  # validating suites, scripts and cassettes
    "yaml",  # reading suites, scripts and cassettes
    "cryptography",  # the controlled world's certificate authority
    "regex",  # the suites' patterns, with a time limit
    "tabulate",  # the terminal tables
)
"""Top-level packages that importing the command line must not import."""

RUN_COMMANDS = (
    "skilltest.cli.pressure_cmd",
    "skilltest.cli.scenarios_cmd",
    "skilltest.cli.triggers_cmd",
)
"""The command modules that import the layers' run machinery (and ``cli.options``)."""

CLI = Path(skilltest.cli.__file__).parent


def heavy_loaded(script: str) -> list[str]:
    """The heavy packages loaded once ``script`` has run in a fresh interpreter."""
    report = "import sys\nprint(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    done = subprocess.run(
        [sys.executable, "-c", f"{script}\n{report}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return sorted(set(done.stdout.split()) & set(HEAVY))


def top_level_imports(path: Path) -> list[str]:
    """The ``skilltest`` modules a file imports at module level (not under TYPE_CHECKING)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("skilltest"):
            names.add(str(node.module))
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith("skilltest"))
    return sorted(names)


def what_the_run_commands_import() -> list[str]:
    """Every module the run commands (and ``cli.options``) import at the top."""
    files = [CLI / "options.py", *(CLI / f"{name.rsplit('.', 1)[1]}.py" for name in RUN_COMMANDS)]
    return sorted({name for path in files for name in top_level_imports(path)})


def test_building_the_parser_imports_no_heavy_library():
    assert heavy_loaded("import skilltest.cli\nskilltest.cli.build_parser()") == []


def test_importing_the_api_imports_no_heavy_library():
    """``import skilltest`` and naming a layer's entry point load nothing heavy until a run."""
    script = (
        "import skilltest\nskilltest.pressure.run, skilltest.ScenarioOptions, skilltest.triggers"
    )
    assert heavy_loaded(script) == []


@pytest.mark.parametrize("module", what_the_run_commands_import())
def test_what_the_run_commands_import_is_light(module):
    assert heavy_loaded(f"import {module}") == []


def test_the_run_commands_are_commands():
    """The exclusion above names real command modules (a rename would make it vacuous)."""
    assert set(RUN_COMMANDS) <= set(skilltest.cli.COMMAND_MODULES)


def command_modules_after(argv: list[str]) -> list[str]:
    """The ``skilltest.cli.*`` modules loaded once ``main(argv)`` has run, in a fresh interpreter."""
    script = (
        "import contextlib, io, sys\nimport skilltest.cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    skilltest.cli.main({argv!r})\n"
        "print(' '.join(m for m in sys.modules if m.startswith('skilltest.cli.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.split()


def test_help_imports_no_command_module():
    """``skilltest --help`` lists the commands from their names and help lines alone."""
    assert command_modules_after(["--help"]) == ["skilltest.cli.terminal"]


def test_a_command_imports_its_own_module_only():
    assert command_modules_after(["gate", "--help"]) == [
        "skilltest.cli.terminal",
        "skilltest.cli.gate_cmd",
    ]


def test_the_help_lines_listed_are_the_commands_own():
    """Each command's line in ``skilltest --help`` is the one its module registers."""
    full = skilltest.cli.build_parser()
    [commands] = [a for a in full._actions if isinstance(a, argparse._SubParsersAction)]
    registered = {action.dest: action.help for action in commands._choices_actions}
    listed = {name: help_line for name, _, help_line in skilltest.cli.COMMANDS}
    assert listed == registered


def test_a_mistyped_command_lists_every_command(capsys):
    assert skilltest.cli.main(["presure"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'presure'" in err
    assert all(f"'{name}'" in err for name, _, _ in skilltest.cli.COMMANDS)


def test_validate_imports_neither_the_heavy_libraries_nor_the_emulators_server():
    script = (
        "import contextlib, io, sys\n"
        "from skilltest.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['validate']) == 0\n"
        "loaded = [m for m in ('skilltest.emulator.server', 'skilltest.emulator.sse',\n"
        "    'http.server') if m in sys.modules]\n"
        "print(' '.join(loaded))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script + "import sys\n"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.stdout.split() == []
    assert [
        name
        for name in heavy_loaded(script)
        # pydantic is not listed: the example world names its provider's OpenAPI description,
        # whose validators use it (a world without one loads none: tests/world/test_contract.py).
        if name in ("pandas", "numpy", "scipy", "anthropic", "mcp", "cryptography")
    ] == []
