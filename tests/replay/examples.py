"""The example suites as the record and replay tests use them: copied out of the repository with
their model scripts named by absolute path, then stripped of them, with the API at a closed port,
so that only the cassettes can answer."""

from __future__ import annotations

import socket
from collections.abc import Iterable
from pathlib import Path

from ..conftest import REPO_ROOT

SCRIPTS = REPO_ROOT / "tests" / "model-scripts"
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
    """The ``layer`` example suites ``names`` into ``folder``, each naming its model script
    (``tests/model-scripts/<name>.<layer>.yaml``) by absolute path."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = (EXAMPLES[layer] / f"{name}.yaml").read_text()
        script = f"{name}.{layer}.yaml"
        assert f"../model-scripts/{script}" in text
        text = text.replace(f"../model-scripts/{script}", str(SCRIPTS / script))
        (folder / f"{name}.yaml").write_text(text)


def drop_model_scripts(folder: Path) -> None:
    """Nothing left for an emulator to answer from: a replay must not need it."""
    for suite in folder.glob("*.yaml"):
        kept = [line for line in suite.read_text().splitlines() if "model_script:" not in line]
        suite.write_text("\n".join(kept) + "\n")
