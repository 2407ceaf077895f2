"""Whole-run traces: one versioned JSONL file per run, written beside its kept transcript.

A trace holds what a reviewer needs to tell a reasoning regression from fixture drift, an
authentication problem or a harness bug: the versions, the scenario, the fixture's checksum,
the prompts, every model response, tool call and HTTP call to a fake, the tokens, cost, latency
and retries, and the scorer's output. :mod:`skilltest.trace.record` builds and writes it,
:mod:`skilltest.trace.read` reads it back, :mod:`skilltest.trace.timeline` renders it for
``skilltest show``.
"""

SCHEMA_VERSION = 1
"""The layout of trace files; the first line of each carries it."""
