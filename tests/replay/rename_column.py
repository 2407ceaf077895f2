"""The recorded runs the replay tests read: every request Claude Code 2.1.328 sent in two
repetitions of each arm of safe-migrations/rename-column (``requests/``), and a cassette for
its with-skill arm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skilltest.replay.cassette import Cassette
from skilltest.replay.normalise import RunPaths, normalise_request

REQUESTS = Path(__file__).with_name("requests")


def raw_requests(run: str) -> list[dict[str, Any]]:
    """The request bodies of ``run`` (``with-skill-0``, ``without-skill-1``, ...) as sent."""
    return json.loads((REQUESTS / f"rename-column.{run}.json").read_text())["requests"]


def recorded_requests(
    run: str = "with-skill-0", *, with_paths: bool = True
) -> list[dict[str, Any]]:
    """The requests of ``run`` normalised, with its sandbox's paths unless ``with_paths`` is
    false."""
    data = json.loads((REQUESTS / f"rename-column.{run}.json").read_text())
    root = data["sandbox"]
    paths = RunPaths(f"{root}/work", f"{root}/home", f"{root}/tmp", root) if with_paths else None
    return [normalise_request(body, paths=paths) for body in data["requests"]]


def with_skill_cassette(path: Path, **fields: Any) -> Cassette:
    """An empty cassette at ``path`` for the with-skill arm of the scenario; ``fields`` add to
    its header."""
    return Cassette(
        path=path,
        layer="scenarios",
        suite="tests/scenarios/safe-migrations.yaml",
        skill="safe-migrations",
        scenario="rename-column",
        arm="with_skill",
        **fields,
    )
