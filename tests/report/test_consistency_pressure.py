"""pass@k and pass^k of the pressure layer: in the results file always, in the table where they
tell another story than the pass rate."""

from skilltest.pressure.report import render_table, scenario_dict
from tests.pressure.test_verdict import BAD, GOOD, run


def test_results_file_has_pass_at_k_and_pass_hat_k_per_arm(tmp_path):
    result, _ = run(tmp_path, [GOOD, GOOD, BAD], [BAD, BAD, GOOD])
    data = scenario_dict(result)
    # k = the fixed K (3) = runs: some with-skill run passed, not all; one baseline run passed.
    assert {key: data["with_skill"][key] for key in ("k", "pass_at_k", "pass_hat_k")} == {
        "k": 3,
        "pass_at_k": 1.0,
        "pass_hat_k": 0.0,
    }
    assert data["without_skill"]["pass_at_k"] == 1.0
    assert data["without_skill"]["pass_hat_k"] == 0.0


def test_table_notes_a_scenario_that_steers_but_rarely_passes_every_run(tmp_path):
    # 45 of 50 runs pass: credibly at or above 0.7, so it steers, yet 50 in a row rarely pass.
    result, _ = run(tmp_path, [GOOD] * 45 + [BAD] * 5, [BAD] * 50, k=50)
    assert result.verdict == "steers"
    row = render_table([result]).splitlines()[2]
    assert row.rstrip().endswith("pass^50 0%: all of 50 runs pass less than half the time")


def test_table_says_nothing_more_when_every_run_passes(tmp_path):
    result, _ = run(tmp_path, [GOOD] * 3, [BAD] * 3)
    assert "pass^" not in render_table([result])
