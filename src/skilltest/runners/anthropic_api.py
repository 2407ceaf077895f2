"""Single-turn runs through the Anthropic SDK (the live API, or the emulator on loopback)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, TypedDict, Unpack

import anthropic
from anthropic.types import Message

from skilltest.errors import CredentialsError
from skilltest.redact import CREDENTIAL_VARIABLES, Redactor
from skilltest.runners.base import TurnRequest
from skilltest.runners.messages import api_error, wire_body
from skilltest.transcript import Transcript, Usage
from skilltest.transcript.origin import AnsweredBy, ScriptRule, emulator_mark, script_rule

DEFAULT_MAX_RETRIES = 4
DEFAULT_TIMEOUT_S = 120.0
SAMPLING_API_VERSION = "2023-06-01"
"""The API version that still accepts ``temperature``; used only when one is set."""
EXCERPT_CHARS = 120
"""How much of an unreadable reply's body an error quotes."""


def open_client(
    *,
    api_key: str | None,
    auth_token: str | None,
    base_url: str | None,
    max_retries: int,
    timeout_s: float,
) -> tuple[anthropic.AsyncAnthropic, Redactor]:
    """An SDK client (credentials and base URL from the environment when not given) and the
    redactor that keeps its credentials out of the answers.

    Raises:
        CredentialsError: no API key and no auth token.
    """
    api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    auth_token = auth_token or os.environ.get("ANTHROPIC_AUTH_TOKEN")
    if api_key is None and auth_token is None:
        raise CredentialsError(
            "the anthropic backend needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)\n"
            "  fix: export ANTHROPIC_API_KEY=..., or run offline with --backend emulator"
        )
    # A model that repeats the key (a prompt-injected skill, an echoing proxy) must not carry
    # it into answers, which are printed, judged and written to every report.
    secrets = {name: os.environ[name] for name in CREDENTIAL_VARIABLES if os.environ.get(name)}
    secrets.update({"ANTHROPIC_API_KEY": api_key} if api_key else {})
    secrets.update({"ANTHROPIC_AUTH_TOKEN": auth_token} if auth_token else {})
    client = anthropic.AsyncAnthropic(
        api_key=api_key,
        auth_token=auth_token,
        base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL") or None,
        max_retries=max_retries,
        timeout=timeout_s,
        http_client=_deadline_client(timeout_s),
    )
    return client, Redactor(secrets)


def _deadline_client(timeout_s: float) -> anthropic.DefaultAsyncHttpxClient:
    """The SDK's HTTP client with one deadline over each attempt of a request, from connecting
    to its last byte.

    The SDK's (httpx's) timeout is per read: a server that sends a byte a second restarts it with
    every byte and is never cut. The deadline is raised as httpx's own read time-out, so the SDK
    retries it as any time-out and the run's error says it timed out.
    """
    import httpx2

    def cut(request: httpx2.Request) -> httpx2.ReadTimeout:
        return httpx2.ReadTimeout(f"no whole reply within {timeout_s:g} s", request=request)

    class DeadlineStream(httpx2.AsyncByteStream):
        """A reply's body read under the deadline its request started (the SDK asks for the
        headers first and reads the body after, outside ``send``)."""

        def __init__(self, body: httpx2.AsyncByteStream, deadline: float, request: httpx2.Request):
            self._body, self._deadline, self._request = body, deadline, request

        async def __aiter__(self) -> AsyncIterator[bytes]:
            chunks = self._body.__aiter__()
            while True:
                try:
                    async with asyncio.timeout_at(self._deadline):
                        chunk = await anext(chunks)
                except StopAsyncIteration:
                    return
                except TimeoutError as exc:
                    raise cut(self._request) from exc
                yield chunk

        async def aclose(self) -> None:
            await self._body.aclose()

    class DeadlineClient(anthropic.DefaultAsyncHttpxClient):
        async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
            deadline = asyncio.get_running_loop().time() + timeout_s
            try:
                async with asyncio.timeout_at(deadline):
                    response = await super().send(request, **kwargs)
            except TimeoutError as exc:
                raise cut(request) from exc
            if kwargs.get("stream") and isinstance(response.stream, httpx2.AsyncByteStream):
                response.stream = DeadlineStream(response.stream, deadline, request)
            return response

    from skilltest.tls import client_context

    return DeadlineClient(timeout=timeout_s, verify=client_context())


class ClientSettings(TypedDict, total=False):
    """How an :class:`SdkClient` is opened; each setting has a default."""

    backend: str
    """What its transcripts name as their source (``anthropic``, ``emulator``, ``judge``)."""
    api_key: str | None
    """Default: ``ANTHROPIC_API_KEY``."""
    auth_token: str | None
    """Default: ``ANTHROPIC_AUTH_TOKEN``."""
    base_url: str | None
    """Default: ``ANTHROPIC_BASE_URL``, else the SDK's."""
    max_retries: int
    """The SDK's retries (429, 529, 5xx) of every call; default :data:`DEFAULT_MAX_RETRIES`."""
    timeout_s: float
    """Each attempt of a call, whole (connecting to the last byte of the reply); default
    :data:`DEFAULT_TIMEOUT_S`."""
    name_runs: bool
    """Name each run in its request's ``metadata`` (the emulator keeps one stand-in state per
    run, so that concurrency does not change its answers)."""
    answers_from: str | None
    """The model API the requests reach when ``base_url`` is a proxy in front of it (a
    recording proxy): where the runs record that their requests went. Default: the base URL."""


class SdkClient:
    """Requests through the SDK: credentials and base URL from the environment unless given,
    the SDK's retries on every call, answers redacted of the credentials."""

    def __init__(self, **settings: Unpack[ClientSettings]) -> None:
        unknown = sorted(set(settings) - ClientSettings.__optional_keys__)
        if unknown:
            raise TypeError(f"{type(self).__name__}: no such client setting: {', '.join(unknown)}")
        self.backend = settings.get("backend", "anthropic")
        self.name_runs = settings.get("name_runs", False)
        self.max_retries = settings.get("max_retries", DEFAULT_MAX_RETRIES)
        self._client, self._redact = open_client(
            api_key=settings.get("api_key"),
            auth_token=settings.get("auth_token"),
            base_url=settings.get("base_url"),
            max_retries=self.max_retries,
            timeout_s=settings.get("timeout_s", DEFAULT_TIMEOUT_S),
        )
        self.answers_from = settings.get("answers_from") or str(self._client.base_url)

    def answered_by(self, headers: Mapping[str, str] | None) -> AnsweredBy:
        """What answered a request, from the headers of its answer (``None``: no answer)."""
        return AnsweredBy.at(self.answers_from, emulator_mark(headers))

    @staticmethod
    def emulator_rules(headers: Mapping[str, str] | None) -> tuple[ScriptRule, ...]:
        """The emulator's rule that gave an answer, from its headers; empty when none says."""
        found = script_rule(headers)
        return () if found is None else (found.seen_from(os.getcwd()),)

    def _body(self, request: TurnRequest) -> dict[str, Any]:
        """The Messages request of one run, the run named in its metadata with ``name_runs``."""
        body = wire_body(request)
        if self.name_runs and request.run is not None:
            from skilltest.emulator.per_run import run_metadata

            body["metadata"] = run_metadata(request.run, request.rep)
        return body

    async def aclose(self) -> None:
        await self._client.close()


class AnthropicRunner(SdkClient):
    """Sends each request with the SDK's retries for 429, 529 and 5xx.

    The skill text goes in the system prompt marked for prompt caching, since K repetitions send
    the same text again. No tools are offered.
    """

    def __init__(self, *, run_header: bool = False, **settings: Unpack[ClientSettings]) -> None:
        """
        Args:
            run_header: Name each run in an ``x-skilltest-run`` header, for the recording
                proxy (which strips it).
        """
        super().__init__(**settings)
        self.run_header = run_header

    async def run_turn(self, request: TurnRequest) -> Transcript:
        """One request, one answer; API failures come back as a transcript with ``error``."""
        kwargs = self._body(request)
        headers: dict[str, str] = {}
        if request.temperature is not None:
            # API version 2026-10-21 (what the SDK sends by default) refuses sampling parameters,
            # and the SDK no longer takes them; the 2023-06-01 version still reads them.
            kwargs["extra_body"] = {"temperature": kwargs.pop("temperature")}
            headers["anthropic-version"] = SAMPLING_API_VERSION
        if self.run_header and request.run is not None:
            # Names the run for a recording proxy, which strips it before forwarding.
            from skilltest.replay.proxy import RUN_HEADER

            headers[RUN_HEADER] = f"{request.run}|{request.rep}"
        if headers:
            kwargs["extra_headers"] = headers
        started = time.monotonic()
        try:
            # The raw response keeps the status and the body, so that a reply that is not a
            # message (cut short, not JSON) becomes this run's error instead of a traceback.
            raw = await self._client.messages.with_raw_response.create(**kwargs)
        except anthropic.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else None
            text = api_error(exc.status_code, body, self.max_retries)
            if body is None:
                text = text.replace(f"HTTP {exc.status_code}", str(exc.message), 1)
            return self._failed(started, text, exc.response.headers)
        except anthropic.APITimeoutError:
            return self._failed(
                started, f"API request timed out (after {self.max_retries} retries)"
            )
        except anthropic.APIConnectionError as exc:
            return self._failed(
                started,
                f"API connection failed: {_connection_problem(exc)} "
                f"(after {self.max_retries} retries)",
            )
        except anthropic.APIError as exc:
            return self._failed(started, f"API error: {exc}")
        try:
            message = await raw.parse()
            return Transcript(
                source=self.backend,
                assistant_text=tuple(
                    self._redact(b.text) for b in message.content if b.type == "text"
                ),
                usage=Usage.from_mapping(message.usage.model_dump()),
                model=message.model,
                api_models=(message.model,) if message.model else (),
                stop_reason=message.stop_reason,
                latency_ms=(time.monotonic() - started) * 1000,
                answered_by=self.answered_by(raw.headers),
                emulator_rules=self.emulator_rules(raw.headers),
            )
        except ValueError as exc:  # json.JSONDecodeError among them: the body is not JSON
            return await self._unreadable(started, raw, str(exc))
        except RecursionError:
            # A body nested deeper than Python's decoder recurses (200,000 arrays): not a
            # message, and no reason to end the command.
            return await self._unreadable(started, raw, "JSON nested too deep to read")
        except (AttributeError, TypeError):
            # JSON of another shape: the SDK builds its models without validating them, so a
            # missing field shows only when it is read.
            return await self._unreadable(started, raw, "JSON, but not a Messages API message")

    async def _unreadable(
        self, started: float, raw: anthropic.AsyncAPIResponse[Message], problem: str
    ) -> Transcript:
        body = _excerpt(await raw.text())
        return self._failed(
            started,
            f"unreadable API reply (HTTP {raw.status_code}): {problem}; body: {body}",
            raw.headers,
        )

    def _failed(
        self, started: float, error: str, headers: Mapping[str, str] | None = None
    ) -> Transcript:
        return Transcript(
            source=self.backend,
            error=self._redact(error),
            latency_ms=(time.monotonic() - started) * 1000,
            answered_by=self.answered_by(headers),
            emulator_rules=self.emulator_rules(headers),
        )


def _excerpt(body: str) -> str:
    # The start says what answered (an API, a proxy's HTML page); the end, where it broke off.
    flat = " ".join(body.split())
    if not flat:
        return "(empty)"
    if len(flat) <= EXCERPT_CHARS:
        return repr(flat)
    head = EXCERPT_CHARS * 2 // 3
    return f"{flat[:head]!r} … {flat[head - EXCERPT_CHARS :]!r}"


def _connection_problem(exc: anthropic.APIConnectionError) -> str:
    # The SDK says only "Connection error."; the transport's own error says what broke (a
    # refused connection, a reply cut off before its announced length).
    cause = exc.__cause__
    return str(cause) if cause is not None and str(cause) else str(exc)
