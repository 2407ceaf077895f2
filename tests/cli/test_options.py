"""Command-line values: what is refused, and how it reads."""

import pytest

from skilltest.cli import main

REFUSED = [
    (
        ["pressure", "-k", "0"],
        "argument -k/--repeat: 0 is not a whole number from 1 to 1000, nor 'auto'",
    ),
    (
        ["pressure", "-k", "1000000000"],
        "argument -k/--repeat: 1000000000 is not a whole number from 1 to 1000, nor 'auto'",
    ),
    (
        ["scenarios", "--max-k", "5000"],
        "argument --max-k: 5000 is not a whole number from 1 to 1000 (the most runs per arm "
        "skilltest takes)",
    ),
    (
        ["scenarios", "--min-k", "0"],
        "argument --min-k: 0 is not a whole number from 1 to 1000 (the most runs per arm "
        "skilltest takes)",
    ),
    (["pressure", "-j", "two"], "argument -j/--jobs: two is not a whole number >= 1"),
    (
        ["pressure", "--threshold", "1.5"],
        "argument --threshold: 1.5 is not a number between 0 and 1",
    ),
    (
        ["pressure", "--threshold", "nan"],
        "argument --threshold: nan is not a number between 0 and 1",
    ),
    (["pressure", "--timeout", "0"], "argument --timeout: 0 is not a number above 0"),
    (["pressure", "--max-retries", "-1"], "argument --max-retries: -1 is not a whole number >= 0"),
    (["scenarios", "--min-score", "2"], "argument --min-score: 2 is not a number between 0 and 1"),
    (["scenarios", "--min-delta", "3"], "argument --min-delta: 3 is not a number between -1 and 1"),
    (["pressure", "--backend", "gpt"], "argument --backend: invalid choice: 'gpt'"),
    (["nonsense"], "invalid choice: 'nonsense'"),
]


@pytest.mark.parametrize(("argv", "message"), REFUSED)
def test_bad_values_are_usage_errors_with_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_no_command_prints_the_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "pressure" in capsys.readouterr().err


def test_min_k_above_max_k_is_bad_input(capsys, monkeypatch):
    from tests.conftest import REPO_ROOT

    monkeypatch.chdir(REPO_ROOT)
    assert main(["pressure", "-k", "auto", "--min-k", "8", "--max-k", "4"]) == 2
    err = capsys.readouterr().err
    assert "--min-k: --min-k 8 is above --max-k 4" in err
    assert "fix: give --min-k at most --max-k" in err
