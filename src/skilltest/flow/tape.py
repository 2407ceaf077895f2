"""Record and replay as a run asks for them: ``record``, ``replay``, ``record_missing``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from skilltest.errors import InputError


@dataclass(frozen=True)
class Tape:
    """What ``--record``, ``--replay`` and ``--record-missing`` ask of a run."""

    directory: Path | None = None
    """The cassette folder."""
    recording: bool = False
    """Model exchanges go to the backend through a recording point and into cassettes."""
    replaying: bool = False
    """Answers come from the cassettes first."""
    record_missing: bool = False
    """What the cassettes miss runs live and is recorded."""

    @property
    def replay_only(self) -> bool:
        """Answers come from the cassettes alone: no credentials, no model script, no API."""
        return self.replaying and not self.record_missing

    def to_dict(self, *, misses: Sequence[str] = ()) -> dict[str, Any] | None:
        """How a results file records it; ``None`` when nothing was recorded or replayed."""
        if self.directory is None:
            return None
        mode = "record-missing" if self.record_missing else "replay" if self.replaying else "record"
        return {
            "mode": mode,
            "directory": str(self.directory),
            "misses": list(misses),
        }


class TapeOptions(Protocol):
    """The options a layer that records and replays takes (``ComparedOptions``,
    ``TriggerOptions``)."""

    @property
    def record(self) -> Path | None: ...

    @property
    def replay(self) -> Path | None: ...

    @property
    def record_missing(self) -> bool: ...

    @property
    def against(self) -> str | None: ...


def tape_of(options: TapeOptions, *, layer: str) -> Tape:
    """The run's tape, checked; ``--against`` with a tape is refused too.

    Raises:
        InputError: ``record`` with ``replay``, ``record_missing`` without ``replay``, a
            ``replay`` folder that does not exist, or ``against`` with either (the previous
            revision's requests are in no cassette, so it always runs live).
    """
    if options.record is not None and options.replay is not None:
        raise InputError(
            "--record and --replay exclude each other",
            location="--record",
            fix="record with --record DIR; replay with --replay DIR, adding --record-missing "
            "to record what the cassettes lack",
        )
    if options.record_missing and options.replay is None:
        raise InputError(
            "--record-missing needs --replay DIR",
            location="--record-missing",
            fix="--replay DIR --record-missing replays what DIR holds and records the rest",
        )
    if options.replay is not None and not options.replay.is_dir():
        raise InputError(
            f"no cassette folder at {options.replay}",
            location="--replay",
            fix=f"record one first: skilltest {layer} --record {options.replay}",
        )
    tape = Tape(
        directory=options.record or options.replay,
        recording=options.record is not None or options.record_missing,
        replaying=options.replay is not None,
        record_missing=options.record_missing,
    )
    if options.against is not None and tape.directory is not None:
        raise InputError(
            "--against runs the previous revision live; it does not record or replay",
            location=f"--against {options.against}",
            fix="drop the cassette options for a revision A/B run",
        )
    return tape


def miss_summary(misses: int) -> str:
    """The closing line of a run whose cassettes missed requests."""
    return (
        f"{misses} replay miss{'es' if misses != 1 else ''}: re-record with --record "
        "(or --record-missing)"
    )
