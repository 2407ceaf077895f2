"""``--baseline bundled``: both arms keep Claude Code's bundled skills and built-in plugins, as
``claude plugin eval``'s arms do, through the real claude CLI against the emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.report.files import read_results
from tests.layers import run_layer

pytestmark = pytest.mark.cli

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "bundled-baseline" / "review.yaml"


@pytest.mark.parametrize(
    ("baseline", "without_score", "without_invoked"),
    [
        # Claude Code's own no-plugin arm: the bundled code-review reads the change.
        ("bundled", 1.0, ["code-review"]),
        # skilltest's default: no bundled skill, nothing read.
        ("clean", 0.0, []),
    ],
)
def test_a_case_a_bundled_skill_answers_passes_in_the_bundled_baseline_only(
    claude_bin, tmp_path, capsys, baseline, without_score, without_invoked
):
    options = ["--claude", claude_bin, "-k", "1", "--allow-inconclusive", "--baseline", baseline]
    summary = tmp_path / "summary.md"
    code = run_layer("scenarios", SUITE, tmp_path, *options, "--markdown", summary)
    out, err = capsys.readouterr()
    assert code == 0, out
    # The Markdown summary names a baseline other than the default.
    assert ("\nbaseline: bundled (" in summary.read_text()) is (baseline == "bundled")
    document = read_results(tmp_path / "results.json", "scenarios")
    assert document["baseline"] == baseline
    [scenario] = document["scenarios"]
    runs = {run["arm"]: run for run in scenario["runs"]}
    assert runs["with_skill"]["score"] == 1.0
    assert runs["without_skill"]["score"] == without_score
    assert runs["without_skill"]["skills_invoked"] == without_invoked
    available = set(runs["without_skill"]["skills_available"])
    assert ("code-review" in available) is (baseline == "bundled")
    # Kept on purpose: not reported as a leak into the sandbox.
    assert "skills from outside the sandbox" not in out + err
    announced = (
        "baseline: bundled (both arms keep Claude Code's bundled skills and built-in plugins, as "
        "`claude plugin eval`'s do: the without-skill arm is its no-plugin arm)"
    )
    assert (announced in " ".join(err.split())) is (baseline == "bundled")
    # docs/scenarios.md shows the announcement as printed.
    docs = (Path(__file__).resolve().parents[2] / "docs" / "scenarios.md").read_text()
    assert f"\n{announced}\n" in docs
