"""The run's certificate authority: a fresh CA per world instance, leaf certificates on demand.

The proxy answers HTTPS for a declared host (``api.tickets.example.com``) itself, so the client
must trust a certificate for that name. Each run makes its own CA (an EC P-256 key that never
leaves memory and is never reused), writes only the CA *certificate* to its folder, and signs a
short-lived leaf for each host the proxy terminates. Clients are told to trust it through
``NODE_EXTRA_CA_CERTS`` (added to Node's roots) and ``SSL_CERT_FILE``, ``CURL_CA_BUNDLE`` and
``REQUESTS_CA_BUNDLE`` (which *replace* the roots of OpenSSL-based clients, hence
:attr:`CertificateAuthority.bundle_file`: the CA followed by the system's roots, so every other
certificate still verifies as before).

A run's CA is worthless after the run: it signs nothing but the world's own hostnames, its key
is gone when the process ends, and its certificates expire within a day.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import re
import ssl
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography import x509

CA_FILE_NAME = "world-ca.pem"
"""The CA certificate alone, for ``NODE_EXTRA_CA_CERTS`` (Node adds it to its roots)."""
BUNDLE_FILE_NAME = "world-ca-bundle.pem"
"""The CA followed by the system's roots, for variables that replace the roots."""

VALIDITY = datetime.timedelta(days=1)
"""How long certificates are valid; a run never takes that long."""
CLOCK_SKEW = datetime.timedelta(hours=1)
"""Certificates are valid from this long before now, so a client whose clock is a little
behind still accepts them."""


def system_roots() -> Path | None:
    """The system's CA bundle (what OpenSSL-based clients trust by default), if there is one."""
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.cafile, paths.openssl_cafile):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    """What a certificate's key may sign: digital signatures, and a CA's certificates and CRLs."""
    from cryptography import x509

    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=ca,
        crl_sign=ca,
        encipher_only=False,
        decipher_only=False,
    )


class CertificateAuthority:
    """A fresh CA per run (never reused), written to a folder; leaf certificates on demand.

    Args:
        folder: Where the CA certificate, the bundle and the leaves go (created if missing).
            Leaf keys are written there too (``ssl`` loads keys only from files), readable by
            the owner only.
    """

    def __init__(self, folder: Path) -> None:
        # cryptography is imported when a world starts, not whenever this module is imported
        # (every command that can run scenarios imports it).
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        self.folder = folder
        """The folder holding the files below."""
        folder.mkdir(parents=True, exist_ok=True)
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "skilltest world"),
                x509.NameAttribute(NameOID.COMMON_NAME, f"skilltest world CA {os.getpid()}"),
            ]
        )
        public = self._key.public_key()
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - CLOCK_SKEW)
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_key_usage(ca=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        pem = self._cert.public_bytes(serialization.Encoding.PEM)
        self.ca_file: Path = folder / CA_FILE_NAME
        """The CA certificate (PEM), for ``NODE_EXTRA_CA_CERTS``."""
        self.ca_file.write_bytes(pem)
        self.bundle_file: Path = folder / BUNDLE_FILE_NAME
        """The CA and then the system's roots (PEM), for ``SSL_CERT_FILE``, ``CURL_CA_BUNDLE``
        and ``REQUESTS_CA_BUNDLE``, which replace a client's roots rather than add to them."""
        roots = system_roots()
        self.bundle_file.write_bytes(pem + (b"\n" + roots.read_bytes() if roots else b""))
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    @property
    def certificate(self) -> x509.Certificate:
        """The CA certificate."""
        return self._cert

    def server_context(self, host: str) -> ssl.SSLContext:
        """A server-side TLS context presenting a leaf certificate for ``host``, made once.

        Args:
            host: A host name (ASCII, IDN in punycode) or an IP address.

        Returns:
            A context offering TLS 1.2 and 1.3 and only HTTP/1.1 by ALPN.
        """
        host = host.lower().rstrip(".")
        with self._lock:
            context = self._contexts.get(host)
            if context is None:
                context = self._make_context(host)
                self._contexts[host] = context
            return context

    def _make_context(self, host: str) -> ssl.SSLContext:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        alt_name: x509.GeneralName
        try:
            alt_name = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            alt_name = x509.DNSName(host)
        ca_public = self._key.public_key()
        leaf = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(self._cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - CLOCK_SKEW)
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.SubjectAlternativeName([alt_name]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_key_usage(ca=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_public), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        leaves = self.folder / "leaves"
        leaves.mkdir(exist_ok=True)
        # One file per host, named after it; anything but a host name's characters is replaced,
        # so no name can point outside the folder.
        path = leaves / (re.sub(r"[^a-z0-9.:-]", "_", host).lstrip(".") + ".pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(
                key.private_bytes(
                    serialization.Encoding.PEM,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                )
            )
            # The leaf alone: clients hold the CA, and a chain that carries its own root is
            # what "self-signed certificate in certificate chain" complains about.
            out.write(leaf.public_bytes(serialization.Encoding.PEM))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_cert_chain(path)
        context.set_alpn_protocols(["http/1.1"])
        return context
