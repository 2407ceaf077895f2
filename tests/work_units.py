"""How ``make test`` splits the suite between its pytest-xdist workers (``--dist loadfile``).

A work unit is one test file, or every file that reads one shared run of the example suites
(:data:`tests.example_runs.READERS`), so that the run is made once, on the worker that runs all
its readers. Units go out heaviest first: those holding a test marked ``slow``, then by how many
of their tests drive the real ``claude`` CLI (marked ``cli``, or asking for ``claude_bin``),
then the rest in the order they were collected. The many light files come last and fill in
around the heavy ones, so both workers finish together instead of one of them running a long
file that started late while the other has nothing left.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadFileScheduling

from .example_runs import work_unit


def unit_of(item: pytest.Item) -> str:
    """The work unit of a collected test."""
    return work_unit(item.nodeid.split("::", 1)[0])


def drives_the_cli(item: pytest.Item) -> bool:
    """Whether a test runs the real ``claude`` CLI, by its marks and fixtures."""
    return item.get_closest_marker("cli") is not None or "claude_bin" in getattr(
        item, "fixturenames", ()
    )


def heaviest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` unit by unit, the heaviest unit first; in each unit, as collected."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(unit_of(item), []).append(item)

    def weight(tests: list[pytest.Item]) -> tuple[bool, int]:
        slow = any(test.get_closest_marker("slow") is not None for test in tests)
        return slow, sum(drives_the_cli(test) for test in tests)

    ordered = sorted(units.values(), key=weight, reverse=True)  # stable: ties keep their order
    return [item for tests in ordered for item in tests]


class SharedRunScheduling(LoadFileScheduling):
    """``--dist loadfile`` with the readers of a shared run in one unit, and the units handed
    out in the order the workers collected them (:func:`heaviest_first`)."""

    def _split_scope(self, nodeid: str) -> str:
        return work_unit(super()._split_scope(nodeid))

    def schedule(self) -> None:
        # xdist would reorder the units by their number of tests: a file of a hundred quick
        # table cases would go before one example-suite run of several minutes.
        self.config.option.loadscopereorder = False
        super().schedule()
