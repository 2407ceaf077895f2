"""Benchmark of the emulator's three APIs side by side: prints figures, asserts nothing.

One emulator answers the same two-turn conversation (a scripted Bash call, then the answer to
its output) as a Messages, a Responses and a Chat Completions request, streamed, with the
request bodies Claude Code, Codex and OpenCode really sent (``tests/fixtures/``). Rounds
interleave the three APIs (one request each, in turn), so load on the machine falls on all
alike; each figure is the median over the rounds of one request's wall time, in milliseconds,
with its ratio to the Messages API's. A second table times reading those requests into the
emulator's request view alone (no HTTP).

    .venv/bin/python scripts/bench_apis.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import httpx2

from skilltest.emulator import EmulatorServer, ModelScript, RequestView

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "tests" / "fixtures" / "agents"
CLAUDE_REQUEST = ROOT / "tests" / "emulator" / "requests"


def _last_request(agent: str) -> dict:
    lines = (AGENTS / agent / "requests.jsonl").read_text().splitlines()
    return json.loads(lines[-1])["body"]


def _claude_body() -> dict:
    """The largest Messages request Claude Code sent among the emulator's golden requests."""
    files = sorted(CLAUDE_REQUEST.glob("*.json"), key=lambda p: p.stat().st_size)
    return json.loads(files[-1].read_text()) if files else {"model": "m", "messages": []}


def main() -> None:
    """Prints the two tables."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    bodies = {
        "anthropic": ("/v1/messages", _claude_body()),
        "responses": ("/v1/responses", _last_request("codex")),
        "chat": ("/v1/chat/completions", _last_request("opencode")),
    }
    for _, body in bodies.values():
        body["stream"] = True
    script = ModelScript.load(AGENTS / "model.yaml")
    times: dict[str, list[float]] = {api: [] for api in bodies}
    views: dict[str, list[float]] = {api: [] for api in bodies}
    with EmulatorServer(script) as server, httpx2.Client(base_url=server.base_url) as client:
        for _ in range(args.rounds):
            for api, (path, body) in bodies.items():
                started = time.perf_counter()
                with client.stream("POST", path, json=body) as answer:
                    for _ in answer.iter_raw():
                        pass
                times[api].append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                RequestView.from_body(body, api=api)  # type: ignore[arg-type]
                views[api].append((time.perf_counter() - started) * 1000)
    sizes = {api: len(json.dumps(body)) for api, (_, body) in bodies.items()}
    print(f"emulator, streamed answer, median of {args.rounds} interleaved rounds")
    print(f"{'api':<10} {'request kB':>10} {'ms':>8} {'x messages':>11}")
    base = statistics.median(times["anthropic"])
    for api, measured in times.items():
        median = statistics.median(measured)
        print(f"{api:<10} {sizes[api] / 1000:>10.1f} {median:>8.2f} {median / base:>11.2f}")
    print("\nrequest view alone (no HTTP)")
    print(f"{'api':<10} {'ms':>8} {'x messages':>11}")
    base = statistics.median(views["anthropic"])
    for api, measured in views.items():
        median = statistics.median(measured)
        print(f"{api:<10} {median:>8.3f} {median / base:>11.2f}")


if __name__ == "__main__":
    main()
