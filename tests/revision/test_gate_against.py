"""`skilltest gate` blocks on a scenario that regressed against the previous revision."""

from __future__ import annotations

import pytest

from tests.gate.test_gate import (
    as_written,  # noqa: F401 (the fixture of the documents these tests write by hand)
    blocked,
    gate,
    pscenario,
    verdict_item,
)
from tests.report.documents import pressure_document, scenarios_document, write_results

pytestmark = pytest.mark.usefixtures("as_written")

REGRESSED = {"ref": "HEAD~1", "delta": -0.8, "ci": [-0.95, -0.31], "verdict": "regressed"}


@pytest.mark.parametrize("layer", ["pressure", "scenarios"])
def test_regressed_against_ref_blocks_on_either_layer(tmp_path, capsys, layer):
    if layer == "pressure":
        item = {**pscenario("spike", 4, 4, critical=False), "against": REGRESSED}
        data, name = pressure_document(item), "demo/spike (pressure)"
    else:
        item = {**verdict_item("improved", True, ""), "against": REGRESSED}
        data, name = scenarios_document(item), "lgtm/spike (scenarios)"
    lines = blocked(capsys, write_results(tmp_path / "r.json", data), reasons=1)
    assert f"         - {name}: regressed against HEAD~1: delta -80% [-95%, -31%]" in lines


@pytest.mark.parametrize("move", ["improved", "neutral", "inconclusive", "error"])
def test_other_moves_against_ref_do_not_block(tmp_path, capsys, move):
    item = {**pscenario("spike", 4, 4, critical=False), "against": {**REGRESSED, "verdict": move}}
    code, out, _ = gate(capsys, write_results(tmp_path / "r.json", pressure_document(item)))
    assert code == 0, out


def test_a_regression_against_any_of_several_refs_blocks(tmp_path, capsys):
    # The skill now passes 0 of 4 runs; at v2 it passed 0 of 4 too, at v1 4 of 4.
    neutral = {"ref": "v2", "delta": 0.0, "ci": [-0.6, 0.6], "verdict": "neutral"}
    regressed = {**REGRESSED, "ref": "v1"}
    at_v2 = {"runs": 4, "errors": 0, "passed": 0, "pass_rate": 0.0, "ci_low": 0.0, "ci_high": 0.6}
    at_v1 = {"runs": 4, "errors": 0, "passed": 4, "pass_rate": 1.0, "ci_low": 0.4, "ci_high": 1.0}
    item = {
        **pscenario("spike", 0, 4, critical=False),
        "previous": at_v2,
        "against": neutral,
        "revisions": [
            {"ref": "v2", "arm": "previous", "previous": at_v2, "against": neutral},
            {"ref": "v1", "arm": "previous-2", "previous": at_v1, "against": regressed},
        ],
    }
    lines = blocked(capsys, write_results(tmp_path / "r.json", pressure_document(item)), reasons=1)
    assert (
        "         - demo/spike (pressure): regressed against v1: delta -80% [-95%, -31%]" in lines
    )
    assert not any("against v2" in line for line in lines)
