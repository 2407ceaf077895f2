"""Where a run may send traffic: the declared hosts, the model API, and nothing else.

The world's proxy asks :meth:`DestinationPolicy.check` about every destination (a CONNECT
target, an absolute-form URL, a redirect's ``Location``) before it does anything with it. The
rules follow OWASP's SSRF prevention guidance, failing closed:

* Only ``http`` and ``https``; ``file:``, ``gopher:``, ``ftp:``, ``dict:``, ``data:``... are
  refused.
* Only ports 80 and 443 (a pass-through entry may name its own port).
* The host is compared with an exact allowlist after normalising it the way DNS and clients do:
  lower case, one trailing dot dropped, internationalised names converted to punycode (IDNA).
  There is no suffix matching: ``x.api.tickets.example.com`` and
  ``api.tickets.example.com.evil.test`` are not ``api.tickets.example.com``.
* A URL with userinfo (``https://api.tickets.example.com@evil.test/``, whose host is
  ``evil.test``), a backslash, spaces, control characters or percent-encoding in its authority is
  refused rather than parsed one way here and another way by the client.
* IP literals are refused in every spelling ``inet_aton`` and URL parsers accept: dotted,
  decimal (``2130706433``), octal (``0177.0.0.1``), hex (``0x7f.1``), shortened (``127.1``), and
  IPv6 (``[::1]``, ``[::ffff:127.0.0.1]``, with a zone ``[fe80::1%25eth0]``). The reason names
  the range: loopback, link-local, private, multicast, reserved, unspecified, cloud metadata
  (169.254.169.254, fd00:ec2::254 and the other providers' addresses), or a public address,
  which is refused too because only declared names are served. A host whose last label is a
  number but is no valid address is refused as well.
* Names that mean this machine or a cloud's metadata service (``localhost``, ``*.localhost``,
  ``metadata.google.internal``...) are refused even where a world would declare them.
* A world may not declare the model API's own host (``api.anthropic.com``, or the host of
  ``ANTHROPIC_BASE_URL``; :func:`model_api_hosts`), which the runs reach through the proxy
  untouched, nor a name that mixes scripts in a label (``аpi.example.com`` with a Cyrillic
  ``а``, or its punycode ``xn--pi-6kc.example.com``) or spells a Latin name in look-alike letters
  of another script: a skill's text never names such a host, a homograph attack does.

The policy never resolves a name: a declared host is answered by its fake, never looked up,
and everything else is refused, so DNS rebinding has nothing to rebind. Redirects are the
caller's to re-check with :meth:`DestinationPolicy.check`.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

ALLOWED_SCHEMES = frozenset({"http", "https"})
"""Schemes a destination may use."""
ALLOWED_PORTS = frozenset({80, 443})
"""Ports a declared host may be reached on."""
DEFAULT_PORTS = {"http": 80, "https": 443}

METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure WireServer
        "192.0.0.192",  # Oracle Cloud
    )
)
"""Cloud metadata services: the classic SSRF target, named as such in refusals."""
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.com",
    }
)
"""Host names of cloud metadata services."""
LOOPBACK_HOSTS = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})

MODEL_API_HOST = "api.anthropic.com"
"""The model API's host, which the runs reach through a world's proxy untouched."""

_SCRIPT_FAMILIES = (
    frozenset({"HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"HAN", "BOPOMOFO"}),
    frozenset({"HAN", "HANGUL"}),
)
"""Scripts a label of one language mixes (Japanese, Chinese, Korean), Latin beside them too
(Unicode's "highly restrictive" level, UTS #39): any other mix is a look-alike."""
"""Names that mean this machine (``*.localhost`` too, RFC 6761)."""

_RANGES = (
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_unspecified", "unspecified"),
    ("is_multicast", "multicast"),
    ("is_reserved", "reserved"),
    ("is_private", "private"),
)
"""How a refusal names the range of an address: the first ``ipaddress`` flag it has."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(.*)$", re.DOTALL)
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
_CONFUSABLES = str.maketrans(
    {
        # Cyrillic and Greek letters that render like Latin ones (the usual homograph material).
        "а": "a", "в": "b", "е": "e", "һ": "h", "і": "i", "ј": "j", "к": "k", "м": "m",
        "н": "h", "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s",
        "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g", "ı": "i", "α": "a", "ο": "o", "ν": "v",
        "κ": "k", "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ϲ": "c", "ӏ": "l",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Decision:
    """Whether a destination may be reached, and why."""

    allowed: bool
    """True for a declared host or a pass-through destination."""
    reason: str
    """Why, readable: ``declared host``, ``pass-through``, or what made it refused
    (``cloud metadata address 169.254.169.254``)."""
    host: str
    """The host as normalised (lower case, punycode, an IP address in its canonical form), or
    as written when it could not be normalised."""
    port: int | None = None
    """The port asked for or implied by the scheme; ``None`` when neither says."""
    scheme: str | None = None
    """The scheme, lower case, when one was given or implied."""
    pass_through: bool = False
    """Whether it is a pass-through destination (the model API), to be tunnelled untouched
    rather than answered by a fake."""


class _Refusal(Exception):
    """A destination refused while it was being parsed."""

    def __init__(self, reason: str, host: str = "", port: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.host = host
        self.port = port


def normalise_host(host: str) -> str:
    """A host name as DNS compares it: lower case, without one trailing dot, IDNA punycode.

    Raises:
        ValueError: not a valid host name (an empty label, a character no host name has, a
            label longer than 63 characters), with the reason.
    """
    if not host:
        raise ValueError("no host")
    # The dots IDNA treats as label separators (ideographic, fullwidth, halfwidth).
    host = re.sub("[\u3002\uff0e\uff61]", ".", host)
    if host.endswith("."):
        host = host[:-1]
    labels = host.split(".")
    if any(not label for label in labels):
        raise ValueError(f"empty label in the host name {host!r}")
    out = []
    for label in labels:
        if label.isascii():
            ascii_label = label.lower()
        else:
            try:
                # nameprep (NFKC, case folding) then punycode, as clients do before DNS
                ascii_label = label.encode("idna").decode("ascii").lower()
            except UnicodeError as exc:
                raise ValueError(f"not a valid internationalised name: {label!r}") from exc
        if not _LABEL.match(ascii_label):
            raise ValueError(f"not a valid host name: {host!r}")
        out.append(ascii_label)
    name = ".".join(out)
    if len(name) > 253:
        raise ValueError("host name longer than 253 characters")
    return name


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """The address ``inet_aton`` (and every URL parser after it) reads in ``host``, if any.

    One to four parts, each decimal, octal (leading 0) or hex (0x); the last part fills the
    remaining bytes: ``127.1`` is 127.0.0.1, ``2130706433`` is 127.0.0.1, ``0x7f.1`` too.
    """
    parts = host.split(".")
    if len(parts) > 4 or any(part == "" for part in parts):
        return None
    numbers = []
    for part in parts:
        lowered = part.lower()
        try:
            if lowered.startswith("0x"):
                numbers.append(int(lowered[2:] or "0", 16))
            elif len(lowered) > 1 and lowered.startswith("0"):
                numbers.append(int(lowered, 8))
            else:
                numbers.append(int(lowered, 10))
        except ValueError:
            return None
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (4 - len(head)):
        return None
    value = 0
    for n in head:
        value = value * 256 + n
    value = value * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(value)


def describe_address(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    """What range an IP address is in, for a refusal: ``loopback address 127.0.0.1``."""
    if isinstance(address, ipaddress.IPv6Address):
        for embedded, how in (
            (address.ipv4_mapped, "IPv4-mapped"),
            (address.sixtofour, "6to4"),
            (address.teredo[1] if address.teredo else None, "Teredo"),
        ):
            if embedded is not None:
                return f"{describe_address(embedded)} ({how} in {address})"
    if address in METADATA_ADDRESSES:
        return f"cloud metadata address {address}"
    for flag, kind in _RANGES:
        if getattr(address, flag):
            return f"{kind} address {address}"
    if not address.is_global:
        return f"non-public address {address}"
    return f"public IP address {address} (only declared host names are served)"


def _ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address an unbracketed host spells, in any form a client would accept."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    return _inet_aton(host.rstrip(".") if host.endswith(".") and not host.endswith("..") else host)


def _host_refusal(name: str) -> str | None:
    """Why a normalised host name may never be reached, whatever the allowlist says."""
    if name in LOOPBACK_HOSTS or name.endswith(".localhost"):
        return f"loopback name {name}"
    if name in METADATA_HOSTS:
        return f"cloud metadata host {name}"
    return None


def model_api_hosts(env: Mapping[str, str]) -> frozenset[str]:
    """The hosts a run's model endpoint uses: :data:`MODEL_API_HOST`, and the host of
    ``ANTHROPIC_BASE_URL`` in ``env`` when it names one (normalised)."""
    hosts = {MODEL_API_HOST}
    base = env.get("ANTHROPIC_BASE_URL") or ""
    try:
        name = urlsplit(base).hostname
        if name and _ip_literal(name) is None:
            hosts.add(normalise_host(name))
    except ValueError:
        pass  # not a URL a client could use: the run refuses it on its own
    return frozenset(hosts)


def _script(char: str) -> str | None:
    """The script of a letter, as its Unicode name begins (``LATIN``, ``CYRILLIC``, ``HAN``);
    ``None`` for what every script shares (digits, the hyphen, marks, the Japanese long-vowel
    mark)."""
    if not unicodedata.category(char).startswith("L"):
        return None
    word = unicodedata.name(char, "").split(" ", 1)[0]
    if word in ("CJK", "IDEOGRAPHIC"):
        return "HAN"
    if word in ("", "MODIFIER", "KATAKANA-HIRAGANA"):
        return None
    return word


def mixed_scripts(name: str) -> str | None:
    """Why a normalised host name is a look-alike, or ``None``: a label that mixes scripts
    beyond one language's (:data:`_SCRIPT_FAMILIES`), or that spells a Latin label in letters of
    another script (``аре`` in Cyrillic)."""
    for label in name.split("."):
        shown = _unicode(label) if label.startswith("xn--") else label
        scripts = {script for char in shown if (script := _script(char)) is not None}
        others = scripts - {"LATIN"}
        if len(scripts) > 1 and not any(others <= family for family in _SCRIPT_FAMILIES):
            kinds = " and ".join(sorted(word.title() for word in scripts))
            return f"the label {shown!r} mixes scripts ({kinds}): a look-alike of a name"
        skeleton = unicodedata.normalize("NFKC", shown).translate(_CONFUSABLES)
        if others and skeleton != shown and skeleton.isascii():
            return f"the label {shown!r} spells {skeleton!r} in look-alike letters"
    return None


def host_problem(host: str, *, reserved: Iterable[str] = ()) -> str | None:
    """Why a world cannot declare ``host``, or ``None`` when it can.

    A declared host must be a plain DNS name: not an IP literal in any spelling, not a name for
    this machine or a metadata service, with no port, scheme or path; not one of ``reserved``
    (the model API's hosts, :func:`model_api_hosts`), and no look-alike (:func:`mixed_scripts`).
    """
    if not host or any(ch in host for ch in ":/@?#[]\\%") or not host.isprintable() or " " in host:
        return f"{host!r} is not a host name (write the name only: no scheme, port or path)"
    address = _ip_literal(host)
    if address is not None:
        return f"{host!r} is an IP address ({describe_address(address)}), not a host name"
    last = host.rstrip(".").rsplit(".", 1)[-1]
    if _NUMERIC_LABEL.match(last):
        return f"{host!r} ends in a number: clients would read it as an IP address"
    try:
        name = normalise_host(host)
    except ValueError as exc:
        return str(exc)
    if name in reserved:
        return f"{host!r} is the model API's host ({name}): the runs reach it through the proxy"
    look_alike = mixed_scripts(name)
    if look_alike is not None:
        # The other spelling: what punycode reads as, or what the Unicode name is sent as.
        other = _unicode(name) if host.isascii() else name
        return f"{host!r} ({other}): {look_alike}"
    return _host_refusal(name)


class DestinationPolicy:
    """The allowlist of one world: its declared hosts, plus the pass-through destinations.

    Args:
        hosts: The declared host names (answered by the fakes).
        pass_through: Destinations tunnelled untouched, the model API: ``api.anthropic.com``
            (ports 80 and 443) or ``host:port`` / ``[v6]:port`` / ``127.0.0.1:PORT`` for exactly
            that port. IP literals are accepted here because the runner names them, not the
            agent.

    Raises:
        ValueError: a declared host or pass-through entry that is not valid.
    """

    def __init__(self, hosts: Iterable[str], *, pass_through: Iterable[str] = ()) -> None:
        self.hosts: frozenset[str] = frozenset(normalise_host(host) for host in hosts)
        entries = []
        for entry in pass_through:
            try:
                host, port = _split_authority(entry)
                entries.append((_canonical(host), port))
            except _Refusal as exc:
                raise ValueError(f"pass-through destination {entry!r}: {exc.reason}") from None
        self.pass_through: tuple[tuple[str, int | None], ...] = tuple(entries)

    def check(self, url_or_authority: str, *, scheme: str | None = None) -> Decision:
        """Whether a destination may be reached.

        Args:
            url_or_authority: A URL (``https://host/path``), an authority (``host:443``, a
                CONNECT target) or a bare host.
            scheme: The scheme when ``url_or_authority`` has none (``https`` for CONNECT).

        Returns:
            The decision, with the reason and the normalised host.
        """
        seen: dict[str, str | None] = {"scheme": scheme.lower() if scheme else None}
        try:
            return self._check(url_or_authority, seen)
        except _Refusal as refusal:
            return Decision(
                False,
                refusal.reason,
                refusal.host or url_or_authority,
                refusal.port,
                seen["scheme"],
            )

    def _check(self, text: str, seen: dict[str, str | None]) -> Decision:
        scheme = seen["scheme"]
        if not text:
            raise _Refusal("empty destination")
        if not text.isprintable() or any(ch.isspace() for ch in text):
            raise _Refusal("spaces or control characters in the destination")
        authority = text
        if _unbracketed_ipv6(text) is None and (match := _SCHEME.match(text)):
            rest = match.group(2)
            if rest.startswith("//"):
                scheme = seen["scheme"] = match.group(1).lower()
                authority = re.split(r"[/?#]", rest[2:], maxsplit=1)[0]
            elif rest and not rest.isdigit() and "." not in match.group(1):
                # not host:port but file:/etc/passwd, mailto:x, data:..., javascript:...
                seen["scheme"] = match.group(1).lower()
                raise _Refusal(
                    f"scheme {match.group(1).lower()}: is not allowed (only http, https)"
                )
        if scheme is not None and scheme not in ALLOWED_SCHEMES:
            raise _Refusal(f"scheme {scheme}: is not allowed (only http, https)", authority)
        if "\\" in authority:
            raise _Refusal(
                "backslash in the authority (clients disagree on where the host ends)", authority
            )
        if "@" in authority:
            host_after = authority.rsplit("@", 1)[1]
            raise _Refusal(
                f"userinfo in the URL: the host is {host_after!r}, not what precedes the @",
                host_after,
            )
        host, port = _split_authority(authority)
        if port is None and scheme is not None:
            port = DEFAULT_PORTS[scheme]
        canonical = _canonical(host)
        for pass_host, pass_port in self.pass_through:
            if canonical == pass_host and (
                port == pass_port or (pass_port is None and port in (None, *ALLOWED_PORTS))
            ):
                return Decision(True, "pass-through", canonical, port, scheme, pass_through=True)
        address = _address_of(host, port)
        if address is not None:
            written = "" if str(address) == host.strip("[]") else f" (written {host})"
            raise _Refusal(describe_address(address) + written, str(address), port)
        if port is not None and port not in ALLOWED_PORTS:
            raise _Refusal(f"port {port} is not allowed (only 80 and 443)", canonical, port)
        refusal = _host_refusal(canonical)
        if refusal:
            raise _Refusal(refusal, canonical, port)
        if canonical in self.hosts:
            return Decision(True, "declared host", canonical, port, scheme)
        raise _Refusal(self._why_not_declared(canonical), canonical, port)

    def _why_not_declared(self, name: str) -> str:
        for declared in sorted(self.hosts):
            if name.startswith(declared + "."):
                return f"suffix look-alike: {declared} followed by more labels is another host"
            if name.endswith("." + declared):
                return f"subdomain of {declared} is not declared (no suffix matching)"
        if "xn--" in name:
            unicode_name = _unicode(name)
            skeleton = unicodedata.normalize("NFKC", unicode_name).translate(_CONFUSABLES)
            if skeleton in self.hosts:
                return f"IDN homograph of {skeleton}: {unicode_name} is {name}"
            return f"internationalised name {unicode_name} ({name}) is not a declared host"
        for declared in sorted(self.hosts):
            if declared in name:
                return f"look-alike of {declared} is not a declared host"
        return "not a declared host"


def _unicode(name: str) -> str:
    try:
        return name.encode("ascii").decode("idna")
    except UnicodeError:
        return name


def _unbracketed_ipv6(text: str) -> ipaddress.IPv6Address | None:
    """An IPv6 address written without brackets (``fd00:ec2::254``), which looks like a URL."""
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    return address if isinstance(address, ipaddress.IPv6Address) else None


def _split_authority(authority: str) -> tuple[str, int | None]:
    """``host:port`` -> (host, port); ``[v6]:port`` keeps the brackets on the host."""
    bare_v6 = _unbracketed_ipv6(authority)
    if bare_v6 is not None:
        return f"[{authority}]", None
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            raise _Refusal("unclosed [ in an IPv6 address", authority)
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest and not rest.startswith(":"):
            raise _Refusal(f"unexpected text after the IPv6 address: {rest!r}", host)
        port_text = rest[1:] if rest else ""
    elif ":" in authority:
        host, port_text = authority.rsplit(":", 1)
        if ":" in host:
            raise _Refusal(f"not a valid authority: {authority!r}", authority)
    else:
        host, port_text = authority, ""
    if not host:
        raise _Refusal("no host", authority)
    if port_text == "":
        return host, None
    if not port_text.isascii() or not port_text.isdigit() or int(port_text) > 65535:
        raise _Refusal(f"invalid port {port_text!r}", host)
    return host, int(port_text)


def _address_of(
    host: str, port: int | None = None
) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address a host (brackets kept for IPv6) spells, if it is an IP literal.

    Raises:
        _Refusal: an IPv6 literal that does not parse, or a host ending in a number that is no
            valid IPv4 address (clients would still try to read it as one).
    """
    if host.startswith("["):
        inner = host[1:-1]
        try:
            return ipaddress.IPv6Address(inner.split("%", 1)[0])
        except ValueError:
            raise _Refusal(f"not a valid IPv6 address: {host}", host, port) from None
    address = _ip_literal(host)
    if address is not None:
        return address
    last = host.rstrip(".").rsplit(".", 1)[-1] if host.rstrip(".") else ""
    if _NUMERIC_LABEL.match(last):
        raise _Refusal(f"{host!r} ends in a number but is no valid IP address", host, port)
    return None


def _canonical(host: str) -> str:
    """A host for comparing: an IP address in its canonical form, a name normalised."""
    if host.startswith("["):
        try:
            return str(ipaddress.IPv6Address(host[1:-1].split("%", 1)[0]))
        except ValueError:
            raise _Refusal(f"not a valid IPv6 address: {host}", host) from None
    address = _ip_literal(host)
    if address is not None:
        return str(address)
    if "%" in host:
        raise _Refusal(f"percent-encoding in the host {host!r}", host)
    try:
        return normalise_host(host)
    except ValueError as exc:
        raise _Refusal(str(exc), host) from None
