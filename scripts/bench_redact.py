"""How long the redactor takes over a 5 MB transcript holding pieces of a key, and over one
whose separators are everywhere (a key folded, zero-width-space-joined, near-misses), and how
long a run's redactor takes to set up.

    .venv/bin/python scripts/bench_redact.py
"""

from __future__ import annotations

import random
import string
import time

from skilltest.redact import Redactor

KEY = "sk-ant-api03-" + "".join(
    random.Random(1).choices(string.ascii_letters + string.digits, k=40)
)


def _time(redact: Redactor, text: str) -> float:
    started = time.perf_counter()
    redact(text)
    return time.perf_counter() - started


def main() -> None:
    rng = random.Random(7)
    redact = Redactor({"ANTHROPIC_API_KEY": KEY, "CLAUDE_CODE_OAUTH_TOKEN": KEY[::-1]})
    alphabet = string.ascii_letters + string.digits + ' {}":,-_'
    filler = "".join(rng.choice(alphabet) for _ in range(1_000_000)) * 5
    text = filler[:2_500_000] + KEY[13:] + filler[2_500_000:] + KEY[30:50]
    print(f"5 MB of JSON-like text, two pieces of a key: {_time(redact, text):.2f} s")
    near = "\n".join(KEY[:-1]) + "\n#" + "\u200b" * 11 + ": "
    split = near * (5_000_000 // len(near))
    print(f"5 MB of near-misses of a split key: {_time(redact, split):.2f} s")
    # Every run has secrets of its own (its placeholder key, its world's tokens): a redactor is
    # set up for each.
    started = time.perf_counter()
    for index in range(100):
        Redactor({"ANTHROPIC_API_KEY": f"sk-skilltest-placeholder-{index:032x}", "TOKEN": KEY})
    setup_ms = (time.perf_counter() - started) * 10
    print(f"a redactor for a run's two secrets: {setup_ms:.2f} ms to set up")


if __name__ == "__main__":
    main()
