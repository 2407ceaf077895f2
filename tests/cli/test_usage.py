"""An argument a command does not know: the command's own usage, the nearest option it has,
exit 2."""

from __future__ import annotations

import pytest

from skilltest.cli import main


@pytest.mark.parametrize(
    ("argv", "usage", "error"),
    [
        (
            ["pressure", "--repat", "3"],
            "usage: skilltest pressure [-h]",
            "skilltest pressure: error: unrecognized arguments: --repat (did you mean --repeat?)",
        ),
        (
            ["scenarios", "--html", "report.html"],
            "usage: skilltest scenarios [-h]",
            "skilltest scenarios: error: unrecognized arguments: --html (did you mean --report?)",
        ),
        (
            ["gate", "results.json", "--allow-ofline"],
            "usage: skilltest gate [-h]",
            "skilltest gate: error: unrecognized arguments: --allow-ofline "
            "(did you mean --allow-offline?)",
        ),
        (
            ["triggers", "--frobnicate"],
            "usage: skilltest triggers [-h]",
            "skilltest triggers: error: unrecognized arguments: --frobnicate",
        ),
    ],
)
def test_an_unknown_option_shows_the_commands_usage_and_the_nearest_option(
    argv, usage, error, capsys
):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(usage)
    assert captured.err.endswith(f"\n{error}\n")
    assert "COMMAND ..." not in captured.err  # not the top level's usage


@pytest.mark.parametrize("command", ["pressure", "scenarios", "triggers"])
def test_the_claude_option_names_the_cache_skilltest_setup_fills(command, capsys):
    assert main([command, "--help"]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert (
        "--claude CLAUDE claude binary (default: $SKILLTEST_CLAUDE, .tools/, the cache "
        "`skilltest setup` fills (~/.cache/skilltest, or $SKILLTEST_CACHE_DIR), PATH)"
    ) in shown
