"""The example pressure suites, answered by one model script that merges theirs, for the
benchmarks that run them all against one emulator (one base URL)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SUITES = sorted((ROOT / "tests" / "skill-pressure").glob("*.yaml"))


def write_merged_script(path: Path, **fields: Any) -> Path:
    """Writes to ``path`` one model script answering every example suite: their rules in order,
    the first default among them, and ``fields`` (``faults``, say) besides."""
    rules = []
    default = None
    for suite in SUITES:
        data = yaml.safe_load(suite.read_text())
        script = yaml.safe_load((suite.parent / data["model_script"]).read_text())
        rules.extend(script["rules"])
        default = default or script.get("default")
    path.write_text(
        yaml.safe_dump({"schema_version": 1, **fields, "rules": rules, "default": default})
    )
    return path
