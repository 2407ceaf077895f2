"""What a matrix's results file may name in its plan: every axis, and every revision's arm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.errors import InputError
from skilltest.matrix import read_matrix


def _write(folder: Path, axes: list[dict[str, object]], arms: list[str]) -> Path:
    document = {
        "schema_version": 4,
        "layer": "scenarios",
        "complete": True,
        "interrupted": False,
        "matrix": {
            "axes": axes,
            "cells": [],
            "arms": arms,
            "shared_baseline": len(arms) > 2,
        },
        "cells": [],
    }
    path = folder / "matrix.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    "arms",
    [
        ["with_skill", "without_skill"],
        ["with_skill", "without_skill", "previous", "previous-2", "previous-9"],
    ],
)
@pytest.mark.parametrize("axis", ["model", "claude", "agent"])
def test_a_plan_of_any_axis_and_any_revision_arm_reads_back(tmp_path, axis, arms):
    path = _write(tmp_path, [{"name": axis, "values": ["a"]}], arms)
    assert read_matrix(path)["matrix"]["arms"] == arms


@pytest.mark.parametrize(
    ("axes", "arms", "pointer"),
    [
        ([{"name": "agents", "values": ["a"]}], ["with_skill"], "#/matrix/axes/0/name"),
        ([{"name": "model", "values": ["a"]}], ["previous-10"], "#/matrix/arms/0"),
    ],
)
def test_an_axis_or_arm_no_run_writes_is_refused(tmp_path, axes, arms, pointer):
    with pytest.raises(InputError) as caught:
        read_matrix(_write(tmp_path, axes, arms))
    assert pointer in str(caught.value)
