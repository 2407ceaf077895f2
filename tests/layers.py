"""A layer (``pressure``, ``scenarios`` or ``triggers``) run in process as a user runs it from
the command line, with what the run writes kept in the test's folder."""

from __future__ import annotations

from pathlib import Path

from skilltest.cli import main


def run_layer(layer: str, suites: Path | str, folder: Path, *options: str | Path) -> int:
    """``skilltest LAYER SUITES *OPTIONS`` writing transcripts and traces under ``folder/output``
    and the results file to ``folder/results.json``; returns the exit code."""
    output = ["--output-dir", folder / "output", "--results", folder / "results.json"]
    return main([str(arg) for arg in (layer, suites, *options, *output)])
