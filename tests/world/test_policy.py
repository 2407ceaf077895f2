"""The destination policy: the declared hosts and the model API pass, everything else is refused
with the reason a reader of the results needs."""

from __future__ import annotations

import pytest

from skilltest.world.policy import DestinationPolicy, host_problem, normalise_host

DECLARED = ("api.tickets.example.com", "orders.example.com")


@pytest.fixture
def policy() -> DestinationPolicy:
    return DestinationPolicy(DECLARED, pass_through=["api.anthropic.com", "127.0.0.1:8123"])


ALLOWED = [
    # (destination, scheme, host, port)
    ("https://api.tickets.example.com/tickets?status=P1", None, "api.tickets.example.com", 443),
    ("http://api.tickets.example.com/tickets", None, "api.tickets.example.com", 80),
    ("api.tickets.example.com:443", "https", "api.tickets.example.com", 443),
    ("api.tickets.example.com", None, "api.tickets.example.com", None),
    ("orders.example.com:80", "http", "orders.example.com", 80),
    # DNS compares names case-insensitively and a trailing dot names the same host
    ("API.Tickets.EXAMPLE.com:443", "https", "api.tickets.example.com", 443),
    ("https://api.tickets.example.com./tickets", None, "api.tickets.example.com", 443),
    # fullwidth letters and ideographic dots are the same name once normalised (IDNA)
    ("https://ａｐｉ.tickets.example.com/", None, "api.tickets.example.com", 443),
    ("api。tickets。example。com:443", "https", "api.tickets.example.com", 443),
]


@pytest.mark.parametrize(("destination", "scheme", "host", "port"), ALLOWED)
def test_declared_hosts_are_allowed(policy, destination, scheme, host, port):
    decision = policy.check(destination, scheme=scheme)
    assert (decision.allowed, decision.reason, decision.host, decision.port) == (
        True,
        "declared host",
        host,
        port,
    )
    assert not decision.pass_through


@pytest.mark.parametrize(
    ("destination", "port"),
    [
        ("api.anthropic.com:443", 443),
        ("https://api.anthropic.com/v1/messages", 443),
        ("127.0.0.1:8123", 8123),
    ],
)
def test_the_model_api_passes_through(policy, destination, port):
    decision = policy.check(destination, scheme="https")
    assert (decision.allowed, decision.pass_through, decision.reason, decision.port) == (
        True,
        True,
        "pass-through",
        port,
    )


def test_a_pass_through_address_passes_only_on_its_port(policy):
    assert policy.check("127.0.0.1:8124", scheme="https").reason == "loopback address 127.0.0.1"
    assert not policy.check("api.anthropic.com:8443", scheme="https").allowed


REFUSED = [
    # IP literals in every spelling inet_aton and URL parsers accept
    ("2130706433", "loopback address 127.0.0.1 (written 2130706433)"),
    ("http://2130706433/", "loopback address 127.0.0.1 (written 2130706433)"),
    ("0177.0.0.1:443", "loopback address 127.0.0.1 (written 0177.0.0.1)"),
    ("017700000001", "loopback address 127.0.0.1 (written 017700000001)"),
    ("0x7f.1", "loopback address 127.0.0.1 (written 0x7f.1)"),
    ("0x7F000001:443", "loopback address 127.0.0.1 (written 0x7F000001)"),
    ("127.1", "loopback address 127.0.0.1 (written 127.1)"),
    ("127.0.0.1.:443", "loopback address 127.0.0.1 (written 127.0.0.1.)"),
    ("0.0.0.0:443", "unspecified address 0.0.0.0"),
    ("10.0.0.1:443", "private address 10.0.0.1"),
    ("https://192.168.1.10/admin", "private address 192.168.1.10"),
    ("172.16.0.1", "private address 172.16.0.1"),
    ("100.64.0.1", "non-public address 100.64.0.1"),
    ("224.0.0.1", "multicast address 224.0.0.1"),
    ("240.0.0.1", "reserved address 240.0.0.1"),
    ("8.8.8.8:443", "public IP address 8.8.8.8 (only declared host names are served)"),
    ("1.2.3.999", "'1.2.3.999' ends in a number but is no valid IP address"),
    # IPv6
    ("http://[::1]/", "loopback address ::1"),
    ("[0:0:0:0:0:0:0:1]:443", "loopback address ::1 (written [0:0:0:0:0:0:0:1])"),
    (
        "[::ffff:127.0.0.1]:443",
        "loopback address 127.0.0.1 (IPv4-mapped in ::ffff:7f00:1) (written [::ffff:127.0.0.1])",
    ),
    ("[fe80::1%25eth0]:443", "link-local address fe80::1 (written [fe80::1%25eth0])"),
    ("[fc00::5]:443", "private address fc00::5"),
    ("[ff02::1]:443", "multicast address ff02::1"),
    ("2002:7f00:1::", "loopback address 127.0.0.1 (6to4 in 2002:7f00:1::)"),
    ("[::1", "unclosed [ in an IPv6 address"),
    # cloud metadata
    ("http://169.254.169.254/latest/meta-data/", "cloud metadata address 169.254.169.254"),
    ("0xa9fea9fe", "cloud metadata address 169.254.169.254 (written 0xa9fea9fe)"),
    ("169.254.170.2:80", "cloud metadata address 169.254.170.2"),
    ("169.254.1.1:443", "link-local address 169.254.1.1"),
    ("fd00:ec2::254", "cloud metadata address fd00:ec2::254"),
    ("http://[fd00:ec2::254]/latest/", "cloud metadata address fd00:ec2::254"),
    ("100.100.100.200:80", "cloud metadata address 100.100.100.200"),
    (
        "http://metadata.google.internal/computeMetadata/v1/",
        "cloud metadata host metadata.google.internal",
    ),
    ("METADATA.Google.Internal.:80", "cloud metadata host metadata.google.internal"),
    # names for this machine
    ("localhost:443", "loopback name localhost"),
    ("LocalHost.", "loopback name localhost"),
    ("admin.localhost:443", "loopback name admin.localhost"),
    # schemes
    ("file:///etc/passwd", "scheme file: is not allowed (only http, https)"),
    ("gopher://api.tickets.example.com/", "scheme gopher: is not allowed (only http, https)"),
    ("ftp://api.tickets.example.com/", "scheme ftp: is not allowed (only http, https)"),
    ("dict://127.0.0.1:11211/stat", "scheme dict: is not allowed (only http, https)"),
    ("ws://api.tickets.example.com/", "scheme ws: is not allowed (only http, https)"),
    ("data:text/plain,hello", "scheme data: is not allowed (only http, https)"),
    ("javascript:alert(1)", "scheme javascript: is not allowed (only http, https)"),
    # userinfo and other authority tricks
    (
        "https://api.tickets.example.com@evil.test/",
        "userinfo in the URL: the host is 'evil.test', not what precedes the @",
    ),
    (
        "https://user:pass@api.tickets.example.com/",
        "userinfo in the URL: the host is 'api.tickets.example.com', not what precedes the @",
    ),
    (
        "https://evil.test\\@api.tickets.example.com/",
        "backslash in the authority (clients disagree on where the host ends)",
    ),
    ("api%2etickets.example.com:443", "percent-encoding in the host 'api%2etickets.example.com'"),
    ("https://api.tickets.example.com /", "spaces or control characters in the destination"),
    (
        "https://api.tickets.example.com\r\n.evil.test/",
        "spaces or control characters in the destination",
    ),
    ("", "empty destination"),
    # look-alikes: no suffix matching
    (
        "https://api.tickets.example.com.evil.test/",
        "suffix look-alike: api.tickets.example.com followed by more labels is another host",
    ),
    (
        "API.TICKETS.EXAMPLE.COM.evil.test:443",
        "suffix look-alike: api.tickets.example.com followed by more labels is another host",
    ),
    (
        "x.api.tickets.example.com:443",
        "subdomain of api.tickets.example.com is not declared (no suffix matching)",
    ),
    ("evilapi.tickets.example.com", "look-alike of api.tickets.example.com is not a declared host"),
    ("api-tickets.example.com:443", "not a declared host"),
    ("example.com:443", "not a declared host"),
    # trailing dots beyond the one DNS allows
    ("api.tickets.example.com..:443", "empty label in the host name 'api.tickets.example.com.'"),
    # IDN homographs: Cyrillic а, Greek ο
    (
        "https://аpi.tickets.example.com/",
        "IDN homograph of api.tickets.example.com: аpi.tickets.example.com is "
        "xn--pi-6kc.tickets.example.com",
    ),
    (
        "οrders.example.com:443",
        "IDN homograph of orders.example.com: οrders.example.com is xn--rders-qce.example.com",
    ),
    (
        "xn--80ak6aa92e.com:443",
        "internationalised name аррӏе.com (xn--80ak6aa92e.com) is not a declared host",
    ),
    # ports
    ("api.tickets.example.com:8443", "port 8443 is not allowed (only 80 and 443)"),
    ("https://api.tickets.example.com:22/", "port 22 is not allowed (only 80 and 443)"),
    ("api.tickets.example.com:99999", "invalid port '99999'"),
]


@pytest.mark.parametrize(("destination", "reason"), REFUSED, ids=[r[0] or "empty" for r in REFUSED])
def test_refused_destinations_say_why(policy, destination, reason):
    decision = policy.check(destination, scheme=None if "//" in destination else "https")
    assert (decision.allowed, decision.reason) == (False, reason)
    assert not decision.pass_through


def test_at_least_25_refused_destinations_are_tested():
    assert len(REFUSED) >= 25


def test_a_refusal_keeps_the_host_and_port_it_was_about(policy):
    decision = policy.check("0x7f.1:8080", scheme="https")
    assert (decision.host, decision.port, decision.scheme) == ("127.0.0.1", 8080, "https")
    userinfo = policy.check("https://api.tickets.example.com@evil.test/")
    assert (userinfo.host, userinfo.scheme) == ("evil.test", "https")


def test_a_redirect_target_is_checked_like_any_destination(policy):
    # the caller re-checks every Location before following it
    assert policy.check("https://api.tickets.example.com/tickets/2").allowed
    assert not policy.check("http://169.254.169.254/latest/meta-data/iam/").allowed


def test_the_policy_never_resolves_names(policy, monkeypatch):
    import socket

    def refuse(*_args, **_kwargs):
        raise AssertionError("the policy looked a name up")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "gethostbyname", refuse)
    assert policy.check("api.tickets.example.com:443", scheme="https").allowed
    assert not policy.check("rebind.evil.test:443", scheme="https").allowed


@pytest.mark.parametrize(
    ("host", "problem"),
    [
        ("api.tickets.example.com", None),
        ("API.Tickets.Example.com.", None),
        ("127.0.0.1", "'127.0.0.1' is an IP address (loopback address 127.0.0.1), not a host name"),
        (
            "2130706433",
            "'2130706433' is an IP address (loopback address 127.0.0.1), not a host name",
        ),
        ("localhost", "loopback name localhost"),
        ("metadata.google.internal", "cloud metadata host metadata.google.internal"),
        (
            "api.tickets.example.com:443",
            "'api.tickets.example.com:443' is not a host name (write the name only: no scheme, port or path)",
        ),
        (
            "https://api.tickets.example.com",
            "'https://api.tickets.example.com' is not a host name (write the name only: no scheme, port or path)",
        ),
        ("host.123", "'host.123' ends in a number: clients would read it as an IP address"),
        ("under_score.example.com", "not a valid host name: 'under_score.example.com'"),
    ],
)
def test_what_a_world_may_declare(host, problem):
    assert host_problem(host) == problem


def test_normalise_host():
    assert normalise_host("Bücher.Example.") == "xn--bcher-kva.example"
    with pytest.raises(ValueError, match="empty label"):
        normalise_host("a..b")
