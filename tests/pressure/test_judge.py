import pytest

from skilltest.errors import PatternError
from skilltest.patterns import compile_pattern, compile_patterns
from skilltest.pressure.judge import judge


def patterns(*sources):
    return compile_patterns(sources, "suite.yaml#/p")


def test_passes_when_every_required_pattern_matches_and_no_anti_pattern_does():
    result = judge(
        "First run count_over_time to aggregate, then fetch a sample.",
        patterns("(?i)count_over_time", "(?i)sample"),
        patterns("(?i)rm -rf"),
    )
    assert result.passed
    assert result.matched == ("(?i)count_over_time", "(?i)sample")
    assert result.missing == ()
    assert "count_over_time" in result.evidence["(?i)count_over_time"]


def test_missing_required_pattern_fails_and_is_named():
    result = judge("grep the logs", patterns("(?i)count_over_time", "(?i)grep"), ())
    assert not result.passed
    assert result.missing == ("(?i)count_over_time",)
    assert result.matched == ("(?i)grep",)


def test_anti_pattern_fails_even_when_required_ones_match():
    result = judge(
        "CREATE INDEX CONCURRENTLY ... or just CREATE INDEX idx",
        patterns("(?i)create index concurrently"),
        patterns("(?i)create index (?!concurrently)"),
    )
    assert not result.passed
    assert result.anti_matched == ("(?i)create index (?!concurrently)",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("I would grep the error logs", True), ("aggregate first", False)],
)
def test_expected_patterns_are_reported_separately(text, expected):
    result = judge(text, patterns("x"), (), patterns("(?i)grep.*log"))
    assert result.expected_matched is expected


def test_no_expected_patterns_reports_none():
    assert judge("text", patterns("t"), ()).expected_matched is None


def test_catastrophic_pattern_on_a_real_answer_raises_with_its_location():
    slow = compile_pattern(
        "(x+x+)+y",
        "suite.yaml#/scenarios/0/with_skill/required_patterns/0",
        probe=False,
        timeout_s=0.05,
    )
    with pytest.raises(PatternError) as caught:
        judge("x" * 5000, (slow,), ())
    assert str(caught.value).startswith(
        "suite.yaml#/scenarios/0/with_skill/required_patterns/0: pattern '(x+x+)+y' took longer"
    )
