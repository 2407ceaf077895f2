"""The rooms of ``src/skilltest/`` and the one direction imports go between them.

Every top-level module or package has a place in :data:`ORDER`, lowest first. A module may
import from its own room and from rooms below it, never from a room above: the layers build on
the machinery (emulator, world, replay, runners), which builds on the formats (suites,
transcripts, traces, reports), which build on the foundations (errors, statistics, names). The
command line is the top and imports anything; nothing imports it. docs/architecture.md draws
the same picture.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src" / "skilltest"

ORDER: tuple[str, ...] = (
    # foundations: no I/O beyond reading a file
    "errors",
    "fields",
    "limits",
    "names",
    "model_apis",
    "files",
    "redact",
    "stats",
    "decision",
    "cost",
    "patterns",
    "javascript",
    "groups",
    "loopback",
    "tls",
    "repetitions",
    "scheduler",
    "preload",
    # formats: what is read and written
    "suite",
    "skills",
    "transcript",
    "plugins",
    # MCP over stdio: the mocks' server and the health checks
    "mcp",
    "evalcases",
    # eval formats of other tools, read into the suite documents
    "formats",
    "revision",
    "report",
    "trace",
    # machinery: processes and servers
    "emulator",
    "claude",
    # the agents a skill is tested in, behind one protocol (Claude Code one of them)
    "agents",
    "world",
    "replay",
    "credentials",
    "runners",
    # what a run left behind: outcome checks and the judge
    "checks",
    # how a run flows, shared by the layers
    "flow",
    # the layers
    "scenarios",
    "pressure",
    "triggers",
    # one suite across models: cells, each run by its layer
    "matrix",
    # what reads results and skills
    "merge",
    "gate",
    "lint",
    # what writes a first suite for a skill
    "scaffold",
    # the command line
    "cli",
    "__main__",
)


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "skilltest" or len(parts) < 2:
        return None  # another library, or the package root (its version, the API re-exports)
    return parts[1]


def _imports() -> list[tuple[str, str, str]]:
    """``(importing file, its room, imported module)`` for every import of skilltest."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE)
        room = relative.parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found += [(str(relative), room, name) for name in names]
    return found


def test_every_room_has_a_place_in_the_order():
    rooms = {p.name.removesuffix(".py") for p in SOURCE.iterdir() if not p.name.startswith("_")}
    rooms |= {"__main__"}
    rooms = {r for r in rooms if (SOURCE / r).is_dir() or (SOURCE / f"{r}.py").is_file()}
    rooms -= {"py.typed"}
    assert sorted(rooms - set(ORDER)) == [], "add the new room to ORDER (and architecture.md)"


def test_no_module_imports_a_room_above_its_own():
    rank = {room: index for index, room in enumerate(ORDER)}
    upward = [
        f"{path} ({room}) imports {name}"
        for path, room, name in _imports()
        if (target := _room(name)) is not None
        and target in rank
        and room in rank
        and rank[target] > rank[room]
    ]
    assert upward == []


def test_the_rule_reads_imports_between_rooms():
    """The check above is not vacuous: the imports it reads include layer-to-machinery ones."""
    seen = {(room, _room(name)) for _, room, name in _imports()}
    assert ("scenarios", "world") in seen
    assert ("cli", "pressure") in seen
