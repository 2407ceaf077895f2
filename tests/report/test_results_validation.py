"""A results file is checked before anything reads it: `report`, `compare` and `gate` refuse a
hand-edited or foreign file with exit 2, the file, the JSON pointer of the first wrong value and
what was expected; never a traceback, never a verdict read from garbage (`"lift": NaN` used to
pass the gate, `compare` printed `+nan%`)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from tests.report.documents import (
    IMPROVED,
    pressure_document,
    pressure_scenario,
    scenarios_document,
    triggers_document,
)

STEERS = pressure_scenario("jq", "steers", 11, 11, 11, (1.0, 0.69, 1.0))


def scenarios(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    document = copy.deepcopy(scenarios_document(IMPROVED))
    change(document)
    return document


def pressure(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    document = copy.deepcopy(pressure_document(STEERS))
    change(document)
    return document


def triggers(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    document = copy.deepcopy(triggers_document())
    change(document)
    return document


def first(document: dict[str, Any]) -> dict[str, Any]:
    return document["scenarios"][0]


def world(document: dict[str, Any]) -> None:
    first(document)["runs"][0]["world"] = {"violations": 5}


CASES = [
    ("scenarios not a list", scenarios(lambda d: d.update(scenarios="x")),
     "#/scenarios: 'x' is not valid here: 'x' is not of type 'array'"),
    ("an interval bound that is text", scenarios(lambda d: first(d)["with_skill"].update(ci_low="a")),
     "#/scenarios/0/with_skill/ci_low: 'a' is not valid here: 'a' is not of type 'number', 'null'"),
    ("a negative K", scenarios(lambda d: first(d).update(k=-3)),
     "#/scenarios/0/k: -3 is less than the minimum of 0"),
    ("a delta beyond 1", scenarios(lambda d: first(d).update(delta=4.0)),
     "#/scenarios/0/delta: 4.0 is greater than the maximum of 1"),
    ("world violations that are a number", scenarios(world),
     "#/scenarios/0/runs/0/world/violations: 5 is not valid here: 5 is not of type 'array'"),
    ("a pass rate that is text", pressure(lambda d: first(d)["with_skill"].update(pass_rate="c")),
     "#/scenarios/0/with_skill/pass_rate: 'c' is not valid here: 'c' is not of type 'number', 'null'"),
    ("a lift that is NaN", pressure(lambda d: first(d).update(lift=float("nan"))),
     "#/scenarios/0/lift: nan is not a number a results file can hold"),
    ("queries that are a number", triggers(lambda d: d["suites"][0].update(queries=5)),
     "#/suites/0/queries: 5 is not valid here: 5 is not of type 'array'"),
    ("a comparison that is text", triggers(lambda d: d.update(comparison="x")),
     "#/comparison: 'x' is not valid here: 'x' is not of type 'array', 'null'"),
    ("a scenario without an id", scenarios(lambda d: first(d).pop("id")),
     "#/scenarios/0: 'id' is a required property"),
]  # fmt: skip


def write(path: Path, document: dict[str, Any]) -> Path:
    # allow_nan: a NaN is what some tools write; the file must still be refused.
    path.write_text(json.dumps(document, allow_nan=True))
    return path


@pytest.mark.parametrize("command", ["report", "compare", "gate"])
@pytest.mark.parametrize(("document", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_broken_results_file_is_refused_at_its_place(
    tmp_path, capsys, command, document, message
):
    path = write(tmp_path / "r.json", document)
    good = write(tmp_path / "good.json", triggers_document())
    argv = [command, str(path)] + ([str(good)] if command == "compare" else [])
    if command == "compare" and document["layer"] == "triggers":
        argv = [command, str(good), str(path)]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert f"skilltest: error: {path}#" in err
    assert message in err
    assert "\n  fix: " in err
    assert "Traceback" not in err
    assert out == ""


def test_every_layer_s_own_results_file_is_accepted(tmp_path, capsys):
    compared = {
        **triggers_document(),
        "comparison": [{"suite": "t.yaml", "skill": "lgtm", "differences": []}],
    }
    documents = (scenarios_document(IMPROVED), pressure_document(STEERS), triggers_document())
    for document in (*documents, compared):
        path = write(tmp_path / "r.json", document)
        assert main(["report", str(path)]) == 0
        capsys.readouterr()
