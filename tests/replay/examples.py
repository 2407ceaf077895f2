"""The example suites as the record and replay tests use them: copied out of the repository with
their model scripts named by absolute path, then stripped of them, with the API at a closed port,
so that only the cassettes can answer."""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from tests.projects import model_script_beside

from ..conftest import REPO_ROOT

EXAMPLES = {
    "pressure": REPO_ROOT / "tests" / "skill-pressure",
    "scenarios": REPO_ROOT / "tests" / "scenarios",
    "triggers": REPO_ROOT / "tests" / "triggers",
}
"""Where each layer's example suites are."""


def closed_port() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def copy_example_suites(folder: Path, layer: str, names: Iterable[str]) -> None:
    """The ``layer`` example suites ``names`` into ``folder``, each with a copy of its model
    script (``tests/model-scripts/<name>.<layer>.yaml``) beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = (EXAMPLES[layer] / f"{name}.yaml").read_text()
        text = model_script_beside(text, f"{name}.{layer}.yaml", folder)
        (folder / f"{name}.yaml").write_text(text)


def drop_model_scripts(folder: Path) -> None:
    """Nothing left for an emulator to answer from: a replay must not need it."""
    for suite in folder.glob("*.yaml"):
        kept = [line for line in suite.read_text().splitlines() if "model_script:" not in line]
        suite.write_text("\n".join(kept) + "\n")


def only_cassettes_answer(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suites in ``folder`` without their model scripts, and the API at a closed port."""
    drop_model_scripts(folder)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", closed_port())


def claude_or_skip() -> Path:
    """The claude binary, found as the product finds it; skips the tests when there is none."""
    from skilltest.claude.binary import resolve_claude
    from skilltest.errors import ClaudeNotFoundError

    try:
        return resolve_claude(None).absolute()
    except ClaudeNotFoundError as exc:
        pytest.skip(f"no claude CLI: {exc}")


def copy_example_project(folder: Path, layer: str, names: Iterable[str]) -> None:
    """The ``layer`` example suites ``names`` (as :func:`copy_example_suites` copies them) and
    their skills under ``folder/skills``."""
    names = tuple(names)
    copy_example_suites(folder, layer, names)
    for name in names:
        shutil.copytree(REPO_ROOT / "skills" / name, folder / "skills" / name)


def run_examples(layer: str, project: Path, names: Iterable[str], claude: Path, *args: str) -> int:
    """``skilltest <layer>`` on the example suites ``names`` copied into ``project``."""
    return main(
        [
            layer,
            *(str(project / f"{name}.yaml") for name in names),
            "--skills-dir",
            str(project / "skills"),
            "--claude",
            str(claude),
            *args,
        ]
    )


def moved_results(results: Path, moved: tuple[Path, Path] | None) -> dict[str, Any]:
    """A results file as JSON, with the project folder ``moved`` (from, to) for a copy."""
    text = results.read_text()
    if moved is not None:
        text = text.replace(str(moved[0]), str(moved[1]))
    return json.loads(text)


def record_examples(project: Path, run: Callable[..., int], *args: str | Path) -> None:
    """Records the example project in ``project`` once, run by ``run(project, claude, *args)``
    (the layer's runner of the test module): cassettes under ``project/cassettes``, results in
    ``project/recorded.json``, what each replay is compared with."""
    code = run(
        project, claude_or_skip(), *args, "--record", project / "cassettes",
        "--output-dir", project / "out", "--results", project / "recorded.json",
    )  # fmt: skip
    assert code == 0


def replayed_document(results: Path, cassettes: Path) -> dict[str, Any]:
    """The results file of a replay from ``cassettes`` that missed nothing, as JSON."""
    document = json.loads(results.read_text())
    assert document["backend"] == "replay"
    assert document["replay"] == {"mode": "replay", "directory": str(cassettes), "misses": []}
    return document
