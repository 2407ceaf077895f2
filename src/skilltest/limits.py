"""Upper bounds on what a suite or a command line may ask for, so that bad input fails fast.

Each bound is documented in the README and enforced where the value enters: the JSON Schemas,
the command-line options and ``skilltest validate``.
"""

from __future__ import annotations

MAX_REPETITIONS = 1000
"""The most runs per arm a scenario may ask for (``repetitions:``, ``-k``, ``--max-k``)."""
