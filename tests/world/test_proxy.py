"""The world's proxy with real TLS clients on loopback: declared hosts answered by a stand-in
fake with a certificate from the run's CA, everything else refused and recorded without the
proxy ever connecting to it, the model API tunnelled untouched, and every limit enforced."""

from __future__ import annotations

import http.client
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography import x509

from skilltest.world.calls import EgressViolation
from skilltest.world.http import HttpRequest, HttpResponse, json_response
from skilltest.world.policy import DestinationPolicy
from skilltest.world.proxy import WorldProxy
from skilltest.world.tls import CertificateAuthority
from tests.world.loopback import LoopbackServer

HOST = "api.tickets.example.com"
WAIT_S = 60.0
"""A bound for a hang only, on an answer, a connection or a close; load alone never reaches it."""


class StandIn:
    """A fake in miniature: records each request and answers with what it saw, or with the
    answer a test sets."""

    def __init__(self) -> None:
        self.requests: list[HttpRequest] = []
        self.times: list[float] = []
        self.answer: HttpResponse | None = None
        self.fail = False

    def __call__(self, request: HttpRequest, now: float) -> HttpResponse | None:
        self.requests.append(request)
        self.times.append(now)
        if self.fail:
            raise RuntimeError("the fake broke")
        if request.host != HOST:
            return None
        if self.answer is not None:
            return self.answer
        return json_response(
            200,
            {
                "method": request.method,
                "path": request.path,
                "query": {k: list(v) for k, v in request.query.items()},
                "body": request.body.decode(),
            },
            {"ETag": '"3"'},
        )


class Upstreams:
    """Records every connection the proxy opens itself (only pass-through ones may happen)."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int, timeout: float) -> socket.socket:
        self.opened.append((host, port))
        return socket.create_connection((host, port), timeout=timeout)


class World:
    def __init__(self, proxy: WorldProxy, fake: StandIn, ca: CertificateAuthority) -> None:
        self.proxy, self.fake, self.ca = proxy, fake, ca
        self.violations: list[EgressViolation] = []
        self.upstreams = Upstreams()


@pytest.fixture
def make_world(tmp_path: Path) -> Iterator[Callable[..., World]]:
    proxies: list[WorldProxy] = []

    def make(
        pass_through: tuple[str, ...] = (), hosts: tuple[str, ...] = (HOST,), **options: float
    ) -> World:
        fake = StandIn()
        ca = CertificateAuthority(tmp_path / f"ca{len(proxies)}")
        world = World(None, fake, ca)  # type: ignore[arg-type]
        world.proxy = WorldProxy(
            dispatch=fake,
            policy=DestinationPolicy(hosts, pass_through=pass_through),
            ca=ca,
            on_violation=world.violations.append,
            open_upstream=world.upstreams,
            **options,  # type: ignore[arg-type]
        ).start()
        proxies.append(world.proxy)
        return world

    yield make
    for proxy in proxies:
        proxy.close()


def client_context(ca: CertificateAuthority | None, cafile: Path | None = None) -> ssl.SSLContext:
    """What a careful client does: verify the chain and the name, strictly (the X.509 rules
    Python 3.13 enforces by default)."""
    context = ssl.create_default_context(cafile=str(cafile or ca.ca_file) if ca or cafile else None)
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    return context


def https(
    world: World,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    ca: CertificateAuthority | None = None,
    cafile: Path | None = None,
    timeout: float = WAIT_S,
) -> tuple[int, dict[str, str], bytes]:
    """One HTTPS request through the proxy (CONNECT, then TLS), as ``HTTPS_PROXY`` clients do;
    the client trusts ``ca`` (the world's by default) or ``cafile``."""
    context = client_context(None, cafile) if cafile else client_context(ca or world.ca)
    connection = http.client.HTTPSConnection(
        "127.0.0.1", world.proxy.port, context=context, timeout=timeout
    )
    connection.set_tunnel(HOST, 443)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def raw(world: World, data: bytes, *, port: int | None = None) -> bytes:
    """Sends bytes to the proxy and returns everything it answers until it closes."""
    with socket.create_connection(("127.0.0.1", port or world.proxy.port), timeout=WAIT_S) as sock:
        sock.sendall(data)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def eventually(condition: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


# -- declared hosts ----------------------------------------------------------------------------


def test_https_to_a_declared_host_is_answered_by_its_fake_with_the_runs_certificate(make_world):
    world = make_world()
    status, headers, body = https(
        world,
        "PATCH",
        "/tickets/INC-1042?notify=no&notify=",
        body=b'{"owner": "platform"}',
        headers={"If-Match": '"3"', "Authorization": "Bearer agent-token", "X-Trace": "a"},
    )

    assert status == 200
    assert headers["etag"] == '"3"' and headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "method": "PATCH",
        "path": "/tickets/INC-1042",
        "query": {"notify": ["no", ""]},
        "body": '{"owner": "platform"}',
    }
    (request,) = world.fake.requests
    assert (request.scheme, request.host, request.port) == ("https", HOST, 443)
    assert request.raw_query == "notify=no&notify="
    assert request.headers["if-match"] == '"3"'
    assert request.headers["authorization"] == "Bearer agent-token"
    assert world.violations == [] and world.upstreams.opened == []


def test_the_leaf_certificate_names_the_host_and_is_signed_by_this_runs_ca(make_world):
    world = make_world()
    with socket.create_connection(("127.0.0.1", world.proxy.port), timeout=WAIT_S) as sock:
        sock.sendall(f"CONNECT {HOST}:443 HTTP/1.1\r\nHost: {HOST}:443\r\n\r\n".encode())
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
        with client_context(world.ca).wrap_socket(sock, server_hostname=HOST) as tls:
            leaf = x509.load_der_x509_certificate(tls.getpeercert(binary_form=True))
            assert tls.selected_alpn_protocol() in (None, "http/1.1")
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == [HOST]
    assert leaf.issuer == world.ca.certificate.subject
    leaf.verify_directly_issued_by(world.ca.certificate)  # raises unless the CA signed it
    assert (leaf.not_valid_after_utc - leaf.not_valid_before_utc).days <= 2


def test_each_run_has_its_own_ca_and_a_client_trusting_another_refuses_the_certificate(
    make_world,
):
    first, second = make_world(), make_world()
    assert first.ca.ca_file.read_bytes() != second.ca.ca_file.read_bytes()
    with pytest.raises(ssl.SSLCertVerificationError):
        https(first, "GET", "/tickets", ca=second.ca)
    assert first.fake.requests == []
    # The proxy's side of the handshake ends just after the client's.
    assert eventually(
        lambda: any(
            "TLS with api.tickets.example.com failed" in error and "unknown ca" in error.lower()
            for error in first.proxy.errors
        )
    ), first.proxy.errors


def test_the_bundle_holds_the_runs_ca_and_the_system_roots(make_world):
    world = make_world()
    bundle = world.ca.bundle_file.read_bytes()
    assert bundle.startswith(world.ca.ca_file.read_bytes())
    assert bundle.count(b"BEGIN CERTIFICATE") > 1  # the system's roots follow
    status, _, _ = https(world, "GET", "/tickets", ca=None, cafile=world.ca.bundle_file)
    assert status == 200


def test_one_tunnel_carries_several_requests(make_world):
    world = make_world()
    connection = http.client.HTTPSConnection(
        "127.0.0.1", world.proxy.port, context=client_context(world.ca), timeout=WAIT_S
    )
    connection.set_tunnel(HOST, 443)
    for path in ("/tickets", "/tickets/INC-1042", "/tickets/INC-7"):
        connection.request("GET", path)
        response = connection.getresponse()
        assert response.status == 200
        assert json.loads(response.read())["path"] == path
    connection.close()
    assert [r.path for r in world.fake.requests] == [
        "/tickets",
        "/tickets/INC-1042",
        "/tickets/INC-7",
    ]
    assert world.fake.times == sorted(world.fake.times)


def test_plain_http_in_absolute_form_is_answered_and_each_request_on_a_connection_decided(
    make_world,
):
    world = make_world()
    answer = raw(
        world,
        (
            f"GET http://{HOST}/tickets?status=open HTTP/1.1\r\nHost: {HOST}\r\n"
            "Proxy-Authorization: Basic eA==\r\n\r\n"
            "GET http://example.org/steal HTTP/1.1\r\nHost: example.org\r\n\r\n"
        ).encode(),
    )
    first, second = answer.split(b"HTTP/1.1 ")[1:3]
    assert first.startswith(b"200") and b'"query": {"status": ["open"]}' in first
    assert second.startswith(b"403") and b"example.org is refused (not a declared host)" in second
    (request,) = world.fake.requests
    assert (request.scheme, request.port, request.path) == ("http", 80, "/tickets")
    assert "proxy-authorization" not in request.headers  # meant for the proxy only
    assert [(v.host, v.scheme, v.url) for v in world.violations] == [
        ("example.org", "http", "http://example.org/steal")
    ]


def test_a_tunnel_that_does_not_start_with_tls_is_read_as_plain_http(make_world):
    world = make_world()
    answer = raw(
        world,
        (
            f"CONNECT {HOST}:80 HTTP/1.1\r\nHost: {HOST}:80\r\n\r\n"
            f"GET /tickets HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n"
        ).encode(),
    )
    assert answer.startswith(b"HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK")
    assert [(r.scheme, r.port) for r in world.fake.requests] == [("http", 80)]


def test_a_mixed_case_host_with_a_trailing_dot_is_the_declared_host(make_world):
    world = make_world()
    answer = raw(
        world,
        (
            b"GET http://API.Tickets.Example.COM./tickets HTTP/1.1\r\n"
            b"Host: API.Tickets.Example.COM.\r\nConnection: close\r\n\r\n"
        ),
    )
    assert status_of(answer) == 200
    assert world.fake.requests[0].host == HOST


# -- refused destinations ----------------------------------------------------------------------

REFUSED_CONNECT = [
    ("example.org:443", "example.org", "not a declared host"),
    ("169.254.169.254:443", "169.254.169.254", "cloud metadata address 169.254.169.254"),
    ("[fd00:ec2::254]:443", "fd00:ec2::254", "cloud metadata address fd00:ec2::254"),
    ("metadata.google.internal:443", "metadata.google.internal", "cloud metadata host"),
    ("127.0.0.1:443", "127.0.0.1", "loopback address 127.0.0.1"),
    ("2130706433:443", "127.0.0.1", "loopback address 127.0.0.1 (written 2130706433)"),
    ("0x7f.1:443", "127.0.0.1", "loopback address 127.0.0.1 (written 0x7f.1)"),
    ("[::1]:443", "::1", "loopback address ::1"),
    ("10.0.0.8:443", "10.0.0.8", "private address 10.0.0.8"),
    ("localhost:443", "localhost", "loopback name localhost"),
    (f"{HOST}.evil.test:443", f"{HOST}.evil.test", "suffix look-alike"),
    (f"x.{HOST}:443", f"x.{HOST}", "subdomain of api.tickets.example.com is not declared"),
    (f"{HOST}:8443", HOST, "port 8443 is not allowed"),
    (f"{HOST}@evil.test:443", "evil.test", "userinfo in the URL"),
    (
        "xn--pi-7ka.tickets.example.com:443",
        "xn--pi-7ka.tickets.example.com",
        "internationalised name",
    ),
]


def assert_refused(world, answer: bytes, host: str, reason: str, url: str) -> None:
    """Refused with a 403 that says why, recorded as the run's one violation (at ``host``,
    unless it is empty), never opened."""
    assert status_of(answer) == 403
    assert b"only the world's declared hosts can be reached" in answer
    (violation,) = world.violations
    if host:
        assert violation.host == host
    assert reason in violation.reason
    assert violation.url == url
    assert world.upstreams.opened == [] and world.fake.requests == []


@pytest.mark.parametrize(("target", "host", "reason"), REFUSED_CONNECT)
def test_connect_to_any_other_destination_is_refused_recorded_and_never_opened(
    make_world, target, host, reason
):
    world = make_world()
    answer = raw(world, f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
    assert_refused(world, answer, host, reason, url=f"https://{target}/")


REFUSED_URLS = [
    ("http://example.org/", "example.org", "not a declared host"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "cloud metadata address"),
    ("http://[::ffff:127.0.0.1]/", "::ffff:7f00:1", "loopback address 127.0.0.1 (IPv4-mapped"),
    ("http://0177.0.0.1/", "127.0.0.1", "loopback address 127.0.0.1 (written 0177.0.0.1)"),
    ("http://224.0.0.1/", "224.0.0.1", "multicast address"),
    (f"http://{HOST}@evil.test/", "evil.test", "userinfo in the URL"),
    ("ftp://files.example.org/x", "", "scheme ftp: is not allowed"),
    ("gopher://evil.test:70/_x", "", "scheme gopher: is not allowed"),
    ("file:///etc/passwd", "", "scheme file: is not allowed"),
]


@pytest.mark.parametrize(("url", "host", "reason"), REFUSED_URLS)
def test_absolute_form_to_any_other_destination_is_refused_and_recorded(
    make_world, url, host, reason
):
    world = make_world()
    answer = raw(world, f"GET {url} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    assert_refused(world, answer, host, reason, url=url)


def test_a_request_that_is_not_for_a_proxy_is_told_how_to_use_it(make_world):
    world = make_world()
    answer = raw(world, b"GET /tickets HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert status_of(answer) == 400
    assert b"send absolute-form requests" in answer
    assert world.violations == []


def test_a_host_allowed_by_the_policy_but_served_by_no_fake_is_refused(make_world):
    world = make_world(hosts=(HOST, "api.orders.example.com"))
    answer = raw(
        world,
        b"GET http://api.orders.example.com/ HTTP/1.1\r\nHost: api.orders.example.com\r\n\r\n",
    )
    assert status_of(answer) == 502
    assert [(v.host, v.reason) for v in world.violations] == [
        ("api.orders.example.com", "no fake serves this host")
    ]


# -- pass-through ------------------------------------------------------------------------------


class EchoServer(LoopbackServer):
    """A loopback TCP server standing in for the model API: echoes what it receives."""

    def __init__(self) -> None:
        self.received: list[bytes] = []
        super().__init__()

    def handle(self, connection: socket.socket) -> None:
        while data := connection.recv(65536):
            self.received.append(data)
            connection.sendall(data)


def test_the_model_api_is_tunnelled_untouched(make_world):
    upstream = EchoServer()
    world = make_world(pass_through=(f"127.0.0.1:{upstream.port}",))
    with socket.create_connection(("127.0.0.1", world.proxy.port), timeout=WAIT_S) as sock:
        sock.sendall(f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode())
        assert sock.recv(1024) == b"HTTP/1.1 200 Connection established\r\n\r\n"
        sock.sendall(b"\x16\x03\x01 opaque bytes")
        assert sock.recv(1024) == b"\x16\x03\x01 opaque bytes"
    upstream.sock.close()
    assert world.upstreams.opened == [("127.0.0.1", upstream.port)]
    assert world.fake.requests == [] and world.violations == []


def test_plain_http_to_the_model_api_is_relayed_without_proxy_headers(make_world):
    upstream = EchoServer()
    world = make_world(pass_through=(f"127.0.0.1:{upstream.port}",))
    with socket.create_connection(("127.0.0.1", world.proxy.port), timeout=WAIT_S) as sock:
        sock.sendall(
            (
                f"POST http://127.0.0.1:{upstream.port}/v1/messages HTTP/1.1\r\n"
                "Proxy-Authorization: Basic eA==\r\nx-api-key: sk-test\r\n"
                "Content-Length: 2\r\n\r\n{}"
            ).encode()
        )
        answer = b""
        while not answer.endswith(b"{}"):  # the stand-in echoes what the upstream received
            answer += sock.recv(65536)
    upstream.sock.close()
    assert answer.startswith(b"POST /v1/messages HTTP/1.1\r\n")
    assert b"x-api-key: sk-test" in answer and b"proxy-authorization" not in answer.lower()
    assert answer.endswith(b"\r\n\r\n{}")


# -- faults and limits -------------------------------------------------------------------------


def test_a_delay_is_honoured(make_world):
    world = make_world()
    world.fake.answer = HttpResponse(200, {}, b"late", delay_s=0.4)
    started = time.monotonic()
    status, _, body = https(world, "GET", "/tickets")
    assert (status, body) == (200, b"late")
    assert time.monotonic() - started >= 0.4


def test_a_hang_is_never_answered_and_ends_at_the_proxys_limit(make_world):
    world = make_world(answer_timeout_s=2 * WAIT_S)
    world.fake.answer = HttpResponse(200, {}, b"never", hang=True)
    with pytest.raises(TimeoutError):
        https(world, "GET", "/tickets", timeout=0.2)  # the client's own timeout decides
    world.proxy.answer_timeout_s = 0.5
    started = time.monotonic()
    with pytest.raises(http.client.RemoteDisconnected):
        https(world, "GET", "/tickets", timeout=2 * WAIT_S)  # else the proxy's limit ends it
    assert 0.4 < time.monotonic() - started < WAIT_S
    assert len(world.fake.requests) == 2


def test_closing_the_proxy_ends_a_hanging_answer_at_once(make_world):
    world = make_world()
    world.fake.answer = HttpResponse(200, {}, b"never", hang=True)
    errors: list[BaseException] = []

    def client() -> None:
        try:
            https(world, "GET", "/tickets", timeout=2 * WAIT_S)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=client)
    thread.start()
    assert eventually(lambda: bool(world.fake.requests))
    started = time.monotonic()
    world.proxy.close()
    thread.join(WAIT_S)  # not the client's own timeout: the close cut its connection
    assert not thread.is_alive() and time.monotonic() - started < WAIT_S
    assert errors and isinstance(errors[0], (http.client.RemoteDisconnected, OSError))


@pytest.mark.parametrize(
    ("request_bytes", "status", "message"),
    [
        (
            f"POST http://{HOST}/t HTTP/1.1\r\nContent-Length: 2000\r\n\r\n".encode(),
            413,
            b"request body over 1000 bytes",
        ),
        (
            f"POST http://{HOST}/t HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n7d0\r\n".encode()
            + b"x" * 2000,
            413,
            b"request body over 1000 bytes",
        ),
        (
            f"GET http://{HOST}/t HTTP/1.1\r\nX: {'y' * 70000}\r\n\r\n".encode(),
            431,
            b"request head too large",
        ),
        (
            f"POST http://{HOST}/t HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n".encode(),
            400,
            b"both Transfer-Encoding and Content-Length",
        ),
        (
            f"GET http://{HOST}/t HTTP/1.1\r\n folded: x\r\n\r\n".encode(),
            400,
            b"malformed header line",
        ),
        (b"GARBAGE\r\n\r\n", 400, b"not an HTTP/1.1 request line"),
    ],
)
def test_requests_beyond_the_limits_are_refused_before_the_fake_sees_them(
    make_world, request_bytes, status, message
):
    world = make_world(max_body_bytes=1000)
    answer = raw(world, request_bytes)
    assert status_of(answer) == status
    assert message in answer
    assert world.fake.requests == []


def test_a_chunked_body_reaches_the_fake_whole(make_world):
    world = make_world()
    answer = raw(
        world,
        (
            f"POST http://{HOST}/tickets HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
            'Connection: close\r\n\r\n4\r\n{"a"\r\n3;ext=1\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n'
        ).encode(),
    )
    assert status_of(answer) == 200
    assert world.fake.requests[0].body == b'{"a": 1}'


def test_a_fake_that_raises_is_a_500_and_an_error_of_the_proxy(make_world):
    world = make_world()
    world.fake.fail = True
    status, _, body = https(world, "GET", "/tickets")
    assert status == 500 and b"the fake for api.tickets.example.com failed" in body
    assert world.proxy.errors == [
        "GET api.tickets.example.com/tickets: RuntimeError('the fake broke')"
    ]


def test_head_answers_carry_no_body(make_world):
    world = make_world()
    status, headers, body = https(world, "HEAD", "/tickets")
    assert status == 200 and body == b"" and int(headers["content-length"]) > 0


# -- SOCKS5 ------------------------------------------------------------------------------------


def socks_connect(world: World, host: str, port: int) -> tuple[socket.socket, int]:
    sock = socket.create_connection(("127.0.0.1", world.proxy.socks_port), timeout=WAIT_S)
    sock.sendall(b"\x05\x01\x00")
    assert sock.recv(2) == b"\x05\x00"
    name = host.encode()
    sock.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + port.to_bytes(2, "big"))
    reply = sock.recv(10)
    return sock, reply[1]


def test_socks5_to_a_declared_host_is_answered_by_its_fake(make_world):
    world = make_world()
    sock, code = socks_connect(world, HOST, 443)
    assert code == 0
    with client_context(world.ca).wrap_socket(sock, server_hostname=HOST) as tls:
        tls.sendall(f"GET /tickets HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := tls.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 OK")
    assert [r.path for r in world.fake.requests] == ["/tickets"]


def test_socks5_to_another_destination_is_refused_and_recorded(make_world):
    world = make_world()
    sock, code = socks_connect(world, "evil.test", 443)
    sock.close()
    assert code == 2  # connection not allowed by ruleset
    assert [(v.host, v.port, v.reason) for v in world.violations] == [
        ("evil.test", 443, "not a declared host")
    ]
    assert world.upstreams.opened == []


# -- curl, when installed ----------------------------------------------------------------------

needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


def curl(world: World, *args: str, ca: Path | None) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HTTPS_PROXY": world.proxy.url,
        "http_proxy": world.proxy.url,  # curl reads only the lower-case name for http://
    }
    if ca is not None:
        env["CURL_CA_BUNDLE"] = str(ca)
    return subprocess.run(
        ["curl", "-sS", "-m", "10", *args], env=env, capture_output=True, text=True, check=False
    )


@needs_curl
def test_curl_trusts_the_runs_bundle_and_its_writes_reach_the_fake(make_world, tmp_path):
    world = make_world()
    done = curl(
        world,
        "-X",
        "PATCH",
        "-H",
        "If-Match: 3",
        "--data-binary",
        '{"owner": "platform"}',
        f"https://{HOST}/tickets/INC-1042",
        ca=world.ca.bundle_file,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["body"] == '{"owner": "platform"}'
    upload = tmp_path / "upload.bin"
    upload.write_bytes(b"x" * 200_000)
    big = curl(
        world, "--data-binary", f"@{upload}", f"https://{HOST}/upload", ca=world.ca.bundle_file
    )
    assert big.returncode == 0, big.stderr  # curl waits for 100 Continue on a large body
    assert len(world.fake.requests[-1].body) == 200_000


@needs_curl
def test_curl_without_the_runs_ca_refuses_the_certificate(make_world):
    world = make_world()
    done = curl(world, f"https://{HOST}/tickets", ca=None)
    assert done.returncode == 60, done.stderr  # peer certificate cannot be authenticated
    assert world.fake.requests == []


@needs_curl
def test_curl_to_an_undeclared_host_fails_on_the_refused_connect(make_world):
    world = make_world()
    done = curl(world, "https://example.org/", ca=world.ca.bundle_file)
    assert done.returncode == 56 and "CONNECT tunnel failed, response 403" in done.stderr
    assert [v.host for v in world.violations] == ["example.org"]
