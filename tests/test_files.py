"""Reading a file a person gives: regular files only, bounded in size, UTF-8, JSON bounded in
depth; each refusal names the file and the fix, and none of them reads from a FIFO or a device.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import InputError, SuiteError
from skilltest.files import decode, nesting, parse_json, read_bytes, read_json


def refusal(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError) as caught:
        call()
    return str(caught.value)


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    done = threading.Event()
    messages: list[str] = []

    def read() -> None:
        messages.append(refusal(lambda: read_bytes(fifo, limit=10)))
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(5), "reading a FIFO blocked"
    assert messages == [
        f"{fifo}: cannot read the file: it is a named pipe (FIFO), not a regular file\n"
        "  fix: pass a regular file"
    ]


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_a_device_is_refused(device):
    message = refusal(lambda: read_bytes(Path(device), limit=10, what="the cassette"))
    assert message.startswith(f"{device}: cannot read the cassette: it is a character device")


def test_a_file_over_its_bound_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * (3 * 2**20))
    message = refusal(
        lambda: read_bytes(
            path, limit=2**20, error=SuiteError, too_large="a suite may be", large_fix="split it"
        )
    )
    assert (
        message
        == f"{path}: the file is 3.0 MiB, more than the 1 MiB a suite may be\n  fix: split it"
    )


def test_missing_and_undecodable_files_name_their_place(tmp_path):
    assert refusal(lambda: read_bytes(tmp_path / "nope", limit=1, missing_fix="look")) == (
        f"{tmp_path / 'nope'}: file not found\n  fix: look"
    )
    raw = b"ok\nbad \xff here\n"
    assert refusal(lambda: decode(raw, Path("f.yaml"), column=True)).startswith(
        "f.yaml:2:5: not UTF-8: byte 0xff cannot be decoded"
    )
    assert decode(b"\xef\xbb\xbf{}", Path("p.json"), bom=True) == "{}"


def test_json_nested_too_deep_is_refused_whichever_way_it_is_deep(tmp_path):
    shallow = "[" * 5 + "]" * 5
    assert parse_json(shallow, Path("a.json"), depth=5) == [[[[[]]]]]
    assert refusal(lambda: parse_json("[" * 6 + "]" * 6, Path("a.json"), depth=5)) == (
        "a.json: the file is nested deeper than 5 levels\n"
        "  fix: give a file skilltest wrote; none nests that deep"
    )
    # Deeper than Python's own recursion limit: refused the same way, no traceback.
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested deeper than 200 levels" in refusal(lambda: read_json(path, limit=2**20))
    assert nesting({"a": [1, {"b": []}]}, 10) == 4


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "/dev/zero"],
        ["report", "/dev/zero"],
        ["gate", "/dev/zero"],
        ["show", "/dev/zero"],
        ["compare", "/dev/zero", "/dev/zero"],
    ],
)
def test_commands_refuse_a_device_at_once(argv, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    err += out
    assert "/dev/zero: cannot read" in err and "not a regular file" in err
    assert "Traceback" not in err
