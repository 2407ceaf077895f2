"""Revision deltas (``--against REF``) in the Markdown summary and in ``skilltest compare``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skilltest.cli import main
from skilltest.report.markdown import Document, render_markdown
from skilltest.stats import wilson
from tests.report.documents import pressure_document, pressure_scenario, produced_by


def against(
    base: dict[str, Any], previous: int, verdict: str, delta: tuple[float, float, float] | None
) -> dict[str, Any]:
    """``base`` with a ``previous`` arm of ``previous`` passes and its ``against`` entry."""
    k = base["k"]
    rate = wilson(previous, k)
    return {
        **base,
        "previous": {
            "runs": k,
            "passed": previous,
            "pass_rate": rate.value,
            "ci_low": rate.low,
            "ci_high": rate.high,
        },
        "against": {
            "ref": "HEAD~1",
            "delta": None if delta is None else delta[0],
            "ci": None if delta is None else [delta[1], delta[2]],
            "verdict": verdict,
        },
    }


# The README's example: an edit that helped `aggregate` and broke `extract`.
DOCUMENT = pressure_document(
    against(
        pressure_scenario("aggregate", "steers", 5, 5, 5, (1.0, 0.39, 1.0)),
        0,
        "improved",
        (1.0, 0.3855, 1.0),
    ),
    against(
        pressure_scenario("steady", "steers", 5, 5, 5, (1.0, 0.39, 1.0)),
        5,
        "inconclusive",
        (0.0, -0.4345, 0.4345),
    ),
    against(
        pressure_scenario(
            "extract", "no-steer", 0, 5, 5, (0.0, -0.43, 0.43), detail="missing jq in 5/5"
        ),
        5,
        "regressed",
        (-1.0, -1.0, -0.3855),
    ),
)


def test_the_summary_counts_the_moves_lists_the_regressed_and_shows_the_column():
    text = render_markdown([Document("-", DOCUMENT)], link_from=Path("/repo"), cwd=Path("/repo"))
    assert text.splitlines() == [
        "## skilltest skill pressure",
        "",
        produced_by("pressure", "anthropic"),
        "",
        "**3 scenarios**: 2 steers, 1 no-steer; 2 passed, 1 failed",
        "",
        "against HEAD~1: 1 improved, 0 neutral, 1 regressed, 1 inconclusive",
        "",
        "### Failing",
        "",
        "- **lgtm/extract** (no-steer): missing jq in 5/5",
        "",
        "### Regressed against HEAD~1",
        "",
        "- **lgtm/extract** (no-steer): -100% [-100%, -39%] against HEAD~1",
        "",
        "|  | scenario | verdict | with skill | without skill | delta | vs HEAD~1 | K | transcripts |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        "| ✅ | `lgtm/aggregate` | steers | 100% [57%–100%] | 0% [0%–43%] | +100% [+39%, +100%] "
        "| improved +100% [+39%, +100%] | 5 | - |",
        "| ✅ | `lgtm/steady` | steers | 100% [57%–100%] | 0% [0%–43%] | +100% [+39%, +100%] "
        "| inconclusive +0% [-43%, +43%] | 5 | - |",
        "| ❌ | `lgtm/extract` | no-steer | 0% [0%–43%] | 0% [0%–43%] | +0% [-43%, +43%] "
        "| regressed -100% [-100%, -39%] | 5 | - |",
        "",
        "with skill: pass rate; without skill: baseline pass rate (not RED); delta: the lift; "
        "brackets: 95% intervals (with -k auto, the level of the look that decided)",
        "vs REF: with skill minus the skill at REF [the interval the verdict reads: exact for pass "
        "rates, a betting sequence for mean scores], read against the band of the "
        "with-versus-without verdict",
    ]


def test_without_against_there_is_no_column_nor_line():
    plain = pressure_document(pressure_scenario("aggregate", "steers", 5, 5, 5, (1.0, 0.39, 1.0)))
    text = render_markdown([Document("-", plain)], link_from=Path("/repo"), cwd=Path("/repo"))
    assert "against" not in text
    assert "vs " not in text


def test_an_arm_without_judged_runs_shows_error_without_a_delta():
    document = pressure_document(
        against(
            pressure_scenario("aggregate", "steers", 5, 5, 5, (1.0, 0.39, 1.0)), 0, "error", None
        )
    )
    text = render_markdown([Document("-", document)], link_from=Path("/repo"), cwd=Path("/repo"))
    assert "against HEAD~1: 0 improved, 0 neutral, 0 regressed, 1 error" in text.splitlines()
    assert "| error | 5 | - |" in text


def test_report_and_compare_read_files_with_a_previous_arm(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.json").write_text(json.dumps(DOCUMENT))
    (tmp_path / "new.json").write_text(json.dumps(DOCUMENT))
    assert main(["report", "new.json", "--markdown", "summary.md"]) == 0
    lines = (tmp_path / "summary.md").read_text(encoding="utf-8").splitlines()
    assert "against HEAD~1: 1 improved, 0 neutral, 1 regressed, 1 inconclusive" in lines
    capsys.readouterr()
    assert main(["compare", "old.json", "new.json"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == (
        "3 compared: 0 verdict(s) changed (0 now failing, 0 now passing); 0 new, 0 vanished"
    )
