"""What ``skilltest lint`` reports: one finding per problem, with its place and its fix."""

from __future__ import annotations

from dataclasses import dataclass

from skilltest.errors import InputError


@dataclass(frozen=True)
class Finding:
    """One problem in what a skill or plugin ships."""

    place: str
    """``file:line`` or ``file#/json/pointer``."""
    message: str
    """What is wrong."""
    fix: str
    """What to do about it."""
    check: str
    """Which check found it: ``front-matter``, ``link``, ``script``, ``plugin``,
    ``marketplace``, ``mcp-server`` or ``mcp-tool``."""

    def __str__(self) -> str:
        return f"{self.place}: {self.message}\n  fix: {self.fix}"

    @classmethod
    def from_error(cls, error: InputError, check: str, default_place: str) -> Finding:
        """A finding from an error that names its place and fix."""
        return cls(error.location or default_place, error.message, error.fix or "", check)
