"""The ids of a suite's entries (scenarios, trigger queries): each is used once in its suite,
and one (skill, id) once among the suites a command runs."""

from __future__ import annotations

from collections.abc import Sequence

from skilltest.errors import InputError, SuiteError


class SuiteIds:
    """The ids of one suite's scenarios (or queries), noted as they are read in file order."""

    def __init__(self, *, noun: str = "scenario", items: str = "scenarios") -> None:
        """
        Args:
            noun: What an entry is, in messages (``scenario``, ``query``).
            items: The key the suite lists its entries under (``scenarios``, ``queries``).
        """
        self.noun = noun
        self.items = items
        self._first: dict[str, int] = {}

    def add(self, entry_id: str, index: int, where: str) -> None:
        """Notes that entry ``index`` of the list, at ``where``, has the id ``entry_id``.

        Raises:
            SuiteError: an earlier entry of the suite has that id.
        """
        if entry_id in self._first:
            raise SuiteError(
                f"duplicate {self.noun} id {entry_id!r} "
                f"(first used at /{self.items}/{self._first[entry_id]})",
                location=f"{where}/id",
                fix=f"give every {self.noun} in a suite its own id",
            )
        self._first[entry_id] = index


def check_unique_scenarios(entries: Sequence[tuple[str, str, str]]) -> None:
    """Refuses one (skill, scenario id) in two suites: reports and kept output would mix them.

    Args:
        entries: ``(skill, scenario id, file#/pointer)`` of every scenario to run.

    Raises:
        InputError: naming both places.
    """
    seen: dict[tuple[str, str], str] = {}
    for skill, scenario_id, location in entries:
        first = seen.setdefault((skill, scenario_id), location)
        if first != location:
            raise InputError(
                f"scenario {skill}/{scenario_id} is also defined at {first}",
                location=location,
                fix="give one of them another id, or run the suites separately",
            )
