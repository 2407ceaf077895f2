"""The Markdown summary of results files: counts, failing scenarios, the table, links."""

from pathlib import Path

import pytest

from skilltest.errors import InputError
from skilltest.report.markdown import Document, render_markdown
from tests.report.documents import (
    IMPROVED,
    pressure_document,
    pressure_scenario,
    produced_by,
    scenario,
    scenarios_document,
    triggers_document,
)

REGRESSED = scenario(
    "trace-slow-requests",
    "regressed",
    False,
    (0.0, 0.0, 0.66),
    (1.0, 0.34, 1.0),
    (-1.0, -1.0, -0.07),
    reasons=(
        "delta -1.00 [-1.00, -0.07] is credibly below -0.10",
        "with-skill mean 0.00 is below 0.60",
    ),
    transcripts=False,
)


def render(*documents, link_from: Path = Path("/repo/out"), sources=None):
    sources = sources or ["-"] * len(documents)
    return render_markdown(
        [Document(s, d) for s, d in zip(sources, documents, strict=True)],
        link_from=link_from,
        cwd=Path("/repo"),
    )


def test_scenarios_summary_as_a_reviewer_reads_it():
    text = render(scenarios_document(IMPROVED, REGRESSED))
    assert text.splitlines() == [
        "## skilltest scenarios",
        "",
        produced_by("scenarios"),
        "",
        "**2 scenarios**: 1 improved, 1 regressed; 1 passed, 1 failed",
        "",
        "### Failing",
        "",
        "- **lgtm/trace-slow-requests** (regressed): delta -1.00 [-1.00, -0.07] is credibly "
        "below -0.10; with-skill mean 0.00 is below 0.60",
        "",
        "|  | scenario | verdict | with skill | without skill | delta | K | transcripts |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
        "| ✅ | `lgtm/investigate-error-spike` | improved | 1.00 [0.34, 1.00] | 0.00 [0.00, 0.66] "
        "| +1.00 [+0.07, +1.00] | 2 | "
        "[with #1](../output/investigate-error-spike/with-skill-0.ndjson) "
        "[without #1](../output/investigate-error-spike/without-skill-0.ndjson) "
        "[with #2](../output/investigate-error-spike/with-skill-1.ndjson) "
        "[without #2](../output/investigate-error-spike/without-skill-1.ndjson) |",
        "| ❌ | `lgtm/trace-slow-requests` | regressed | 0.00 [0.00, 0.66] | 1.00 [0.34, 1.00] "
        "| -1.00 [-1.00, -0.07] | 2 | - |",
        "",
        "with and without skill: pass rates, or mean rubric scores for a scenario that decides "
        "by them (decide_by: mean), the figures its verdict reads; delta: with minus without; "
        "brackets: 95% intervals (with -k auto, the level of the look that decided)",
    ]


@pytest.mark.parametrize(
    ("link_from", "link"),
    [
        (Path("/repo"), "output/investigate-error-spike/with-skill-0.ndjson"),
        (Path("/repo/reports/ci"), "../../output/investigate-error-spike/with-skill-0.ndjson"),
        (Path("/elsewhere"), "../repo/output/investigate-error-spike/with-skill-0.ndjson"),
    ],
)
def test_transcript_links_are_relative_to_the_markdown_folder(link_from, link):
    assert f"[with #1]({link})" in render(scenarios_document(IMPROVED), link_from=link_from)


def test_pressure_shows_rates_in_percent_and_the_baseline_pass_rate():
    doc = pressure_document(
        pressure_scenario("jq-extraction", "steers", 4, 4, 4, (1.0, 0.0387, 1.0)),
        pressure_scenario(
            "percentiles", "no-steer", 0, 4, 4, (0.0, -0.49, 0.49), "missing (?i)p99 in 4/4"
        ),
    )
    lines = render(doc, sources=["out/pressure.json"]).splitlines()
    assert lines[:10] == [
        "## skilltest skill pressure",
        "",
        "from `out/pressure.json`",
        "",
        produced_by("pressure", "anthropic"),
        "",
        "**2 scenarios**: 1 steers, 1 no-steer; 1 passed, 1 failed",
        "",
        "### Failing",
        "",
    ]
    assert lines[10] == "- **lgtm/percentiles** (no-steer): missing (?i)p99 in 4/4"
    # Baseline: 4 of 4 runs RED, so a pass rate of 0% with the RED rate's interval mirrored.
    assert (
        "| ✅ | `lgtm/jq-extraction` | steers | 100% [51%–100%] | 0% [0%–49%] "
        "| +100% [+4%, +100%] | 4 | - |" in lines
    )


def test_triggers_have_a_fired_column_and_no_baseline():
    lines = render(triggers_document()).splitlines()
    assert "**2 queries**: 1 pass, 1 false-trigger; 1 passed, 1 failed" in lines
    assert (
        "- **lgtm/capital-of-france** (false-trigger): fired in 6/6 scored runs: the 95% exact "
        "interval of its rate, [54%–100%], lies at or above the threshold 50%"
    ) in lines
    assert "|  | query | verdict | fired | K | transcripts |" in lines
    assert lines[-1] == (
        "fired: the share of the query's runs in which the skill fired, with the exact interval "
        "its verdict reads against the suite's threshold; brackets: 95% intervals (with -k auto, "
        "the level of the look that decided)"
    )
    assert (
        "| ❌ | `lgtm/capital-of-france` | false-trigger | 100% [54%–100%] | 6 | "
        "[run #1](../output/capital-of-france/with-skill-0.ndjson) |" in lines
    )


def test_one_query_is_counted_in_the_singular():
    document = triggers_document()
    del document["suites"][0]["queries"][1]
    assert "**1 query**: 1 pass; 1 passed, 0 failed" in render(document).splitlines()


def test_layers_in_order_and_shards_combined():
    shard_a = scenarios_document(IMPROVED)
    shard_b = scenarios_document(REGRESSED, complete=False)
    text = render(shard_b, triggers_document(), shard_a, sources=["b.json", "t.json", "a.json"])
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## skilltest scenarios", "## skilltest triggers"]
    assert "from `b.json`, `a.json`" in text
    assert "**2 scenarios**: 1 regressed, 1 improved; 1 passed, 1 failed" in text
    assert "> **incomplete**: the run stopped before every scenario finished" in text


def test_a_cell_never_breaks_the_table():
    odd = scenario("s", "error", False, (0.0, 0.0, 0.0), None, None, reasons=("a | b\nc",))
    text = render(scenarios_document(odd))
    assert "- **lgtm/s** (error): a \\| b c" in text


def test_a_file_of_no_known_layer_is_bad_input():
    with pytest.raises(
        InputError, match="not a pressure, scenarios or triggers results file"
    ) as info:
        render({"layer": "nope"}, sources=["x.json"])
    assert info.value.location == "x.json"
