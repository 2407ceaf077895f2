"""The MCP relay: a stand-in stdio MCP server that records a real one, or replays a recording.

Claude Code starts every stdio MCP server of a run from the ``--mcp-config`` file. Under
``--record`` the toolkit writes the relay there instead of the server::

    python -m skilltest.replay.mcp_relay record --log FILE [--paths-json JSON] -- COMMAND [ARGS...]

The relay starts ``COMMAND`` (the real server, same environment, in a process group of its own),
passes the JSON-RPC lines through in both directions and its stderr as it is, and appends one
JSON line per finished client request to ``FILE``: ``{"method", "params", "response"}`` with
``response`` ``{"result": ...}`` or ``{"error": ...}``, preceded by ``notifications`` when the
server sent some about that request (progress, a subscription's acknowledgement). A request
still open when the session ends (MCP 2026-07-28's ``subscriptions/listen``) is logged then, with
neither result nor error. Other notifications and the server's own requests are relayed, never
logged. With ``--paths-json`` the logged params have the run's paths replaced by placeholders.
The relay exits when the client closes stdin or the server exits, with the server's exit status,
and stops the server's whole process group when it is itself stopped (SIGTERM, SIGINT, SIGHUP).
A server still owing answers when the client closes stdin (it may not even have started reading:
a Python SDK server takes seconds to import on a busy machine) gives them first; its grace to
exit by itself starts once it owes none.

Under ``--replay`` no server is started::

    python -m skilltest.replay.mcp_relay replay --exchanges FILE --misses FILE [--paths-json JSON]

Each client request is answered by the first unused recorded exchange whose method and
normalised params equal the request's, with the live request's id (and progress token). A
request nothing matches gets the JSON-RPC error ``-32603`` ``replay miss: ...`` (the method, the
nearest recorded request and what differs) and a line in the misses file.

The relay starts once per server per run, so it imports only the standard library and the
normaliser; everything here works on bytes and plain JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilltest.errors import InputError

if TYPE_CHECKING:
    import subprocess

Normalise = Callable[[str, Any], Mapping[str, Any]]
"""``(method, params) -> {"method": ..., "params": ...}`` with the volatile parts replaced: what
two requests must share to match (:func:`skilltest.replay.normalise.normalise_mcp`)."""

MISS_CODE = -32603
"""The JSON-RPC error code of a replay miss (internal error: the server could not answer)."""
PARSE_ERROR_CODE = -32700
"""The JSON-RPC error code of a line that is not JSON."""
MISS_PREFIX = "replay miss: "
"""How every miss message starts, as the model-side misses do."""

STOP_GRACE_S = 3.0
"""How long a server has to exit by itself (stdin closed and every request answered, or
SIGTERM) before it is killed."""
STREAMS = frozenset({"subscriptions/listen"})
"""Requests a server answers only when the session ends: a server does not owe their answer."""
READ_SIZE = 1 << 16

_SHOWN_DIFFERENCES = 4
_EXCERPT_CHARS = 60


def _as_sent(method: str, params: Any) -> Mapping[str, Any]:
    return {"method": method, "params": params}


# --- lines and messages --------------------------------------------------------------------


def _lines(fd: int) -> Iterator[bytes]:
    """The lines read from ``fd`` (newline kept), the last one even without its newline.

    ``os.read`` on the raw descriptor, not ``sys.stdin``: a thread blocked in a buffered read
    holds the buffer's lock, which stops the interpreter from exiting cleanly.
    """
    parts: list[bytes] = []  # of a line longer than one read (a large tool result)
    while True:
        chunk = os.read(fd, READ_SIZE)
        if not chunk:
            break
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            parts.append(chunk[start : end + 1])
            yield b"".join(parts)
            parts = []
            start = end + 1
        parts.append(chunk[start:])
    rest = b"".join(parts)
    if rest.strip():
        yield rest


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _messages(line: bytes) -> tuple[list[Any], bool] | None:
    """The JSON-RPC messages of a line and whether they came as a batch; ``None`` when the line
    is not JSON."""
    if not line.strip():
        return [], False
    try:
        decoded = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return (decoded, True) if isinstance(decoded, list) else ([decoded], False)


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and "method" in message and message.get("id") is not None


def _is_response(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and "method" not in message
        and message.get("id") is not None
        and ("result" in message or "error" in message)
    )


def _id_key(value: Any) -> str:
    # 1 and "1" are different ids; JSON text keeps them apart.
    return json.dumps(value, sort_keys=True)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _answer_body(message: Mapping[str, Any]) -> dict[str, Any]:
    return {"error": message["error"]} if "error" in message else {"result": message["result"]}


# --- recording -----------------------------------------------------------------------------


class _ServerProcess:
    """The real server: started in its own process group, stopped with all of it."""

    def __init__(self, command: Sequence[str]) -> None:
        import subprocess

        # A new session puts the server and whatever it starts in one group that can be
        # stopped as a whole; a server killed alone could leave its own children running.
        self.process: subprocess.Popen[bytes] = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
        )
        self.group = self.process.pid
        # Re-entrant: a signal handler may stop the server while the main thread is stopping it.
        self._stopping = threading.RLock()

    def exited_within(self, seconds: float) -> bool:
        import subprocess

        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # nothing left in it
            os.killpg(self.group, signum)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM to the group, SIGKILL to what is left after ``grace_s``."""
        with self._stopping:
            if self.process.poll() is None:
                self.signal_group(signal.SIGTERM)
                self.exited_within(grace_s)
            # Children of the server may outlive it in its group.
            self.signal_group(signal.SIGKILL)
            self.process.poll()

    def exit_status(self) -> int:
        code = self.process.wait()
        return 128 - code if code < 0 else code


SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
"""The ``_meta`` key that ties a ``subscriptions/listen`` stream's messages to the request that
opened it (MCP 2026-07-28): its value is that request's JSON-RPC id."""


@dataclass
class _OpenRequest:
    """A client request sent to the server and not answered yet."""

    method: str
    params: Any
    progress_token: str | None
    """``_id_key`` of the request's ``_meta.progressToken``, when it asked for progress."""
    notifications: list[Any] = field(default_factory=list)
    """What the server sent about it so far (progress, a subscription's acknowledgement)."""


def _meta_of(value: Any) -> Mapping[str, Any]:
    meta = value.get("_meta") if isinstance(value, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


class _Log:
    """The exchanges of a session, appended to the log as each request finishes.

    A request the server answers is logged with the notifications it sent about it first
    (``response.notifications``: progress, a ``subscriptions/listen`` acknowledgement). A request
    still open when the session ends (a ``subscriptions/listen`` stream) is logged then, with no
    result or error, so that a replay holds it open as the server did.
    """

    def __init__(self, path: Path, normalise: Normalise) -> None:
        """
        Raises:
            InputError: the log cannot be opened for appending.
        """
        self.normalise = normalise
        self._open: dict[str, _OpenRequest] = {}
        # Re-entrant: the signal handler closes the log on the thread that may be holding it.
        self._lock = threading.RLock()
        self._answered = threading.Condition(self._lock)
        try:
            self._fd: int | None = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(
                f"cannot write the log: {exc.strerror}",
                location=str(path),
                fix="pass --log a file in a folder that exists and is writable",
            ) from None

    def client_sent(self, message: Any) -> None:
        """Called before the message reaches the server, so its answer is never first."""
        if not _is_request(message):
            return
        token = _meta_of(message.get("params")).get("progressToken")
        with self._lock:
            self._open[_id_key(message["id"])] = _OpenRequest(
                message["method"],
                message.get("params"),
                None if token is None else _id_key(token),
            )

    def server_sent(self, message: Any) -> None:
        if _is_response(message):
            with self._lock:
                request = self._open.pop(_id_key(message["id"]), None)
                if request is not None:
                    self._write(request, _answer_body(message))
                    self._answered.notify_all()
        elif isinstance(message, dict) and "method" in message and "id" not in message:
            with self._lock:
                request = self._request_named_by(message)
                if request is not None:
                    request.notifications.append(message)

    def owes_answers(self) -> bool:
        """Whether a client request other than a stream is still unanswered."""
        with self._lock:
            return any(request.method not in STREAMS for request in self._open.values())

    def wait_answered(self, stop: threading.Event, alive: Callable[[], bool]) -> None:
        """Returns once the server owes no answer, or once it is gone: ``stop`` set (its stdout
        ended) or ``alive()`` false (it exited while something it started holds its stdout)."""
        with self._answered:
            while self.owes_answers() and not stop.is_set() and alive():
                self._answered.wait(timeout=1.0)

    def server_gone(self, stop: threading.Event) -> None:
        """Wakes :meth:`wait_answered`: the server will answer nothing more."""
        with self._answered:
            stop.set()
            self._answered.notify_all()

    def _request_named_by(self, notification: Mapping[str, Any]) -> _OpenRequest | None:
        params = notification.get("params")
        subscription = _meta_of(params).get(SUBSCRIPTION_ID)
        if subscription is not None:
            return self._open.get(_id_key(subscription))
        token = params.get("progressToken") if isinstance(params, Mapping) else None
        if token is not None:
            key = _id_key(token)
            return next((r for r in self._open.values() if r.progress_token == key), None)
        return None

    def _write(self, request: _OpenRequest, answer: Mapping[str, Any]) -> None:
        if self._fd is None:
            return
        response = dict(answer)
        if request.notifications:
            response = {"notifications": request.notifications, **response}
        entry = {
            "method": request.method,
            "params": self.normalise(request.method, request.params)["params"],
            "response": response,
        }
        # One write per line on an O_APPEND descriptor: lines never interleave.
        os.write(self._fd, _encode(entry))

    def close(self) -> None:
        """Logs the requests still open (unanswered), then closes the log."""
        with self._lock:
            if self._fd is None:
                return
            for request in self._open.values():
                self._write(request, {})
            self._open.clear()
            self._answered.notify_all()
            os.close(self._fd)
            self._fd = None


def record(
    command: Sequence[str],
    log: Path,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
    grace_s: float = STOP_GRACE_S,
    normalise: Normalise = _as_sent,
    on_start: Callable[[_ServerProcess, Callable[[], None]], None] | None = None,
) -> int:
    """Relays a stdio MCP session between the client (``stdin_fd``/``stdout_fd``) and ``command``.

    Args:
        command: The real server's command line.
        log: Where one JSON line per finished client request is appended.
        stdin_fd: What the client writes.
        stdout_fd: What the client reads.
        grace_s: How long the server has to exit after its stdin closes and it has answered
            every request the client sent (however long answering takes).
        normalise: What the log's params go through (the run's paths become placeholders, so
            the log replays in another working directory); answers are logged as they came.
        on_start: Called with the started server and the function that closes the log (the
            entry point installs its signal handlers with them).

    Returns:
        The server's exit status (``128 + N`` when signal N ended it).

    Raises:
        InputError: the log cannot be written.
        OSError: the server could not be started.
    """
    exchanges = _Log(log, normalise)
    try:
        server = _ServerProcess(command)
    except OSError:
        exchanges.close()
        raise
    if on_start is not None:
        on_start(server, exchanges.close)
    assert server.process.stdin is not None and server.process.stdout is not None
    to_server = server.process.stdin.fileno()
    from_server = server.process.stdout.fileno()
    server_gone = threading.Event()

    def client_to_server() -> None:
        try:
            for line in _lines(stdin_fd):
                for message in (_messages(line) or ([], False))[0]:
                    exchanges.client_sent(message)
                _write_all(to_server, line)
        except OSError:
            pass  # the server is gone; its stdout ends and the relay with it
        finally:
            with contextlib.suppress(OSError):
                server.process.stdin.close()  # type: ignore[union-attr]
        # The grace starts when the server has answered what it was asked, not when the client
        # closed stdin: a client may send its requests and close at once, before a slow server
        # has read the first one, and a server stopped then would answer nothing.
        exchanges.wait_answered(server_gone, lambda: server.process.poll() is None)
        if not server.exited_within(grace_s):
            server.stop(grace_s)

    try:
        threading.Thread(target=client_to_server, name="mcp-relay-in", daemon=True).start()
        for line in _lines(from_server):
            try:
                _write_all(stdout_fd, line)
            except OSError:
                break  # the client stopped reading: the session is over
            for message in (_messages(line) or ([], False))[0]:
                exchanges.server_sent(message)
        # The server closed its stdout: it is exiting (or something it started kept it open).
        exchanges.server_gone(server_gone)
        if not server.exited_within(grace_s):
            server.stop(grace_s)
        return server.exit_status()
    finally:
        exchanges.close()
        server.stop(0)
        server.process.stdout.close()


# --- replaying -----------------------------------------------------------------------------


@dataclass(frozen=True)
class McpExchange:
    """One recorded client request and the server's answer."""

    method: str
    """The JSON-RPC method (``initialize``, ``tools/list``, ``tools/call``...)."""
    params: Any
    """The request's params as recorded (normalised or not: they are normalised again)."""
    response: Mapping[str, Any]
    """``{"result": ...}`` or ``{"error": ...}``; neither for a request the server never
    answered (a ``subscriptions/listen`` stream open until the end); with ``notifications``,
    the server's messages about the request that came before its answer."""


def load_exchanges(path: Path) -> list[McpExchange]:
    """Reads an exchanges file: a JSON list of ``{"method", "params", "response"}``.

    Raises:
        InputError: the file cannot be read, is not JSON or an entry has the wrong shape.
    """
    fix = 'write a JSON list of {"method": ..., "params": ..., "response": {"result": ...}}'
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read the exchanges: {exc.strerror}", location=str(path)) from None
    except ValueError as exc:
        raise InputError(f"not JSON: {exc}", location=str(path), fix=fix) from None
    if not isinstance(data, list):
        raise InputError("expected a list of exchanges", location=f"{path}#", fix=fix)
    exchanges = []
    for index, item in enumerate(data):
        response = item.get("response") if isinstance(item, dict) else None
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("method"), str)
            or not isinstance(response, dict)
            or ("result" in response and "error" in response)
            or not isinstance(response.get("notifications", []), list)
        ):
            raise InputError(
                'expected {"method": "...", "params": ..., "response": {"result": ...} or '
                '{"error": ...} or {} (never answered), with an optional "notifications" list}',
                location=f"{path}#/{index}",
                fix=fix,
            )
        exchanges.append(McpExchange(item["method"], item.get("params"), response))
    return exchanges


@dataclass(frozen=True)
class Miss:
    """A request the recording does not hold."""

    method: str
    """The request's method."""
    params: Any
    """The request's params as sent."""
    message: str
    """``replay miss: ...``: the method, the nearest recorded request and what differs."""


ABSENT = object()
"""The side of a difference where the key or list item does not exist."""


def _excerpt(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= _EXCERPT_CHARS else text[: _EXCERPT_CHARS - 1] + "…"


def _pointer_part(key: object) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def differences(recorded: Any, live: Any, pointer: str = "") -> list[tuple[str, Any, Any]]:
    """Where two JSON values differ: ``(json pointer, recorded, live)`` at the deepest level,
    in document order; :data:`ABSENT` stands for a key or item one side does not have."""
    if isinstance(recorded, dict) and isinstance(live, dict):
        found = []
        for key in [*recorded, *(k for k in live if k not in recorded)]:
            where = f"{pointer}/{_pointer_part(key)}"
            found += differences(recorded.get(key, ABSENT), live.get(key, ABSENT), where)
        return found
    if isinstance(recorded, list) and isinstance(live, list):
        found = []
        for index in range(max(len(recorded), len(live))):
            old = recorded[index] if index < len(recorded) else ABSENT
            new = live[index] if index < len(live) else ABSENT
            found += differences(old, new, f"{pointer}/{index}")
        return found
    same = recorded is live or (type(recorded) is type(live) and recorded == live)
    return [] if same else [(pointer, recorded, live)]


class RecordedServer:
    """Answers client requests from recorded exchanges, each exchange once, in recorded order."""

    def __init__(self, exchanges: Sequence[McpExchange], normalise: Normalise = _as_sent):
        """
        Args:
            exchanges: The recording, in recorded order.
            normalise: ``(method, params) -> {"method", "params"}`` with volatile parts
                replaced, applied to both sides.
        """
        self.exchanges = list(exchanges)
        self.normalise = normalise
        self._documents = [normalise(e.method, e.params) for e in self.exchanges]
        # Canonical JSON, so that 1 and true (equal in Python) stay different, as on the wire.
        self._keys = [_canonical(d) for d in self._documents]
        self._used = [False] * len(self.exchanges)

    def answer(self, method: str, params: Any) -> Mapping[str, Any] | Miss:
        """The recorded response for a request (see :attr:`McpExchange.response`), or why there
        is none."""
        document = self.normalise(method, params)
        key = _canonical(document)
        for index, exchange in enumerate(self.exchanges):
            if not self._used[index] and exchange.method == method and self._keys[index] == key:
                self._used[index] = True
                return exchange.response
        return Miss(method, params, self._explain(method, key, document))

    def _explain(self, method: str, key: str, document: Mapping[str, Any]) -> str:
        same_method = [i for i, e in enumerate(self.exchanges) if e.method == method]
        if not same_method:
            recorded = sorted({e.method for e in self.exchanges})
            held = ", ".join(recorded) if recorded else "nothing"
            return (
                f"{MISS_PREFIX}{method}: the recording holds no {method} request (it holds {held})"
            )
        identical = [i for i in same_method if self._keys[i] == key]
        if identical:
            return (
                f"{MISS_PREFIX}{method}: this request was recorded {len(identical)} time(s) and "
                f"every recorded answer is used (recorded request #{identical[-1]}): "
                "the client asks more often than when it was recorded"
            )
        # Nearest: fewest differences, an unused one first, the earliest among equals.
        nearest = min(
            same_method,
            key=lambda i: (len(differences(self._documents[i], document)), self._used[i], i),
        )
        found = differences(self._documents[nearest], document)
        shown = "; ".join(
            f"{where or '/'}: {_excerpt(old)} -> {_excerpt(new)}"
            for where, old, new in found[:_SHOWN_DIFFERENCES]
        )
        more = (
            f" (and {len(found) - _SHOWN_DIFFERENCES} more)"
            if len(found) > _SHOWN_DIFFERENCES
            else ""
        )
        used = ", already used" if self._used[nearest] else ""
        return (
            f"{MISS_PREFIX}{method}: no recorded request has these params; nearest is recorded "
            f"request #{nearest} ({method}{used}), which differs at {shown}{more} "
            "(recorded -> now)"
        )


@dataclass(frozen=True)
class _LiveIds:
    """The ids of a live request that its recorded answer must carry instead of the recorded
    ones: the request id (also as a subscription's id) and its progress token."""

    request: Mapping[str, Any]

    def put_on(self, message: Any) -> Any:
        """A copy of a recorded notification or answer with the live ids."""
        if not isinstance(message, dict):
            return message
        copy = dict(message)
        for part in ("params", "result"):
            if not isinstance(copy.get(part), dict):
                continue
            body = copy[part] = dict(copy[part])
            meta = _meta_of(body)
            if SUBSCRIPTION_ID in meta:
                body["_meta"] = {**meta, SUBSCRIPTION_ID: self.request["id"]}
            token = _meta_of(self.request.get("params")).get("progressToken")
            if part == "params" and "progressToken" in body and token is not None:
                body["progressToken"] = token
        return copy


class _MissLog:
    """The misses file, opened when the first miss comes (a clean replay writes nothing)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def add(self, miss: Miss) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        entry = {"method": miss.method, "params": miss.params, "message": miss.message}
        os.write(self._fd, _encode(entry))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _replies(server: RecordedServer, line: bytes, misses: _MissLog) -> Iterator[bytes]:
    """What the client gets for one line: the recorded notifications of each request, then the
    answers (one line, a list for a batch)."""
    parsed = _messages(line)
    if parsed is None:
        error = {"code": PARSE_ERROR_CODE, "message": "not JSON"}
        yield _encode({"jsonrpc": "2.0", "id": None, "error": error})
        return
    messages, batch = parsed
    answers = []
    for message in messages:
        if not _is_request(message):
            continue  # notifications, and answers to requests a server never sent
        answer = server.answer(message["method"], message.get("params"))
        if isinstance(answer, Miss):
            misses.add(answer)
            answer = {"error": {"code": MISS_CODE, "message": answer.message}}
        live = _LiveIds(message)
        for notification in answer.get("notifications", []):
            yield _encode(live.put_on(notification))
        if "result" in answer or "error" in answer:
            body = {k: v for k, v in answer.items() if k in ("result", "error")}
            answers.append(live.put_on({"jsonrpc": "2.0", "id": message["id"], **body}))
        # Neither: the server never answered it (an open subscription), so replay does not.
    if answers:
        yield _encode(answers if batch else answers[0])


def replay(
    server: RecordedServer,
    misses: Path,
    *,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
) -> int:
    """Answers a client's requests from ``server`` until the client closes stdin.

    Returns:
        0 (misses are answered as JSON-RPC errors and appended to ``misses``, not an exit).
    """
    miss_log = _MissLog(misses)
    try:
        for line in _lines(stdin_fd):
            for reply in _replies(server, line, miss_log):
                _write_all(stdout_fd, reply)
    except BrokenPipeError:
        pass  # the client stopped reading: the session is over
    finally:
        miss_log.close()
    return 0


# --- the command line ----------------------------------------------------------------------


def _normaliser(paths_json: str | None, rules_json: str | None) -> Normalise:
    """``normalise_mcp`` bound to the run's volatile paths and the suite's rules."""
    from skilltest.replay.normalise import Rules, RunPaths, normalise_mcp

    paths = None
    if paths_json:
        given = _json_object(paths_json, "--paths-json")
        known = {"workdir", "home", "tmp", "root", "user_home"}
        paths = RunPaths(
            **{k: str(v) for k, v in given.items() if k in known and v},
            repos=tuple(str(r) for r in given.get("repos") or () if r),
        )
    rules = Rules()
    if rules_json:
        rules = Rules.from_suite(_json_object(rules_json, "--rules-json"), "--rules-json#")

    def normalise(method: str, params: Any) -> Mapping[str, Any]:
        if params is not None and not isinstance(params, Mapping):
            return {"method": method, "params": params}  # by-position params: MCP sends none
        return normalise_mcp(method, params, paths=paths, rules=rules)

    return normalise


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{option} is not JSON: {exc}", location=option) from None
    if not isinstance(value, dict):
        raise InputError(f"{option} must be a JSON object", location=option)
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m skilltest.replay.mcp_relay",
        description="Record a stdio MCP server's traffic, or answer from a recording.",
    )
    modes = parser.add_subparsers(dest="mode", required=True)
    rec = modes.add_parser("record", help="relay to the real server and log each exchange")
    rec.add_argument("--log", type=Path, required=True, help="JSON lines appended per request")
    rec.add_argument("--paths-json", help='{"workdir", "home", "tmp", "root"} of this run')
    rec.add_argument("--rules-json", help="the suite's replay rules (ignore, normalise)")
    rec.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    rep = modes.add_parser("replay", help="answer from recorded exchanges, start no server")
    rep.add_argument("--exchanges", type=Path, required=True, help="JSON list of exchanges")
    rep.add_argument("--misses", type=Path, required=True, help="JSON lines appended per miss")
    rep.add_argument("--paths-json", help='{"workdir", "home", "tmp", "root"} of this run')
    rep.add_argument("--rules-json", help="the suite's replay rules (ignore, normalise)")
    return parser


def _stop_on_signals(server: _ServerProcess, close_log: Callable[[], None]) -> None:
    def handler(signum: int, frame: object) -> None:
        server.stop()
        close_log()
        # Straight out: the reading threads may be blocked, and there is nothing else to flush.
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """The relay's entry point; returns its exit status (2 for bad options or files)."""
    options = _parser().parse_args(argv)
    try:
        if options.mode == "record":
            command = options.command[1:] if options.command[:1] == ["--"] else options.command
            if not command:
                raise InputError("no server command", fix="record --log FILE -- COMMAND [ARGS...]")
            # Without paths or rules the log keeps the params as sent, and the normaliser is
            # not even imported.
            normalise = (
                _normaliser(options.paths_json, options.rules_json)
                if options.paths_json or options.rules_json
                else _as_sent
            )
            try:
                return record(command, options.log, normalise=normalise, on_start=_stop_on_signals)
            except OSError as exc:
                sys.stderr.write(f"mcp_relay: cannot start {command[0]!r}: {exc.strerror}\n")
                return 127
        normalise = _normaliser(options.paths_json, options.rules_json)
        server = RecordedServer(load_exchanges(options.exchanges), normalise)
        return replay(server, options.misses)
    except InputError as exc:
        sys.stderr.write(f"mcp_relay: {exc}\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
