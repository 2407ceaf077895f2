"""Command-line values: what is refused, and how it reads."""

import pytest

from skilltest.cli import main

REFUSED = [
    (["pressure", "-k", "0"], "argument -k/--repeat: 0 is not a whole number >= 1"),
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
