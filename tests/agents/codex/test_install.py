"""`skilltest setup --agent codex`: Codex installed with npm into skilltest's cache, where
``--agent codex`` finds it, and the errors that name the version (npm is a stand-in here that
lays out ``node_modules/.bin/codex`` as the real one does)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from skilltest.agents import agent
from skilltest.cli import main
from skilltest.errors import ConfigurationError

MKDIR, CHMOD = shutil.which("mkdir"), shutil.which("chmod")


def script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH of only a node and (once a test writes one) an npm; the cache in tmp_path."""
    folder = tmp_path / "tools"
    folder.mkdir()
    script(folder / "node", "echo v22.0.0\n")
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("SKILLTEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLTEST_CODEX", raising=False)
    return folder


def fake_npm(tools: Path, prints_version: str) -> None:
    # Writes node_modules/.bin/codex into --prefix, as npm does, and logs its arguments; the
    # PATH it runs with holds no mkdir or chmod.
    script(
        tools / "npm",
        f'echo "$@" > "{tools}/npm-args"\n'
        f'{MKDIR} -p "$3/node_modules/.bin"\n'
        f"printf '#!/bin/sh\\necho codex-cli {prints_version}\\n' > \"$3/node_modules/.bin/codex\"\n"
        f'{CHMOD} +x "$3/node_modules/.bin/codex"\n',
    )


def test_setup_installs_the_pinned_codex_where_agent_codex_finds_it(tools: Path, capsys):
    fake_npm(tools, "0.171.0")

    assert main(["setup", "--agent", "codex"]) == 0

    target = tools.parent / "cache" / "codex-0.171.0" / "node_modules" / ".bin" / "codex"
    assert capsys.readouterr().out == f"codex 0.171.0 installed at {target}\n"
    assert (tools / "npm-args").read_text().split()[-1] == "@openai/codex@0.171.0"
    found = agent("codex").find()
    assert (found.path, found.version, found.known) == (target.absolute(), "0.171.0", True)

    (tools / "npm-args").unlink()
    assert main(["setup", "--agent", "codex"]) == 0
    assert capsys.readouterr().out == f"codex 0.171.0 already installed at {target}\n"
    assert not (tools / "npm-args").exists()


def test_npm_failing_names_the_package_and_shows_what_npm_printed(tools: Path, capsys):
    script(tools / "npm", "echo 'npm error 404 No matching version found' >&2\nexit 1\n")

    assert main(["setup", "--agent", "codex"]) == 2

    err = capsys.readouterr().err
    assert "npm install @openai/codex@0.171.0 failed (exit 1); npm printed:\n" in err
    assert "    npm error 404 No matching version found\n" in err
    assert "rerun `skilltest setup --agent codex`" in err
    assert not (tools.parent / "cache" / "codex-0.171.0").exists()


def test_a_binary_reporting_another_version_is_refused_and_left_out(tools: Path, capsys):
    fake_npm(tools, "0.170.2")

    assert main(["setup", "--agent", "codex"]) == 2

    err = capsys.readouterr().err
    assert "npm installed @openai/codex@0.171.0, but its codex reports version 0.170.2" in err
    assert not (tools.parent / "cache" / "codex-0.171.0").exists()


def test_without_a_codex_the_run_is_told_how_to_install_one(tools: Path):
    with pytest.raises(ConfigurationError) as raised:
        agent("codex").find()

    assert str(raised.value) == (
        "no codex executable was found\n  fix: run `skilltest setup --agent codex` (installs "
        "@openai/codex@0.171.0 into skilltest's cache with npm), or set $SKILLTEST_CODEX to a "
        "codex executable"
    )
