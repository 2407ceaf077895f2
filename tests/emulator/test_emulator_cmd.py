"""``skilltest emulator serve``: what a person sees on the terminal."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from skilltest.cli import main

SCRIPTS = Path(__file__).parent / "scripts"


@pytest.mark.parametrize(
    ("stop", "exit_code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
)
def test_serve_prints_the_url_answers_and_stops_on_a_signal_with_its_exit_code(
    stop: signal.Signals, exit_code: int
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "skilltest", "emulator", "serve", "--script",
         str(SCRIPTS / "bash_echo.yaml"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        prefix = "emulator listening on http://127.0.0.1:"
        assert first.startswith(prefix)
        assert first.endswith(" (scripted stand-in model, not a real model)")
        base_url = first.split(" ")[3]
        request = urllib.request.Request(
            f"{base_url}/v1/messages",
            data=json.dumps(
                {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
            ).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            assert json.load(response)["content"][0]["text"] == "No rule matched."
    finally:
        process.send_signal(stop)
        _out, err = process.communicate(timeout=60)
    # A server stopped by a signal says so in its exit code, as every command stopped does.
    assert process.returncode == exit_code
    assert "POST /v1/messages  200  rule=(default)" in err
    assert err.rstrip().endswith("emulator stopped")


def test_bad_script_exits_2_with_file_pointer_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "model.yaml"
    path.write_text("schema_version: 1\nrules:\n  - id: r\n    reply: {txt: hi}\n")

    assert main(["emulator", "serve", "--script", str(path)]) == 2

    assert capsys.readouterr().err == (
        f"skilltest: error: {path}#/rules/0/reply/txt: unknown key 'txt'\n"
        "  fix: did you mean 'text'? allowed keys here: stop_reason, text, thinking, tool_calls\n"
    )


def test_a_port_in_use_is_bad_input_with_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(
            ["emulator", "serve", "--script", str(SCRIPTS / "bash_echo.yaml"), "--port", str(port)]
        )
    err = capsys.readouterr().err
    assert code == 2
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in err
    assert "--port 0 to let the system choose one" in err


def test_a_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["emulator", "serve", "--script", str(SCRIPTS / "bash_echo.yaml"), "--port", "99999"]
    )
    assert code == 2
    assert "99999 is not a port number (0 to 65535)" in capsys.readouterr().err
