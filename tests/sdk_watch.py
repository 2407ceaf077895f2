"""``skilltest`` in a process of its own that watches the first import of the ``anthropic`` SDK:
which thread made it, whether that thread was running an event loop, and (to stand for a machine
so loaded that the import takes minutes) a delay added to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

WATCH = """
import asyncio, importlib.machinery, json, os, sys, threading, time

class Delayed:
    # The delay is in the module's execution, under its own lock only: a finder runs under
    # the global import lock, and a delay there would hold every import of every thread.
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        try:
            asyncio.get_running_loop()
            on_loop = True
        except RuntimeError:
            on_loop = False
        record = {"thread": threading.current_thread().name, "on_loop": on_loop}
        with open(os.environ["SDK_WATCH_FILE"], "w") as handle:
            json.dump(record, handle)
        time.sleep(float(os.environ.get("SDK_IMPORT_DELAY_S", "0")))
        self.loader.exec_module(module)

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name != "anthropic":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = Delayed(spec.loader)
        return spec

sys.meta_path.insert(0, Watch())
from skilltest.cli import main
sys.exit(main(sys.argv[1:]))
"""


def watched(
    args: list[str], watch_file: Path, *, delay_s: float = 0.0, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Starts ``skilltest ARGS`` with the watch; the record goes to ``watch_file``."""
    environment = {
        **(env if env is not None else os.environ),
        "SDK_WATCH_FILE": str(watch_file),
        "SDK_IMPORT_DELAY_S": str(delay_s),
        "PYTHONUNBUFFERED": "1",
    }
    return subprocess.Popen(
        [sys.executable, "-c", WATCH, *args],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def import_record(watch_file: Path) -> dict[str, Any] | None:
    """Where the SDK was imported, once it was (``None`` before)."""
    try:
        loaded: dict[str, Any] = json.loads(watch_file.read_text())
    except (FileNotFoundError, ValueError):
        return None
    return loaded
