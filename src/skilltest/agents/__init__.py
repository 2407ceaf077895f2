"""Agents skilltest drives: each installs, isolates, runs and reads one agent CLI."""
