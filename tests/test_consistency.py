"""pass@k and pass^k against values computed by hand from C(n, k)."""

import pytest

from skilltest.stats import consistency, pass_at_k, pass_hat_k


@pytest.mark.parametrize(
    ("n", "c", "k", "at_k", "hat_k"),
    [
        (3, 0, 3, 0.0, 0.0),  # no run passed
        (3, 2, 3, 1.0, 0.0),  # n == k: some passed, not all
        (3, 3, 3, 1.0, 1.0),
        (5, 3, 3, 1.0, 0.1),  # C(2,3) = 0; C(3,3)/C(5,3) = 1/10
        (10, 4, 3, 5 / 6, 1 / 30),  # 1 - C(6,3)/C(10,3) = 1 - 20/120; C(4,3)/120 = 4/120
        (4, 4, 3, 1.0, 1.0),
        (10, 8, 1, 0.8, 0.8),  # k = 1: both are the pass rate
        (2, 1, 3, 1.0, 0.0),  # fewer runs than k: estimated at k = n = 2
    ],
)
def test_pass_at_k_and_pass_hat_k_match_hand_computed_values(n, c, k, at_k, hat_k):
    assert pass_at_k(n, c, k) == pytest.approx(at_k)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k)


def test_no_runs_give_no_estimate_and_the_k_used_is_recorded():
    assert consistency(0, 0, 3) == {"k": 3, "pass_at_k": None, "pass_hat_k": None}
    assert consistency(2, 1, 3) == {"k": 2, "pass_at_k": 1.0, "pass_hat_k": 0.0}


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 3), (3, -1, 3), (3, 1, 0)])
def test_impossible_counts_are_refused(n, c, k):
    with pytest.raises(ValueError, match="need 0 <= c <= n"):
        pass_at_k(n, c, k)
