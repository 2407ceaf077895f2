"""Record and replay: suites run offline from what the model (and each MCP server) answered once.

``normalise``
    what identifies a request (the request as the model sees it, volatile parts replaced) and its
    fingerprint; the built-in rules and a suite's own ``replay:`` rules.
``cassette``
    the YAML file of one scenario and arm: every repetition's exchanges, never a secret.
``match``
    which recorded exchange answers a request, and the miss that explains itself when none does.

The modules that touch the network or processes (the recording and replaying proxy, the MCP
relay, the runners) build on these; nothing here is imported until replay is asked for.
"""
