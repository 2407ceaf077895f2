"""Installing Codex into a cache folder with npm, and the errors that name the version."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from skilltest.agents.codex import CODEX_PACKAGE_SPEC, find_codex, install_codex
from skilltest.errors import ConfigurationError


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def fake_npm(folder: Path, prints_version: str) -> str:
    # Writes node_modules/.bin/codex into --prefix, as npm does, and logs its arguments.
    return script(
        folder / "npm",
        f'echo "$@" > "{folder}/npm-args"\n'
        'mkdir -p "$3/node_modules/.bin"\n'
        f"printf '#!/bin/sh\\necho codex-cli {prints_version}\\n' > \"$3/node_modules/.bin/codex\"\n"
        'chmod +x "$3/node_modules/.bin/codex"\n',
    )


def test_it_installs_the_pinned_package_into_the_cache_and_finds_the_binary(tmp_path):
    npm = fake_npm(tmp_path, "0.171.0")
    cache = tmp_path / "cache"
    binary = install_codex(cache, npm=npm)
    assert binary == cache / "node_modules" / ".bin" / "codex"
    assert find_codex(cache) == binary
    args = (tmp_path / "npm-args").read_text().split()
    assert args[:3] == ["install", "--prefix", str(cache)]
    assert args[-1] == "@openai/codex@0.171.0" == CODEX_PACKAGE_SPEC


def test_an_install_already_there_is_not_installed_again(tmp_path):
    cache = tmp_path / "cache"
    install_codex(cache, npm=fake_npm(tmp_path, "0.171.0"))
    (tmp_path / "npm-args").unlink()
    assert install_codex(cache, npm=fake_npm(tmp_path, "0.171.0")) == find_codex(cache)
    assert not (tmp_path / "npm-args").exists()


def test_npm_failing_names_the_version_and_shows_what_npm_printed(tmp_path):
    npm = script(tmp_path / "npm", "echo 'npm error 404 No matching version found' >&2\nexit 1\n")
    with pytest.raises(ConfigurationError) as raised:
        install_codex(tmp_path / "cache", npm=npm)
    assert str(raised.value) == (
        "npm could not install Codex 0.171.0 (@openai/codex@0.171.0, exit 1); npm printed:\n"
        "    npm error 404 No matching version found\n"
        "  fix: check that the registry has @openai/codex@0.171.0 (npm view "
        "@openai/codex@0.171.0 version) and that this machine reaches it"
    )
    assert find_codex(tmp_path / "cache") is None


def test_a_binary_reporting_another_version_is_refused(tmp_path):
    with pytest.raises(ConfigurationError) as raised:
        install_codex(tmp_path / "cache", npm=fake_npm(tmp_path, "0.170.2"))
    assert "its codex reports version 0.170.2" in str(raised.value)
