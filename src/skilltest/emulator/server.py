"""The emulator's HTTP server: the model APIs on loopback, answered by a script.

Routes:

* ``POST /v1/messages`` (any query string, e.g. Claude Code's ``?beta=true``): JSON, or SSE
  when ``stream`` is true, answered by the :class:`~skilltest.emulator.scripted_model.Responder`;
* ``POST /v1/responses`` (OpenAI's Responses API, :mod:`~skilltest.emulator.responses_wire`)
  and ``POST /v1/chat/completions`` (Chat Completions, :mod:`~skilltest.emulator.chat_wire`):
  the same responder's answer in each API's shape, JSON or SSE, its faults in each API's form
  (an OpenAI error body, a stream that fails with ``response.failed`` or an ``error`` chunk);
* ``POST /v1beta/models/MODEL:generateContent`` and ``:streamGenerateContent`` (Google's Gemini
  API, :mod:`~skilltest.emulator.gemini_wire`): the same answer as a ``GenerateContentResponse``,
  whole or as SSE chunks, its faults as Google API errors; ``:countTokens`` the estimate;
* ``POST /v1/messages/count_tokens``: ``{"input_tokens": N}`` with the same estimate as usage;
* the Message Batches API (:mod:`skilltest.emulator.batches`): ``POST /v1/messages/batches``
  (each request answered by the responder at once), ``GET /v1/messages/batches`` (the list),
  ``GET /v1/messages/batches/{id}`` (a poll), ``GET /v1/messages/batches/{id}/results``
  (JSON Lines), ``POST /v1/messages/batches/{id}/cancel`` and ``DELETE
  /v1/messages/batches/{id}``;
* ``GET /health`` and ``GET /``: JSON that says this is the skilltest emulator;
* ``HEAD``/``GET /api/hello``: the connectivity check Claude Code makes at start-up;
* ``GET /v1/models``: a one-model list, for clients that look the model up;
* anything else: 404 with an Anthropic-style error body.

Every answer, whatever its route or status, carries the header ``x-skilltest-emulator: <version>``
(:data:`~skilltest.transcript.origin.EMULATOR_HEADER`): whoever reads the answers (a run, a
recording proxy, a cassette replayed later) can tell they came from a scripted stand-in, whatever
``--backend`` the run was started with.

Any API key is accepted. Every request is recorded (:attr:`EmulatorServer.requests`).
Its lifecycle is :class:`~skilltest.loopback.LocalServer`'s: each connection gets a daemon
thread, so slow or hanging answers never block each other, and :meth:`EmulatorServer.close`
wakes every delayed or hanging answer and returns promptly.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from skilltest import __version__
from skilltest.emulator import chat_wire, gemini_wire, responses_wire
from skilltest.emulator.batches import (
    CUSTOM_ID,
    MAX_BATCH_BYTES,
    MAX_BATCH_REQUESTS,
    BatchBehaviour,
    BatchStore,
)
from skilltest.emulator.chat_wire import build_completion, completion_chunks, encode_data
from skilltest.emulator.faults import FaultDecision, error_body, openai_error_body, retry_headers
from skilltest.emulator.gemini_wire import (
    build_generate_response,
    gemini_error_body,
    stream_chunks,
)
from skilltest.emulator.responses_wire import build_response, failed_events, response_events
from skilltest.emulator.script import ModelScript
from skilltest.emulator.scripted_model import DEFAULT_MODEL, Answer, Responder, ScriptedModel
from skilltest.emulator.sse import Message, encode_event, input_tokens, stream_events
from skilltest.emulator.sse import truncation_point as _truncation_point
from skilltest.errors import ModelScriptError
from skilltest.loopback import Listener, LocalServer, read_request_body
from skilltest.model_apis import AgentName, ApiFamily, agent_of, api_of_path, gemini_route
from skilltest.transcript.origin import BATCH_RULE_KEY, EMULATOR_HEADER, RULE_HEADER, ScriptRule

BATCHES = "/v1/messages/batches"

MARK = __version__
"""What the emulator's mark says: the toolkit version that answered."""

MIDSTREAM_ERROR = (
    "The server had an error while processing your request (injected by the skilltest emulator)"
)
"""What an OpenAI stream that fails after it started says."""

HEALTH_DESCRIPTION = (
    "skilltest emulator: a scripted stand-in for the Anthropic Messages API, OpenAI's "
    "Responses and Chat Completions APIs and Google's Gemini API. "
    "It is not a real model; it answers what its model script says."
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the emulator received, and what it did with it."""

    method: str
    """HTTP method."""
    path: str
    """Path without the query string, e.g. ``/v1/messages``."""
    body: Any
    """Parsed JSON body, or ``None``."""
    rule_id: str | None
    """Rule that answered, ``side:KIND`` for a built-in side-request answer, ``None`` else."""
    status: int | None
    """HTTP status sent; ``None`` when no answer was sent (a hang)."""
    fault: str | None
    """Fault applied, e.g. ``status 429``, ``truncated``, ``latency 200ms``; ``None`` if none."""
    side_request: str | None = None
    """Kind of Claude Code side request, or ``None`` for a main request."""
    stream: bool = False
    """Whether the client asked for SSE."""
    api: ApiFamily | None = None
    """The API of a model request (``anthropic``, ``responses``, ``chat``); ``None`` for any
    other request."""
    agent: AgentName | None = None
    """The agent that sent a model request, as its headers say."""
    script_rule: ScriptRule | None = None
    """The rule (or default reply) of the model script that answered a main request, and
    where it is written."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Listener[EmulatorServer]
    server_version = "skilltest-emulator"
    answering: ScriptRule | None = None
    """The rule whose answer is being sent, named in :data:`RULE_HEADER`."""

    def log_message(self, format: str, *args: Any) -> None:
        """Silences the default stderr log; requests are recorded instead."""

    def send_response(self, code: int, message: str | None = None) -> None:
        """The status line, then the mark every answer of the emulator carries."""
        super().send_response(code, message)
        self.send_header(EMULATOR_HEADER, MARK)
        if self.answering is not None:
            self.send_header(RULE_HEADER, self.answering.header())

    # --- routing -----------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/") or "/"
        if path in ("/", "/health"):
            self._json(200, self.server.owner.health())
        elif path == "/api/hello":
            self._json(200, {"message": "hello from the skilltest emulator"})
        elif path == "/v1/models":
            self._json(200, self.server.owner.models())
        elif path == BATCHES or path.startswith(BATCHES + "/"):
            self._batch_get(path)
        else:
            self._not_found(path)

    def do_HEAD(self) -> None:
        path = urlsplit(self.path).path
        status = 200 if path in ("/", "/health", "/api/hello") else 404
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()
        self._record(path, None, status)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path == BATCHES or path.startswith(BATCHES + "/"):
            self._batch_post(path)
            return
        raw = read_request_body(self)
        if gemini_route(path) is not None:
            self._gemini(path, raw)
            return
        api = api_of_path(path)
        if api in ("responses", "chat"):
            self._openai(path, api, raw)
            return
        if path not in ("/v1/messages", "/v1/messages/count_tokens"):
            self._not_found(path)
            return
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._json(400, error_body(400, "the body must be a JSON object with 'messages'"))
            self._record(path, body, 400)
            return
        if path.endswith("/count_tokens"):
            self._json(200, {"input_tokens": input_tokens(body)})
            self._record(path, body, 200)
        else:
            self._messages(path, body)

    def _other(self) -> None:
        read_request_body(self)
        self._not_found(urlsplit(self.path).path)

    do_PUT = do_PATCH = _other

    def do_DELETE(self) -> None:
        read_request_body(self)
        path = urlsplit(self.path).path.rstrip("/")
        batch_id = path.removeprefix(BATCHES + "/")
        if not path.startswith(BATCHES + "/") or "/" in batch_id:
            self._not_found(path)
            return
        deleted = self.server.owner.batches.delete(batch_id)
        if deleted is None:
            self._batch_missing(path, batch_id)
        elif not deleted:
            message = f"batch {batch_id} is still processing: cancel it before deleting it"
            self._json(400, error_body(400, message))
            self._record(path, None, 400)
        else:
            self._json(200, {"id": batch_id, "type": "message_batch_deleted"})
            self._record(path, None, 200)

    # --- the Message Batches API -------------------------------------------------------------

    def _base_url(self) -> str:
        return f"http://{self.headers.get('host') or self.server.owner.base_url[7:]}"

    def _batch_missing(self, path: str, batch_id: str) -> None:
        self._json(404, error_body(404, f"no message batch {batch_id!r} on this emulator"))
        self._record(path, None, 404)

    def _batch(self, path: str, batch_id: str, batch: dict[str, Any] | None) -> None:
        """Answers the batch, or that there is no such batch."""
        if batch is None:
            self._batch_missing(path, batch_id)
        else:
            self._json(200, batch)
            self._record(path, None, 200)

    def _batch_post(self, path: str) -> None:
        owner = self.server.owner
        if path != BATCHES:
            read_request_body(self)
            batch_id, _, action = path.removeprefix(BATCHES + "/").partition("/")
            if action != "cancel":
                self._not_found(path)
                return
            self._batch(path, batch_id, owner.batches.cancel(batch_id, self._base_url()))
            return
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BATCH_BYTES:
            self.close_connection = True  # the body is not read: the connection cannot go on
            message = f"a batch may be at most {MAX_BATCH_BYTES // (1024 * 1024)} MB"
            self._json(413, error_body(413, message))
            self._record(path, None, 413)
            return
        try:
            body = json.loads(read_request_body(self) or b"null")
        except (ValueError, RecursionError):
            body = None
        problem = _batch_problem(body)
        if problem is not None:
            self._json(400, error_body(400, problem))
            self._record(path, body, 400)
            return
        results = [owner.batch_line(item["custom_id"], item["params"]) for item in body["requests"]]
        batch = owner.batches.create(results, owner.batch_behaviour, self._base_url())
        self._json(200, batch)
        self._record(path, body, 200)

    def _batch_get(self, path: str) -> None:
        owner = self.server.owner
        if path == BATCHES:
            data = owner.batches.listing(self._base_url())
            first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
            self._json(200, {"data": data, "has_more": False, "first_id": first, "last_id": last})
            self._record(path, None, 200)
            return
        batch_id, _, action = path.removeprefix(BATCHES + "/").partition("/")
        if action == "results":
            lines = owner.batches.results(batch_id)
            if lines is None:
                self._batch_missing(path, batch_id)
            elif isinstance(lines, str):
                message = f"batch {batch_id} is {lines}: its results exist once it has ended"
                self._json(400, error_body(400, message))
                self._record(path, None, 400)
            else:
                jsonl = b"".join(
                    json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n" for line in lines
                )
                self.send_response(200)
                self.send_header("content-type", "application/binary")
                self.send_header("content-length", str(len(jsonl)))
                self.end_headers()
                self.wfile.write(jsonl)
                self._record(path, None, 200)
            return
        if action:
            self._not_found(path)
            return
        self._batch(path, batch_id, owner.batches.retrieve(batch_id, self._base_url()))

    def _not_found(self, path: str) -> None:
        message = f"{self.command} {path} is not a route of the skilltest emulator"
        self._json(404, error_body(404, message))
        self._record(path, None, 404)

    # --- POST /v1/messages -------------------------------------------------------------------

    def _messages(
        self,
        path: str,
        body: dict[str, Any],
        api: ApiFamily = "anthropic",
        *,
        stream: bool | None = None,
    ) -> None:
        stream = bool(body.get("stream")) if stream is None else stream
        agent = agent_of(dict(self.headers.items()))
        try:
            answer = self.server.owner.responder.answer(body, api=api, agent=agent)
        except ModelScriptError as exc:
            message = f"skilltest emulator: {exc}"
            self._json(500, _error_of(api, 500, message))
            self._record(path, body, 500, stream=stream, api=api, agent=agent)
            return
        self.answering = answer.script_rule
        try:
            self._answer(path, body, api, stream, agent, answer)
        finally:
            self.answering = None

    def _answer(
        self,
        path: str,
        body: dict[str, Any],
        api: ApiFamily,
        stream: bool,
        agent: AgentName | None,
        answer: Answer,
    ) -> None:
        fault = answer.fault
        status = self._status_for(fault, stream)
        self._record(
            path,
            body,
            status,
            script_rule=answer.script_rule,
            rule_id=answer.rule_id,
            fault=fault.label,
            side=answer.side_request,
            stream=stream,
            api=api,
            agent=agent,
        )
        stop = self.server.owner.closing
        if fault.latency_ms and stop.wait(fault.latency_ms / 1000):
            self.close_connection = True
            return
        if fault.failure == "hang":
            stop.wait()
            self.close_connection = True
            return
        if fault.failure == "status" or (fault.failure == "midstream_error" and not stream):
            code = fault.status or 529
            decision = replace(fault, status=code)
            if api == "anthropic":
                payload = error_body(code)
            elif api == "gemini":
                payload = gemini_error_body(code)
            else:
                payload = openai_error_body(code, retry_after_ms=decision.retry_after_ms)
            self._json(code, payload, retry_headers(decision))
            return
        if api == "gemini":
            generated = build_generate_response(answer.message)
            if stream:
                self._stream_gemini(answer, stream_chunks(generated))
            else:
                self._whole(answer.message, fault, generated)
        elif api == "responses":
            response = build_response(answer.message, body)
            if stream:
                self._stream_openai(answer, response_events(response), api)
            else:
                self._whole(answer.message, fault, response)
        elif api == "chat":
            completion = build_completion(answer.message)
            if stream:
                self._stream_openai(answer, completion_chunks(completion, body), api)
            else:
                self._whole(answer.message, fault, completion)
        elif stream:
            self._stream(answer)
        else:
            self._whole(answer.message, fault)

    # --- POST /v1beta/models/MODEL:generateContent (the Gemini API) --------------------------

    def _gemini(self, path: str, raw: bytes) -> None:
        """``generateContent``, ``streamGenerateContent`` (SSE chunks, as ``alt=sse`` asks) and
        ``countTokens``, the model named in the path."""
        model, method = gemini_route(path) or ("", "")
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError):
            body = None
        agent = agent_of(dict(self.headers.items()))
        if method == "countTokens":
            asked = body.get("generateContentRequest", body) if isinstance(body, dict) else None
            if not isinstance(asked, dict):
                self._json(400, gemini_error_body(400, "the body must be a JSON object"))
                self._record(path, body, 400)
                return
            request = gemini_wire.as_messages_request(asked, model)
            self._json(200, {"totalTokens": gemini_wire.count_tokens(request)})
            self._record(path, body, 200)
            return
        if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
            message = "the body must be a JSON object with 'contents'"
            self._json(400, gemini_error_body(400, message))
            self._record(path, body, 400, api="gemini", agent=agent)
            return
        if "model" not in body:
            body = {**body, "model": model}
        self._messages(path, body, "gemini", stream=method == "streamGenerateContent")

    def _stream_gemini(self, answer: Answer, chunks: list[dict[str, Any]]) -> None:
        """A Gemini stream (``data:`` lines of ``GenerateContentResponse`` chunks), with the
        answer's fault: cut short, malformed, or an error after the first chunk."""
        failure = answer.fault.failure
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        if failure == "malformed":
            self._chunk(gemini_wire.encode_chunk(gemini_wire.MALFORMED_DATA))
        elif failure == "midstream_error":
            self._chunk(gemini_wire.encode_chunk(chunks[0]))
            self._chunk(gemini_wire.encode_chunk(gemini_error_body(500, MIDSTREAM_ERROR)))
        elif failure == "truncated":
            for chunk in chunks[: gemini_wire.truncation_point(chunks)]:
                self._chunk(gemini_wire.encode_chunk(chunk))
            self._cut_connection()
            return
        else:
            for chunk in chunks:
                self._chunk(gemini_wire.encode_chunk(chunk))
        self.wfile.write(b"0\r\n\r\n")

    # --- POST /v1/responses and /v1/chat/completions ------------------------------------------

    def _openai(self, path: str, api: ApiFamily, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"null")
        except (ValueError, RecursionError):
            body = None
        needed = "input" if api == "responses" else "messages"
        given = body.get(needed) if isinstance(body, dict) else None
        if not isinstance(given, list) and not (api == "responses" and isinstance(given, str)):
            message = f"the body must be a JSON object with '{needed}'"
            self._json(400, openai_error_body(400, message))
            self._record(path, body, 400, api=api, agent=agent_of(dict(self.headers.items())))
            return
        self._messages(path, body, api)

    def _stream_openai(self, answer: Answer, events: list[Any], api: ApiFamily) -> None:
        """A Responses stream (named events) or a Chat Completions stream (data only), with the
        answer's fault: cut short, malformed, or failing after it started."""
        failure = answer.fault.failure
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("x-request-id", "req_" + answer.message.data["id"][4:])
        self.end_headers()

        def send(event: Any) -> None:
            if api == "responses":
                self._chunk(encode_event(*event))
            else:
                self._chunk(encode_data(event))

        if failure == "malformed":
            if api == "responses":
                send(responses_wire.MALFORMED_EVENT)
            else:
                send(chat_wire.MALFORMED_DATA)
        elif failure == "midstream_error":
            message = MIDSTREAM_ERROR
            if api == "responses":
                response = build_response(answer.message, {})
                for event in failed_events(response, message):
                    send(event)
            else:
                send(events[0])
                send(openai_error_body(500, message))
        elif failure == "truncated":
            cut = (
                responses_wire.truncation_point(events)
                if api == "responses"
                else chat_wire.truncation_point(events)
            )
            for event in events[:cut]:
                send(event)
            self._cut_connection()
            return
        else:
            for event in events:
                send(event)
        self.wfile.write(b"0\r\n\r\n")

    @staticmethod
    def _status_for(fault: FaultDecision, stream: bool) -> int | None:
        if fault.failure == "hang":
            return None
        if fault.failure == "status":
            return fault.status
        if fault.failure == "midstream_error" and not stream:
            return 529
        return 200

    def _whole(
        self, message: Message, fault: FaultDecision, shaped: dict[str, Any] | None = None
    ) -> None:
        """The whole answer as JSON: the message, or ``shaped`` (its form in another API)."""
        data = (
            message.to_json_bytes()
            if shaped is None
            else json.dumps(shaped, ensure_ascii=False).encode("utf-8")
        )
        if fault.failure in ("malformed", "truncated"):
            cut = data[: len(data) // 2]
            self.send_response(200)
            self.send_header("content-type", "application/json")
            # malformed: a complete HTTP body that is not JSON; truncated: the body stops early.
            length = len(cut) if fault.failure == "malformed" else len(data)
            self.send_header("content-length", str(length))
            self.end_headers()
            self.wfile.write(cut)
            if fault.failure == "truncated":
                self._cut_connection()
            return
        self._json(200, message.data if shaped is None else shaped)

    def _stream(self, answer: Answer) -> None:
        failure = answer.fault.failure
        events = stream_events(answer.message)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", "req_" + answer.message.data["id"][4:])
        self.end_headers()
        if failure == "malformed":
            self._chunk(encode_event("message_start", '{"type": "message_start", "message": {'))
        elif failure == "midstream_error":
            name, data = events[0]
            self._chunk(encode_event(name, data))
            self._chunk(encode_event("error", error_body(529)))
        elif failure == "truncated":
            for name, data in events[: _truncation_point(events)]:
                self._chunk(encode_event(name, data))
            self._cut_connection()
            return
        else:
            for name, data in events:
                self._chunk(encode_event(name, data))
        self.wfile.write(b"0\r\n\r\n")

    # --- wire helpers ------------------------------------------------------------------------

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _cut_connection(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _json(
        self, status: int, payload: Mapping[str, Any], headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _record(
        self,
        path: str,
        body: Any,
        status: int | None,
        *,
        rule_id: str | None = None,
        fault: str | None = None,
        side: str | None = None,
        stream: bool = False,
        api: ApiFamily | None = None,
        agent: AgentName | None = None,
        script_rule: ScriptRule | None = None,
    ) -> None:
        self.server.owner.record(
            RecordedRequest(
                method=self.command,
                path=path,
                body=body,
                rule_id=rule_id,
                status=status,
                fault=fault,
                side_request=side,
                stream=stream,
                api=api,
                agent=agent,
                script_rule=script_rule,
            )
        )


class EmulatorServer(LocalServer):
    """The emulator, serving in background threads until closed (see
    :class:`~skilltest.loopback.LocalServer` for ``start``, ``close`` and ``with``).

    Example::

        with EmulatorServer(ModelScript.load("model.yaml")) as server:
            client = anthropic.Anthropic(base_url=server.base_url, api_key="sk-fake")
    """

    name = "skilltest emulator"

    def __init__(
        self,
        script: ModelScript | Responder,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        on_request: Callable[[RecordedRequest], None] | None = None,
        batch_dir: Path | None = None,
    ) -> None:
        """Binds the socket (``port=0`` picks a free port); call :meth:`start` or use ``with``.

        Args:
            script: The model script, or any responder (e.g. a replayed recording).
            host: Interface to listen on.
            port: TCP port; 0 picks a free one.
            on_request: Called with every recorded request (from a server thread).
            batch_dir: Keep Message Batches in this folder (one JSON file each), so that an
                emulator started again on it still has them; ``None``: in memory only.
        """
        super().__init__()
        self.script = script if isinstance(script, ModelScript) else None
        self.responder: Responder = (
            ScriptedModel(script) if isinstance(script, ModelScript) else script
        )
        # A responder that keeps a script (one model per run) says how its batches go.
        behind = self.script or getattr(script, "script", None)
        self.batch_behaviour = (
            behind.batches if isinstance(behind, ModelScript) else BatchBehaviour()
        )
        self.batches = BatchStore(batch_dir)
        self._on_request = on_request
        self._requests: list[RecordedRequest] = []
        self._requests_lock = threading.Lock()
        self.listen(_Handler, host, port)

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT``, for ``ANTHROPIC_BASE_URL`` or ``Anthropic(base_url=...)``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._requests_lock:
            return list(self._requests)

    def record(self, request: RecordedRequest) -> None:
        with self._requests_lock:
            self._requests.append(request)
        if self._on_request is not None:
            self._on_request(request)

    def batch_line(self, custom_id: str, params: Any) -> dict[str, Any]:
        """One line of a Message Batch's results: how its request ends, answered as ``POST
        /v1/messages`` would answer it (a fault that fails it makes it ``errored``) unless its
        rule ends it otherwise, and under :data:`BATCH_RULE_KEY` the model script's rule that
        answered it (what :data:`RULE_HEADER` says of a direct answer)."""
        if not isinstance(params, dict) or not isinstance(params.get("messages"), list):
            result = _errored(400, "params must be a Messages request with 'messages'")
            return {"custom_id": custom_id, "result": result}
        try:
            answer = self.responder.answer(params)
        except ModelScriptError as exc:
            result = _errored(500, f"skilltest emulator: {exc}")
            return {"custom_id": custom_id, "result": result}
        line: dict[str, Any] = {"custom_id": custom_id, "result": self._batch_result(answer)}
        if answer.script_rule is not None:
            line[BATCH_RULE_KEY] = answer.script_rule.header()
        return line

    @staticmethod
    def _batch_result(answer: Answer) -> dict[str, Any]:
        outcome = answer.batch
        if outcome is not None and outcome.result != "errored":
            return {"type": outcome.result}
        if outcome is not None:
            return _errored(outcome.status, outcome.message)
        fault = answer.fault
        if fault.failure is not None:
            return _errored(fault.status or (529 if fault.failure == "midstream_error" else 500))
        return {"type": "succeeded", "message": answer.message.data}

    def health(self) -> dict[str, Any]:
        """The ``GET /health`` document."""
        script = self.script
        return {
            "status": "ok",
            "service": "skilltest-emulator",
            "real_model": False,
            "description": HEALTH_DESCRIPTION,
            "script": script.source if script else None,
            "rules": [rule.id for rule in script.rules] if script else None,
        }

    def models(self) -> dict[str, Any]:
        """The ``GET /v1/models`` document: the script's model name."""
        name = (self.script.model if self.script else None) or DEFAULT_MODEL
        model = {
            "type": "model",
            "id": name,
            "display_name": f"{name} (skilltest emulator)",
            "created_at": "2025-01-01T00:00:00Z",
        }
        return {"data": [model], "has_more": False, "first_id": name, "last_id": name}


def _errored(status: int, message: str | None = None) -> dict[str, Any]:
    return {"type": "errored", "error": error_body(status, message)}


def _batch_problem(body: Any) -> str | None:
    """Why a batch cannot be created from ``body``, or ``None``."""
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        return "the body must be a JSON object with a non-empty list 'requests'"
    if len(requests) > MAX_BATCH_REQUESTS:
        return f"a batch may hold at most {MAX_BATCH_REQUESTS:,} requests, not {len(requests):,}"
    seen: set[str] = set()
    for index, item in enumerate(requests):
        if not isinstance(item, dict) or "params" not in item:
            return f"requests.{index}: expected {{'custom_id': ..., 'params': {{...}}}}"
        custom_id = item.get("custom_id")
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
            return f"requests.{index}.custom_id: must match {CUSTOM_ID.pattern}"
        if custom_id in seen:
            return f"requests.{index}.custom_id: {custom_id!r} is used twice in this batch"
        seen.add(custom_id)
    return None


def _error_of(api: ApiFamily, status: int, message: str) -> dict[str, Any]:
    """The error body of ``api`` for ``status``."""
    if api == "anthropic":
        return error_body(status, message)
    if api == "gemini":
        return gemini_error_body(status, message)
    return openai_error_body(status, message)
