"""Local servers on loopback: the one lifecycle the emulator, the recording proxy and the world's
proxy share (:class:`LocalServer`), and the request-body reader of the HTTP ones.

``server``
    listeners bound to a free (or given) port, accept loops and one thread per connection, and
    a ``close`` that cuts every connection and never waits longer than a bounded grace.
``body``
    reading an HTTP request body, ``Content-Length`` or chunked.
"""

from skilltest.loopback.body import read_request_body
from skilltest.loopback.server import CLOSE_GRACE_S, LOOPBACK, Lifecycle, Listener, LocalServer

__all__ = [
    "CLOSE_GRACE_S",
    "LOOPBACK",
    "Lifecycle",
    "Listener",
    "LocalServer",
    "read_request_body",
]
