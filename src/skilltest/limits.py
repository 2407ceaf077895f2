"""Upper bounds on what a suite or a command line may ask for, so that bad input fails fast.

Each bound is documented in the README and enforced where the value enters: the JSON Schemas,
the command-line options and ``skilltest validate``.
"""

from __future__ import annotations

MAX_REPETITIONS = 1000
"""The most runs per arm a scenario may ask for (``repetitions:``, ``-k``, ``--max-k``)."""

MAX_YAML_BYTES = 2 * 1024 * 1024
"""The largest suite, model script or other YAML file read (2 MiB), refused before parsing."""

MAX_YAML_DEPTH = 64
"""The deepest nesting of mappings and lists in a YAML file (an alias counts as the depth of
what it repeats); suites need fewer than ten levels."""

MAX_YAML_ALIAS_NODES = 10_000
"""The most values aliases (``*name``) may repeat in one YAML file, counted expanded, so that a
few hundred bytes of nested aliases (a "billion laughs") cannot expand to billions."""

MAX_RESULTS_BYTES = 512 * 1024 * 1024
"""The largest results file, trace or cassette read (512 MiB), refused before reading: a file
skilltest wrote for thousands of runs stays well under it; ``/dev/zero`` is refused at once."""

MAX_JSON_DEPTH = 200
"""The deepest nesting of a JSON file read (results, traces, cassettes): what skilltest writes
nests a few levels, a tool input a few more; deeper is not a file of ours."""
