"""Driving the real Claude Code CLI: finding the pinned binary, isolating a run, running it.

``binary``     where ``claude`` is and which version it is
``isolation``  fresh home and working directory, flags, environment allowlist, redaction
``process``    one ``claude -p`` process per conversation, follow-up turns, timeouts
"""
