"""A run that cannot start cleans up after itself and says why in one line: a named pipe in the
workspace, a skill folder with a socket, a full temp folder. Exit 2, the file at fault, the fix,
and no ``skilltest-run-*`` folder left behind."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from skilltest.cli import main

SUITE = """\
skill: demo
repetitions: 1
scenarios:
  - id: s
    prompt: echo
    workspace: repo
    expected: {required_patterns: [lgtm]}
"""


def project(root: Path) -> Path:
    skill = root / "skills" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: Use for demos.\n---\nbody\n")
    (root / "repo").mkdir()
    (root / "repo" / "README.md").write_text("hello\n")
    (root / "demo.yaml").write_text(SUITE)
    return root / "demo.yaml"


def run(suite: Path, fake_claude: Path, capsys) -> tuple[int, str]:
    code = main(
        [
            "scenarios",
            str(suite),
            "--backend",
            "claude",
            "--claude",
            str(fake_claude),
            "--skill-only",
        ]
    )
    return code, capsys.readouterr().err


@pytest.fixture
def temp(tmp_path, monkeypatch) -> Path:
    """The temp folder the run sandboxes go to."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-only-not-a-key")  # the fake CLI answers
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    return folder


def test_a_named_pipe_in_the_workspace(tmp_path, temp, fake_claude, capsys):
    suite = project(tmp_path)
    os.mkfifo(tmp_path / "repo" / "pipe")
    code, err = run(suite, fake_claude, capsys)
    assert code == 2, err
    assert (
        f"skilltest: error: {tmp_path / 'repo' / 'pipe'}: cannot prepare the workspace of a run"
        in err
    )
    assert "is a named pipe" in err
    assert "fix: a skill, plugin or workspace folder may hold only regular files" in err
    assert "Traceback" not in err and "[(" not in err  # one problem, not a raw list
    assert list(temp.iterdir()) == []


def test_a_socket_in_the_skill_folder(tmp_path, temp, fake_claude, capsys):
    suite = project(tmp_path)
    where = tmp_path / "skills" / "demo" / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(where))
    try:
        code, err = run(suite, fake_claude, capsys)
    finally:
        server.close()
    assert code == 2, err
    assert f"skilltest: error: {where}: cannot prepare the skill of a run" in err
    assert "Traceback" not in err
    assert list(temp.iterdir()) == []


def test_a_full_temp_folder(tmp_path, temp, fake_claude, capsys, monkeypatch):
    suite = project(tmp_path)
    import errno
    import shutil

    copy = shutil.copytree

    def full(src, dst, **kwargs):  # the disk fills up while the workspace is copied
        if Path(src) == tmp_path / "repo":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return copy(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copytree", full)
    code, err = run(suite, fake_claude, capsys)
    assert code == 2, err
    assert "cannot prepare the workspace of a run: No space left on device" in err
    assert "fix: free space in the temp folder (TMPDIR)" in err
    assert "Traceback" not in err
    assert list(temp.iterdir()) == []
