"""A stop signal ends ``skilltest pressure`` at once, even while the Anthropic SDK is still being
imported (seconds of CPU, minutes on a loaded machine): the import runs beside the event loop,
never on it."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from tests.bad_input.commands import HANG_S
from tests.projects import demo_script, demo_suite, write_demo_project
from tests.sdk_watch import import_record, watched

IMPORT_DELAY_S = 24 * 3600.0
"""How long the SDK's import takes here: a day, so only a stop that does not wait for the import
ends the command before the hang bound (:data:`HANG_S`)."""


def test_sigint_while_the_sdk_imports_stops_pressure_with_its_results(tmp_path: Path) -> None:
    suite = write_demo_project(tmp_path, demo_suite(), demo_script("count_over_time"))
    results = tmp_path / "r.json"
    watch = tmp_path / "watch.json"
    process = watched(
        ["pressure", str(suite), "--results", str(results)], watch, delay_s=IMPORT_DELAY_S
    )
    try:
        deadline = time.monotonic() + HANG_S
        # The results file is written before the first run, and the SDK is importing.
        while (import_record(watch) is None or not results.exists()) and process.poll() is None:
            assert time.monotonic() < deadline, "the run never got ready"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=HANG_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted;" in err
    record = import_record(watch)
    assert record is not None and record["on_loop"] is False, record
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"]) == (False, True)
    assert document["scenarios"] == []
