"""The ids of a suite's entries (scenarios, trigger queries): each is used once in its suite."""

from __future__ import annotations

from skilltest.errors import SuiteError


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
