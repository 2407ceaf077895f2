"""A dataclass's fields as a plain dict, and summed: the token counts of a results file keep
their keys and order, and are summed field by field."""

from __future__ import annotations

import json

from skilltest.cost.estimate import Tokens
from skilltest.transcript import Usage
from skilltest.triggers.verdict import Confusion
from skilltest.world.calls import EgressViolation


def test_a_usage_is_written_with_the_api_s_keys_in_their_order():
    assert json.dumps(Usage(1, 2, 3, 4).to_dict()) == (
        '{"input_tokens": 1, "output_tokens": 2, '
        '"cache_creation_input_tokens": 3, "cache_read_input_tokens": 4}'
    )


def test_the_counts_come_before_the_metrics_of_a_confusion():
    keys = list(Confusion(tp=1, fn=2, fp=3, tn=4).to_dict())
    assert keys == ["tp", "fn", "fp", "tn", "precision", "recall", "accuracy"]


def test_a_violation_s_values_are_given_as_they_are():
    violation = EgressViolation("10.0.0.1", None, "https", "not declared", 1.5, url="x:443")
    assert violation.to_dict() == {
        "host": "10.0.0.1",
        "port": None,
        "scheme": "https",
        "reason": "not declared",
        "at": 1.5,
        "url": "x:443",
    }


def test_counts_are_summed_field_by_field():
    assert Usage(1, 2, 3, 4) + Usage(10, 20, 30, 40) == Usage(11, 22, 33, 44)
    total = Tokens(1, 2, 3, 4, 5, 0.25) + Tokens(10, 20, 30, 40, 50, 0.5)
    assert total == Tokens(11, 22, 33, 44, 55, 0.75)
    assert total.read == 22 + 33 + 44
