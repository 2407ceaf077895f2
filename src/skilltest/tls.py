"""One TLS context for every HTTPS client of a command.

Loading the system's certificate authorities takes about 60 ms of CPU; a command opens a client
for each run (a recording or credential proxy, a judge's SDK client), and each would load them
again. The context is made once, as the ``anthropic`` SDK's HTTP library makes its default one
(``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` honoured), and shared: an ``ssl.SSLContext`` serves any
number of client connections.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def client_context() -> ssl.SSLContext:
    """The shared context that verifies servers against the system's certificate authorities."""
    import httpcore2

    return httpcore2.default_ssl_context()
