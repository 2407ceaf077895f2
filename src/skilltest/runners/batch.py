"""One-turn requests through the Message Batches API: submit many at once, poll, read results.

A batch costs half the price of the same requests sent one by one, and is answered when the API
gets to it (most batches within an hour, at most 24 hours). :class:`BatchRunner` speaks it through
the real SDK (``client.messages.batches``): :meth:`~BatchRunner.submit` creates one batch,
:meth:`~BatchRunner.poll` retrieves its status, :meth:`~BatchRunner.results` reads its results
and turns each into the same :class:`~skilltest.transcript.Transcript` a direct request gives
(:func:`skilltest.runners.messages.transcript_from_message`), so judging never knows how an
answer came. A request that errored, expired or was canceled comes back as a transcript with
``error`` saying so: it is a run error, never a score.

:func:`split` cuts a run's requests into batches the API accepts: at most
:data:`MAX_BATCH_REQUESTS` requests and :data:`MAX_BATCH_BYTES` bytes each, and one API version
per batch (a request with a temperature needs the version that still reads it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import anthropic

from skilltest.errors import InputError, RunError
from skilltest.runners.anthropic_api import SAMPLING_API_VERSION, SdkClient, _connection_problem
from skilltest.runners.base import TurnRequest
from skilltest.runners.messages import api_error, error_message, transcript_from_message
from skilltest.transcript import Transcript
from skilltest.transcript.origin import BATCH_RULE_KEY, AnsweredBy, ScriptRule

MAX_BATCH_REQUESTS = 100_000
"""The most requests the API takes in one batch."""
MAX_BATCH_BYTES = 256 * 1000 * 1000
"""The largest batch the API takes (256 MB), counted as the JSON body sent."""
PRICE_FACTOR = 0.5
"""What a batch request costs, as a share of the same request sent directly."""

SUCCEEDED, ERRORED, EXPIRED, CANCELED = "succeeded", "errored", "expired", "canceled"
RESULT_TYPES = (SUCCEEDED, ERRORED, EXPIRED, CANCELED)
"""How a request of a batch can end."""


@dataclass(frozen=True)
class BatchItem:
    """One request of a batch."""

    custom_id: str
    """Names the request within its batch (letters, digits, ``_`` and ``-``, at most 64)."""
    params: dict[str, Any]
    """The Messages request, as ``POST /v1/messages`` would take it."""
    version: str | None = None
    """The ``anthropic-version`` it needs; ``None``: the SDK's."""

    @property
    def size(self) -> int:
        """Its bytes in the batch's JSON body (and a comma)."""
        item = {"custom_id": self.custom_id, "params": self.params}
        return len(json.dumps(item, ensure_ascii=False).encode("utf-8")) + 1


def split(
    items: Sequence[BatchItem],
    *,
    max_requests: int | None = None,
    max_bytes: int | None = None,
) -> list[list[BatchItem]]:
    """``items`` cut into batches of one API version, at most ``max_requests`` requests and
    ``max_bytes`` bytes of body each (default: the API's limits), in their order.

    Raises:
        InputError: one request alone is larger than ``max_bytes``.
    """
    max_requests = max_requests or MAX_BATCH_REQUESTS
    max_bytes = max_bytes or MAX_BATCH_BYTES
    envelope = len(b'{"requests": []}')
    batches: list[list[BatchItem]] = []
    for version in dict.fromkeys(item.version for item in items):
        current: list[BatchItem] = []
        size = envelope
        for item in (item for item in items if item.version == version):
            if item.size + envelope > max_bytes:
                raise InputError(
                    f"one request is {item.size:,} bytes; a batch holds at most {max_bytes:,}",
                    location=item.custom_id,
                    fix="shorten the skill or the prompt, or run without --batch",
                )
            if current and (len(current) >= max_requests or size + item.size > max_bytes):
                batches.append(current)
                current, size = [], envelope
            current.append(item)
            size += item.size
        if current:
            batches.append(current)
    return batches


@dataclass(frozen=True)
class BatchStatus:
    """What one poll of a batch said."""

    id: str
    """The batch (``msgbatch_...``)."""
    processing_status: str
    """``in_progress``, ``canceling`` or ``ended``; ``failed`` when it could not be read."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """``processing``, ``succeeded``, ``errored``, ``canceled``, ``expired``."""
    problem: str | None = None
    """Why the poll failed (``processing_status`` is then ``failed``)."""
    missing: bool = False
    """The API does not know the batch (404): polling again will not help."""

    @property
    def ended(self) -> bool:
        """The batch's results can be read."""
        return self.processing_status == "ended"

    @property
    def requests(self) -> int:
        """How many requests it holds."""
        return sum(self.counts.values())


@dataclass(frozen=True)
class BatchAnswer:
    """How one request of a batch ended."""

    result: str
    """``succeeded``, ``errored``, ``expired`` or ``canceled``."""
    transcript: Transcript
    """The answer as a transcript; ``error`` set unless it succeeded."""
    message: Mapping[str, Any] | None = None
    """The Messages API message, as JSON (succeeded only): what a cassette records."""
    emulator_rule: str | None = None
    """The emulator's naming of the model script's rule that answered, as its results line
    carried it (the value a direct answer's rule header has); ``None`` from anything else."""


class BatchRunner(SdkClient):
    """Submits one-turn requests as Message Batches through the SDK and reads their answers.

    The same client as :class:`~skilltest.runners.anthropic_api.AnthropicRunner`: credentials
    and base URL from the environment unless given, the SDK's retries (429, 5xx) on every call,
    answers redacted of the credentials.
    """

    @property
    def base_url(self) -> str:
        """Where the batches go."""
        return str(self._client.base_url).rstrip("/")

    def item(self, custom_id: str, request: TurnRequest) -> BatchItem:
        """The batch request of one run: the body a direct request sends, the run named in its
        metadata for the emulator, and the API version a temperature needs."""
        params = self._body(request)
        version = SAMPLING_API_VERSION if request.temperature is not None else None
        return BatchItem(custom_id, params, version)

    async def submit(self, items: Sequence[BatchItem]) -> str:
        """Creates one batch of ``items`` (all of one API version); returns its id.

        Raises:
            BatchError: the API refused the batch or could not be reached (after retries).
        """
        versions = {item.version for item in items}
        assert len(versions) == 1, "a batch is sent with one API version"
        version = versions.pop()
        requests: Iterable[Any] = [{"custom_id": i.custom_id, "params": i.params} for i in items]
        headers = {"anthropic-version": version} if version else None
        try:
            batch = await self._client.messages.batches.create(
                requests=requests, extra_headers=headers
            )
        except anthropic.APIError as exc:
            raise BatchError(self._problem(exc)) from exc
        return batch.id

    async def poll(self, batch_id: str) -> BatchStatus:
        """The batch's status now; a poll that failed says why (never raises)."""
        try:
            batch = await self._client.messages.batches.retrieve(batch_id)
        except anthropic.APIError as exc:
            missing = isinstance(exc, anthropic.NotFoundError)
            return BatchStatus(batch_id, "failed", problem=self._problem(exc), missing=missing)
        return BatchStatus(
            batch.id, batch.processing_status, batch.request_counts.model_dump(mode="json")
        )

    async def cancel(self, batch_id: str) -> BatchStatus:
        """Asks the API to cancel the batch; returns its status after the request."""
        try:
            batch = await self._client.messages.batches.cancel(batch_id)
        except anthropic.APIError as exc:
            return BatchStatus(batch_id, "failed", problem=self._problem(exc))
        return BatchStatus(
            batch.id, batch.processing_status, batch.request_counts.model_dump(mode="json")
        )

    async def results(self, batch_id: str) -> dict[str, BatchAnswer]:
        """How each request of an ended batch ended, by ``custom_id``.

        Raises:
            BatchError: the results could not be read (after retries), or a line is not a
                batch result.
        """
        answers: dict[str, BatchAnswer] = {}
        try:
            # The lines as the API wrote them (not the SDK's models of them): a cassette
            # records the message exactly as a direct request's answer is recorded.
            results = self._client.messages.batches.with_streaming_response.results(batch_id)
            async with results as response:
                answered_by = self.answered_by(response.headers)
                async for text in response.iter_lines():
                    if text.strip():
                        line = json.loads(text)
                        custom_id, answer = self._answer(line)
                        named = self._rule(line, answered_by)
                        found = ScriptRule.from_header(named) if named is not None else None
                        transcript = replace(
                            answer.transcript,
                            answered_by=answered_by,
                            emulator_rules=() if found is None else (found.seen_from(os.getcwd()),),
                        )
                        answers[custom_id] = replace(
                            answer, transcript=transcript, emulator_rule=named
                        )
        except anthropic.APIError as exc:
            raise BatchError(self._problem(exc)) from exc
        except (ValueError, TypeError, AttributeError) as exc:
            raise BatchError(f"unreadable results of batch {batch_id}: {exc}") from exc
        return answers

    @staticmethod
    def _rule(line: Any, answered_by: AnsweredBy) -> str | None:
        """The model script's rule the emulator named on a results line; none from anything
        that is not the emulator."""
        value = line.get(BATCH_RULE_KEY) if isinstance(line, Mapping) else None
        if answered_by.emulator is None or not isinstance(value, str):
            return None
        return value

    def _answer(self, line: Any) -> tuple[str, BatchAnswer]:
        if not isinstance(line, Mapping) or not isinstance(line.get("custom_id"), str):
            raise ValueError("a line without a custom_id")
        result = line.get("result")
        kind = result.get("type") if isinstance(result, Mapping) else None
        custom_id = line["custom_id"]
        if kind == SUCCEEDED:
            assert isinstance(result, Mapping)
            message = result.get("message")
            if not isinstance(message, Mapping):
                raise ValueError(f"{custom_id}: a succeeded result without a message")
            transcript = transcript_from_message(message, source=self.backend)
            texts = tuple(self._redact(text) for text in transcript.assistant_text)
            transcript = replace(transcript, assistant_text=texts)
            return custom_id, BatchAnswer(SUCCEEDED, transcript, message)
        if kind == ERRORED:
            assert isinstance(result, Mapping)
            error = error_message(result.get("error"), "no error given")
            text = f"batch request errored: {error}"
        elif kind == EXPIRED:
            text = (
                "batch request expired: the batch ended (24 hours after it was created) before "
                "this request was processed; run it again"
            )
        elif kind == CANCELED:
            text = "batch request canceled: the batch was canceled before this request was run"
        else:
            raise ValueError(f"{custom_id}: unknown result type {kind!r}")
        return custom_id, BatchAnswer(
            kind, Transcript(source=self.backend, error=self._redact(text))
        )

    def _problem(self, exc: anthropic.APIError) -> str:
        if isinstance(exc, anthropic.APIStatusError):
            body = exc.body if isinstance(exc.body, dict) else None
            return self._redact(api_error(exc.status_code, body, self.max_retries))
        if isinstance(exc, anthropic.APITimeoutError):
            return f"API request timed out (after {self.max_retries} retries)"
        if isinstance(exc, anthropic.APIConnectionError):
            return self._redact(
                f"API connection failed: {_connection_problem(exc)} "
                f"(after {self.max_retries} retries)"
            )
        return self._redact(f"API error: {exc}")


class BatchError(RunError):
    """A batch could not be created, or its results read: its runs are unscored, with this
    message as their error."""
