"""Tests of the trigger layer (the suites themselves live in tests/triggers/)."""
