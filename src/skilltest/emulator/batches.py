"""The Message Batches API on the emulator: what a script says about batches, and the batches a
server holds.

A batch's requests are answered by the script when the batch is created, in the order they came,
exactly as ``POST /v1/messages`` would answer them one by one; the answers stay hidden until the
batch has *ended*, which happens once it has been polled ``polls`` times and is
``processing_ms`` old (the script's ``batches:``). Until then a retrieve says ``in_progress``
and every request counts as ``processing``, as on the real API. A rule's ``batch:`` makes the
requests it answers end another way (``errored``, ``expired``, ``canceled``), and the script's
``batches: {end: ...}`` makes a whole batch expire or be canceled.

A :class:`BatchStore` may keep its batches in a folder, one JSON file per batch, so that a
client that stopped polling (and an emulator started again on the same folder) finds the batch
where it was: this is how an interrupted ``skilltest pressure --batch`` resumes offline.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import string
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

MAX_BATCH_REQUESTS = 100_000
"""The most requests one batch may hold (the API's limit)."""
MAX_BATCH_BYTES = 256 * 1024 * 1024
"""The largest body a batch may be created with (the API's limit: 256 MB)."""
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What a request's ``custom_id`` may be."""
EXPIRES_AFTER = dt.timedelta(hours=24)
"""How long the API gives a batch before its unprocessed requests expire."""

BatchEnd = Literal["expired", "canceled"]
OutcomeKind = Literal["errored", "expired", "canceled"]
RESULT_TYPES = ("succeeded", "errored", "canceled", "expired")
"""The results a request of a batch can end with, as ``request_counts`` names them."""

_ID_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class BatchBehaviour:
    """How the script's batches go (its top-level ``batches:``)."""

    polls: int = 0
    """Retrieves answered ``in_progress`` before a batch has ended (0: ended at the first)."""
    processing_ms: int = 0
    """A batch does not end before it is this old."""
    end: BatchEnd | None = None
    """``expired``: the 24 hours ran out; ``canceled``: someone canceled it. Every request that
    would have succeeded ends that way; ``None``: batches end normally."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchBehaviour:
        """From the (schema-validated) ``batches:`` mapping."""
        return cls(
            polls=int(data.get("polls", 0)),
            processing_ms=int(data.get("processing_ms", 0)),
            end=data.get("end"),
        )


@dataclass(frozen=True)
class BatchOutcome:
    """How a rule's requests end when they come in a batch (its ``batch:``)."""

    result: OutcomeKind
    """``errored`` (with ``status``'s error), ``expired`` or ``canceled``."""
    status: int = 500
    """The HTTP status whose Anthropic error an ``errored`` result carries."""
    message: str | None = None
    """The error's message (default: the status's usual one)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BatchOutcome:
        """From a rule's (schema-validated) ``batch:`` mapping."""
        return cls(
            result=data["result"],
            status=int(data.get("status", 500)),
            message=data.get("message"),
        )


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _stamp(moment: dt.datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


@dataclass
class _Batch:
    id: str
    created_at: dt.datetime
    results: list[dict[str, Any]]
    """One ``{"custom_id", "result"}`` line per request, in request order."""
    behaviour: BatchBehaviour
    polls: int = 0
    ended_at: dt.datetime | None = None
    cancel_initiated_at: dt.datetime | None = None

    @property
    def status(self) -> str:
        if self.ended_at is not None:
            return "ended"
        return "canceling" if self.cancel_initiated_at is not None else "in_progress"

    def counts(self) -> dict[str, int]:
        tally = dict.fromkeys(("processing", *RESULT_TYPES), 0)
        if self.ended_at is None:
            tally["processing"] = len(self.results)
        else:
            for line in self.results:
                tally[line["result"]["type"]] += 1
        return tally

    def view(self, base_url: str) -> dict[str, Any]:
        """The ``message_batch`` object, as the API returns it."""
        return {
            "id": self.id,
            "type": "message_batch",
            "processing_status": self.status,
            "request_counts": self.counts(),
            "ended_at": _stamp(self.ended_at),
            "created_at": _stamp(self.created_at),
            "expires_at": _stamp(self.created_at + EXPIRES_AFTER),
            "archived_at": None,
            "cancel_initiated_at": _stamp(self.cancel_initiated_at),
            "results_url": (
                f"{base_url}/v1/messages/batches/{self.id}/results"
                if self.ended_at is not None
                else None
            ),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "created_at": _stamp(self.created_at),
            "polls": self.polls,
            "ended_at": _stamp(self.ended_at),
            "cancel_initiated_at": _stamp(self.cancel_initiated_at),
            "behaviour": {
                "polls": self.behaviour.polls,
                "processing_ms": self.behaviour.processing_ms,
                "end": self.behaviour.end,
            },
            "results": self.results,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> _Batch:
        def moment(key: str) -> dt.datetime | None:
            value = data.get(key)
            return None if value is None else dt.datetime.fromisoformat(value)

        created = moment("created_at")
        assert created is not None
        return cls(
            id=str(data["id"]),
            created_at=created,
            results=list(data["results"]),
            behaviour=BatchBehaviour.from_dict(data.get("behaviour") or {}),
            polls=int(data.get("polls", 0)),
            ended_at=moment("ended_at"),
            cancel_initiated_at=moment("cancel_initiated_at"),
        )

    def advance(self) -> None:
        """One retrieve: the batch ends once polled and aged as its behaviour says."""
        if self.ended_at is not None:
            return
        if self.cancel_initiated_at is not None:
            self._end("canceled")
            return
        age_ms = (_now() - self.created_at).total_seconds() * 1000
        if self.polls >= self.behaviour.polls and age_ms >= self.behaviour.processing_ms:
            self._end(self.behaviour.end)
            return
        self.polls += 1

    def _end(self, how: BatchEnd | None) -> None:
        if how is not None:
            for line in self.results:
                if line["result"]["type"] == "succeeded":
                    line["result"] = {"type": how}
        self.ended_at = _now()


class BatchStore:
    """The batches one emulator holds; thread-safe. With ``folder``, each batch is also a JSON
    file there, read back by a store opened on the same folder later."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.created = 0
        """Batches created through this store (not those read back from the folder)."""
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()

    def create(
        self, results: Sequence[dict[str, Any]], behaviour: BatchBehaviour, base_url: str
    ) -> dict[str, Any]:
        """A new batch whose requests end with ``results`` (one ``{"custom_id", "result"}``
        each); returns the batch as created."""
        import secrets  # the emulator serving batches, not a script being read

        batch = _Batch(
            id="msgbatch_01" + "".join(secrets.choice(_ID_ALPHABET) for _ in range(22)),
            created_at=_now(),
            results=[dict(line) for line in results],
            behaviour=behaviour,
        )
        with self._lock:
            self._batches[batch.id] = batch
            self.created += 1
            self._save(batch)
            return batch.view(base_url)

    def retrieve(self, batch_id: str, base_url: str) -> dict[str, Any] | None:
        """The batch after one more poll; ``None`` when there is no such batch."""
        with self._lock:
            batch = self._get(batch_id)
            if batch is None:
                return None
            batch.advance()
            self._save(batch)
            return batch.view(base_url)

    def results(self, batch_id: str) -> list[dict[str, Any]] | str | None:
        """The result lines of an ended batch; its status when it has not ended; ``None`` when
        there is no such batch."""
        with self._lock:
            batch = self._get(batch_id)
            if batch is None:
                return None
            if batch.ended_at is None:
                return batch.status
            return [dict(line) for line in batch.results]

    def cancel(self, batch_id: str, base_url: str) -> dict[str, Any] | None:
        """Starts canceling a batch (its next retrieve ends it, every request not processed
        ``canceled``); ``None`` when there is no such batch."""
        with self._lock:
            batch = self._get(batch_id)
            if batch is None:
                return None
            if batch.ended_at is None and batch.cancel_initiated_at is None:
                batch.cancel_initiated_at = _now()
                self._save(batch)
            return batch.view(base_url)

    def delete(self, batch_id: str) -> bool | None:
        """Deletes an ended batch: ``True``; ``False`` when it has not ended; ``None`` when
        there is no such batch."""
        with self._lock:
            batch = self._get(batch_id)
            if batch is None:
                return None
            if batch.ended_at is None:
                return False
            del self._batches[batch_id]
            if self.folder is not None:
                (self.folder / f"{batch_id}.json").unlink(missing_ok=True)
            return True

    def listing(self, base_url: str) -> list[dict[str, Any]]:
        """Every batch this store holds in memory, the most recent first."""
        with self._lock:
            batches = sorted(self._batches.values(), key=lambda b: b.created_at, reverse=True)
            return [batch.view(base_url) for batch in batches]

    def _get(self, batch_id: str) -> _Batch | None:
        batch = self._batches.get(batch_id)
        if batch is not None or self.folder is None or not CUSTOM_ID.match(batch_id):
            return batch
        path = self.folder / f"{batch_id}.json"
        try:
            batch = _Batch.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self._batches[batch_id] = batch
        return batch

    def _save(self, batch: _Batch) -> None:
        if self.folder is None:
            return
        from skilltest.report.files import write_json_atomic

        write_json_atomic(self.folder / f"{batch.id}.json", batch.to_dict())
