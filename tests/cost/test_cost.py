"""What a run costs: the dry run's estimate against what a replayed run reports, the constant
it assumes for the claude CLI against the committed cassettes, the prices, the budget."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from skilltest.cli import EXIT_MAX_COST, main
from skilltest.cost.budget import Budget
from skilltest.cost.estimate import CLI_CONTEXT_TOKENS, listing, tokens
from skilltest.cost.prices import BATCH_DISCOUNT, HAIKU, OPUS, OPUS_LEGACY, SONNET, price_of

from ..conftest import REPO_ROOT

CASSETTES = REPO_ROOT / "tests" / "cassettes"


def total_line(out: str) -> list[str]:
    """The cells of the dry run's total row."""
    line = next(line for line in out.splitlines() if re.match(r"\s+total\s", line))
    return re.split(r"\s{2,}", line.strip())


def number(cell: str) -> int:
    return int(cell.replace(",", ""))


@pytest.mark.parametrize("k", ["2", "4"])
def test_the_dry_run_estimates_the_tokens_a_replayed_run_reports_within_10_percent(
    tmp_path, monkeypatch, capsys, k
):
    monkeypatch.chdir(REPO_ROOT)
    assert main(["pressure", "--dry-run", "-k", k]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("dry run: nothing was called;")
    assert err == ""  # no backend chosen, not even the offline notice
    _, scenarios, runs, requests, read, _written, cost = total_line(out)
    assert (scenarios, runs, requests) == ("8", str(8 * 2 * int(k)), str(8 * 2 * int(k)))
    assert cost.startswith("$")

    results = tmp_path / "replayed.json"
    code = main(["pressure", "--replay", "tests/cassettes", "-k", k, "--results", str(results)])
    assert code in (0, 1)  # with -k 2 a scenario is inconclusive: the tokens count all the same
    out = capsys.readouterr().out
    reported = re.search(r"(\d+) requests, tokens: ([\d,]+) in, ([\d,]+) out, ([\d,]+) read", out)
    assert reported is not None
    assert int(reported[1]) == number(requests)
    runs_read = sum(
        run["usage"]["input_tokens"]
        + run["usage"]["cache_read_input_tokens"]
        + run["usage"]["cache_creation_input_tokens"]
        for scenario in json.loads(results.read_text())["scenarios"]
        for run in scenario["runs"]
    )
    assert runs_read == number(reported[2]) + number(reported[4])
    assert abs(number(read) - runs_read) <= 0.10 * runs_read, (read, runs_read)


def test_a_dry_run_of_each_layer_calls_nothing_and_shows_a_row_per_suite(
    monkeypatch, capsys, tmp_path
):
    monkeypatch.chdir(REPO_ROOT)
    # No claude anywhere: the CLI layers' dry runs must not look for one.
    monkeypatch.setenv("SKILLTEST_CLAUDE", str(tmp_path / "no-claude"))
    monkeypatch.setenv("PATH", str(tmp_path))
    for layer, suites in (("scenarios", 3), ("triggers", 2), ("pressure", 2)):
        assert main([layer, "--dry-run", "--shard", "1/1"]) == 0
        out, err = capsys.readouterr()
        assert err == ""
        rows = [line for line in out.splitlines() if line.startswith(layer)]
        assert len(rows) == suites
        assert "assumed" in out
    assert not (REPO_ROOT / "tests" / "scenarios" / "output" / "no-such").exists()


def first_request_tokens(cassette: Path) -> int:
    """The input tokens of the first model request of a cassette's first run, as recorded."""
    data = yaml.safe_load(cassette.read_text())
    exchange = data["repetitions"][0]["exchanges"][0]
    start = json.loads(exchange["response"]["events"][0][1])
    usage = start["message"]["usage"]
    return (
        usage["input_tokens"]
        + usage["cache_creation_input_tokens"]
        + usage["cache_read_input_tokens"]
    )


def test_the_cli_context_constant_is_what_the_committed_cassettes_recorded():
    # A scenario run without the skill: nothing listed, only the prompt on top.
    scenario = CASSETTES / "lgtm" / "investigate-error-spike" / "without_skill.yaml"
    prompt = (
        "We're seeing a spike in 500 errors from the checkout service in production. Can you "
        "investigate what's going on?"
    )
    assert abs(CLI_CONTEXT_TOKENS + tokens(prompt) - first_request_tokens(scenario)) <= 50
    # A trigger run: the skill and its distractor listed.
    trigger = CASSETTES / "lgtm" / "capital-of-france" / "current.yaml"
    skills = yaml.safe_load(
        (REPO_ROOT / "skills" / "lgtm" / "SKILL.md").read_text().split("---")[1]
    )
    other = yaml.safe_load(
        (REPO_ROOT / "skills" / "safe-migrations" / "SKILL.md").read_text().split("---")[1]
    )
    estimated = (
        CLI_CONTEXT_TOKENS
        + listing([(skills["name"], skills["description"]), (other["name"], other["description"])])
        + tokens("What is the capital of France?")
    )
    recorded = first_request_tokens(trigger)
    assert abs(estimated - recorded) <= 0.02 * recorded, (estimated, recorded)


@pytest.mark.parametrize(
    ("model", "price", "known"),
    [
        ("claude-opus-5-5", OPUS, True),
        ("claude-opus-4-1-20250805", OPUS_LEGACY, True),
        ("claude-sonnet-5-5", SONNET, True),
        ("claude-haiku-5-5", HAIKU, True),
        ("gpt-9", OPUS, False),
        (None, OPUS, False),
    ],
)
def test_models_are_priced_by_family(model, price, known):
    assert price_of(model) == (price, known)


def test_prices_hold_cache_reads_at_a_tenth_and_writes_at_a_quarter_more():
    for price in (OPUS, SONNET, HAIKU, OPUS_LEGACY):
        assert price.cache_read == pytest.approx(price.input / 10)
        assert price.cache_write == pytest.approx(price.input * 1.25)
    assert SONNET.usd(input=1_000_000, output=1_000_000) == 18.0
    assert BATCH_DISCOUNT == 0.5


def test_the_budget_lets_no_run_start_past_its_limit():
    budget = Budget(1.0)
    assert budget.start(0.4) and budget.start(0.4)
    assert not budget.start(0.3)  # 0.8 in flight + 0.3 > 1.0
    budget.finish(0.4, 0.1)
    assert not budget.start(0.1)  # once refused, nothing more starts
    stopped = budget.stopped()
    assert stopped is not None
    assert stopped["by"] == "max-cost" and stopped["runs"] == 2
    assert stopped["reason"].startswith("--max-cost-usd 1: $0.0000 spent and $0.8000 in flight")


def test_max_cost_stops_a_pressure_run_on_the_emulator(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    code = main(
        ["pressure", "-k", "2", "-j", "1", "--max-cost-usd", "0.06", "--results", str(results)]
    )
    out, _ = capsys.readouterr()
    assert code == EXIT_MAX_COST == 4
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"]) == (False, False)
    stopped = document["stopped"]
    assert stopped["by"] == "max-cost" and stopped["limit_usd"] == 0.06
    assert 0 < stopped["spent_usd"] <= 0.06
    # The runs made are the finished scenarios' (-j 1: one run at a time, whole scenarios).
    made = sum(len(s["runs"]) for s in document["scenarios"])
    assert 0 < len(document["scenarios"]) < 8 and made <= stopped["runs"]
    first = document["scenarios"][0]
    assert re.search(rf"{first['skill']}/{first['id']}\s+{first['verdict']}\s", out)  # the table
    assert f"stopped, results incomplete: {stopped['reason']}" in out
    # The gate does not take a stopped run for a finished one.
    assert main(["gate", str(results), "--allow-offline"]) == 1
    assert f"{results}: incomplete (stopped: {stopped['reason']})" in capsys.readouterr().out


def test_max_cost_stops_a_replayed_trigger_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    code = main(
        [
            "triggers",
            "lgtm",
            "--replay",
            "tests/cassettes",
            "-j",
            "1",
            "--max-cost-usd",
            "0.8",
            "--results",
            str(results),
            "--output-dir",
            str(tmp_path / "output"),
        ]
    )
    assert code == 4
    document = json.loads(results.read_text())
    assert document["complete"] is False and document["stopped"]["by"] == "max-cost"
    queries = [q for suite in document["suites"] for q in suite["queries"]]
    assert 0 < len(queries) < 8
    assert all(q["total"] == 6 for q in queries)  # a query is whole or left out
    capsys.readouterr()
