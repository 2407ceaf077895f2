"""Rescoring kept transcripts against running them: wall and CPU time of each.

Runs the example lgtm scenario suite once on the emulator (the real claude CLI), keeping its
output, then rescores that output with ``--rescore`` and prints both figures. The rescore starts
no process; its time is the toolkit's own (imports, parsing, scoring, statistics).

    python scripts/bench_rescore.py [-k 3]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of the children (user + system) and the exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    code = subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, check=False).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-k", default="3")
    args = parser.parse_args()
    skilltest = [sys.executable, "-m", "skilltest", "scenarios", "tests/scenarios/lgtm.yaml"]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        run = timed([*skilltest, "--backend", "emulator", "-k", args.k, "--output-dir", str(out)])
        rescore = timed([*skilltest, "-k", args.k, "--rescore", str(out)])
    for name, (wall, cpu, code) in (("emulator run", run), ("rescore", rescore)):
        print(f"{name:<13} wall {wall:6.2f} s  cpu {cpu:6.2f} s  exit {code}")


if __name__ == "__main__":
    main()
