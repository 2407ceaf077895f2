"""Which shard runs what: the split is the same everywhere, whole scenarios, balanced."""

from __future__ import annotations

import hashlib

import pytest

from skilltest.flow.shard import Shard, assign, unit_hash


@pytest.mark.parametrize(
    ("text", "shard"), [("1/1", Shard(1, 1)), ("2/4", Shard(2, 4)), (" 4/4 ", Shard(4, 4))]
)
def test_shard_reads_i_of_n(text, shard):
    assert Shard.parse(text) == shard
    assert str(shard) == text.strip()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0/4", "0/4: i must be from 1 to n (e.g. 1/4 to 4/4)"),
        ("5/4", "5/4: i must be from 1 to n (e.g. 1/4 to 4/4)"),
        ("1/0", "1/0: i must be from 1 to n (e.g. 1/4 to 4/4)"),
        ("2", "2 is not i/n (e.g. 1/4: the first of four shards)"),
        ("a/b", "a/b is not i/n (e.g. 1/4: the first of four shards)"),
        ("-1/4", "-1/4 is not i/n (e.g. 1/4: the first of four shards)"),
    ],
)
def test_a_shard_that_is_not_i_of_n_is_refused_with_why(text, message):
    with pytest.raises(ValueError) as caught:
        Shard.parse(text)
    assert str(caught.value) == message


UNITS = [f"skill-{s}/scenario-{i}" for s in range(3) for i in range(67)]


def test_the_hash_is_sha256_not_pythons_own():
    # Python's hash of a str changes with PYTHONHASHSEED; this number never does.
    assert unit_hash("lgtm/jq-extraction") == int(
        hashlib.sha256(b"lgtm/jq-extraction").hexdigest()[:16], 16
    )


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_every_unit_goes_to_one_shard_and_the_shards_differ_by_one_at_most(count):
    shards = assign(UNITS, count)
    assert set(shards) == set(UNITS)
    sizes = [sum(1 for s in shards.values() if s == i) for i in range(1, count + 1)]
    assert max(sizes) - min(sizes) <= 1
    # The same split whatever order the units come in (another machine, another listing).
    assert assign(list(reversed(UNITS)), count) == shards


def test_durations_balance_the_shards_longest_first():
    durations = {"s/a": 10.0, "s/b": 7.0, "s/c": 5.0, "s/d": 3.0, "s/e": 2.0, "s/f": 1.0}
    shards = assign(list(durations), 2, durations)
    loads = [sum(d for u, d in durations.items() if shards[u] == i) for i in (1, 2)]
    # Longest first, each to the least loaded: a|b, c->b, d->a, e->b (a 13, b 14), f->a.
    assert shards == {"s/a": 1, "s/b": 2, "s/c": 2, "s/d": 1, "s/e": 2, "s/f": 1}
    assert loads == [14.0, 14.0]


def test_a_unit_the_durations_do_not_know_counts_as_their_median():
    durations = {"s/a": 9.0, "s/b": 3.0, "s/c": 1.0}
    # s/new weighs 3.0 (the median): a -> 1, then b and new (3.0 each) and c fill shard 2.
    shards = assign(["s/a", "s/b", "s/c", "s/new"], 2, durations)
    assert shards["s/a"] == 1
    assert {shards["s/b"], shards["s/new"], shards["s/c"]} == {2}
