"""How long the redactor takes over a 5 MB transcript holding pieces of a key, and over one
whose separators are everywhere (a key folded, zero-width-space-joined, near-misses), how
long a run's redactor takes to set up, and what keeping the process's known secrets out of the
terminal costs a command's output (interleaved pairs, medians, the ratio).

    .venv/bin/python scripts/bench_redact.py
"""

from __future__ import annotations

import io
import os
import random
import statistics
import string
import time

from skilltest.redact import Redactor, declarations_kept_apart, declare_secrets

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
    _terminal(rng)


def _terminal(rng: random.Random, rounds: int = 9) -> None:
    """A command's output (20,000 table lines, written one at a time as `print` writes them)
    through the command line's stream: with no secret known, and with a credential and two
    declared secrets known, in interleaved pairs."""
    from skilltest.cli.terminal import SafeStream

    words = ["demo/notes", "with-skill", "pass", "0.83", "[0.61, 0.95]", "count_over_time"]
    lines = [" ".join(rng.choice(words) for _ in range(12)) + "\n" for _ in range(20_000)]

    def write() -> float:
        stream = SafeStream(io.StringIO())
        started = time.perf_counter()
        for line in lines:
            stream.write(line)
        return time.perf_counter() - started

    saved = os.environ.pop("ANTHROPIC_API_KEY", None)
    bare: list[float] = []
    known: list[float] = []
    try:
        for _ in range(rounds):
            bare.append(write())
            with declarations_kept_apart():
                os.environ["ANTHROPIC_API_KEY"] = KEY
                declare_secrets(["acme-customer-7731", "svc-token-0f9e8d7c6b5a"])
                known.append(write())
                del os.environ["ANTHROPIC_API_KEY"]
    finally:
        if saved is not None:
            os.environ["ANTHROPIC_API_KEY"] = saved
    none_ms, some_ms = statistics.median(bare) * 1000, statistics.median(known) * 1000
    print(
        f"20,000 lines to the terminal, median of {rounds} interleaved pairs: "
        f"{none_ms:.0f} ms with no secret known, {some_ms:.0f} ms with a credential and two "
        f"declared secrets ({some_ms / none_ms:.1f}x, {some_ms / len(lines) * 1000:.0f} us a line)"
    )


if __name__ == "__main__":
    main()
