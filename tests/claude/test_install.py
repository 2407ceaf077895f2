"""`skilltest setup`: the pinned CLI installed with npm into skilltest's cache, where every
command then finds it. npm is a stand-in here that installs the fake claude as the real package
lays itself out (node_modules/.bin/claude, a relative link); tests/test_first_hour.py runs the
real npm."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from skilltest.claude.binary import cached_claude, claude_version, resolve_claude
from skilltest.cli import main

from ..conftest import REPO_ROOT

FAKE_CLAUDE = REPO_ROOT / "tests" / "fake_claude.py"

FAKE_NPM = """\
#!{python}
import os, sys
from pathlib import Path
args = sys.argv[1:]
if os.environ.get("FAKE_NPM_FAIL"):
    sys.stderr.write("npm error code E404\\nnpm error 404 Not Found - GET https://registry/x\\n")
    sys.exit(1)
requested = args[-1].rsplit("@", 1)[1]
if requested in os.environ.get("FAKE_NPM_MISSING", "").split(","):
    sys.stderr.write(f"npm error code ETARGET\\nnpm error notarget No matching version found for {{args[-1]}}.\\n")
    sys.exit(1)
Path(os.environ["FAKE_NPM_LOG"]).write_text(" ".join(args))
prefix = Path(args[args.index("--prefix") + 1])
package = prefix / "node_modules" / "@anthropic-ai" / "claude-code" / "bin"
package.mkdir(parents=True)
exe = package / "claude.exe"
version = os.environ.get("FAKE_NPM_VERSION", requested)
exe.write_text(f'#!/bin/sh\\nFAKE_CLAUDE_VERSION={{version}} exec "{python}" "{fake}" "$@"\\n')
exe.chmod(0o755)
(prefix / "node_modules" / ".bin").mkdir()
(prefix / "node_modules" / ".bin" / "claude").symlink_to("../@anthropic-ai/claude-code/bin/claude.exe")
"""


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only a fake npm and node; the cache and the log in tmp_path."""
    bin_dir = tmp_path / "tools"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM.format(python=sys.executable, fake=FAKE_CLAUDE))
    npm.chmod(0o755)
    node = bin_dir / "node"
    node.write_text("#!/bin/sh\necho v22.0.0\n")
    node.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("SKILLTEST_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_NPM_LOG", str(tmp_path / "npm.log"))
    monkeypatch.delenv("SKILLTEST_CLAUDE", raising=False)
    monkeypatch.chdir(tmp_path)
    claude_version.cache_clear()
    return tmp_path


def test_setup_installs_the_pinned_cli_where_every_command_finds_it(tools, capsys):
    with pytest.raises(Exception, match="no `claude` binary found"):
        resolve_claude(None)
    assert main(["setup"]) == 0
    captured = capsys.readouterr()
    where = tools / "cache" / "claude-code-2.1.328" / "node_modules" / ".bin" / "claude"
    assert captured.out == (
        f"claude 2.1.328 installed at {where}\n"
        "skilltest finds it there (--claude PATH and $SKILLTEST_CLAUDE still win)\n"
    )
    assert captured.err == (
        "installing @anthropic-ai/claude-code@2.1.328 with npm into "
        f"{tools / 'cache' / 'claude-code-2.1.328'} ...\n"
    )
    # npm installs into a folder of its own (never globally), from its cache when it can.
    log = (tools / "npm.log").read_text()
    assert log.startswith(f"install --prefix {tools / 'cache' / 'claude-code-2.1.328.partial-'}")
    assert log.endswith("--prefer-offline @anthropic-ai/claude-code@2.1.328")
    assert sorted(p.name for p in (tools / "cache").iterdir()) == ["claude-code-2.1.328"]
    assert resolve_claude(None) == cached_claude() == where

    assert main(["setup"]) == 0
    assert capsys.readouterr().out.startswith(f"claude 2.1.328 already installed at {where}\n")


def test_an_explicit_claude_still_wins_over_the_cache(tools, fake_claude, monkeypatch):
    assert main(["setup"]) == 0
    monkeypatch.setenv("SKILLTEST_CLAUDE", str(fake_claude))
    assert resolve_claude(None) == fake_claude
    assert resolve_claude(tools / "tools" / "npm") == tools / "tools" / "npm"


@pytest.mark.parametrize(
    ("missing", "tool"), [("npm", "npm"), ("node", "node")], ids=["no-npm", "no-node"]
)
def test_without_node_or_npm_setup_says_what_to_install(tools, capsys, missing, tool):
    (tools / "tools" / missing).unlink()
    assert main(["setup"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"skilltest: error: `{tool}` was not found on PATH: skilltest setup installs Claude Code "
        "(@anthropic-ai/claude-code@2.1.328) with npm, which needs Node.js\n"
        "  fix: install Node.js 18 or later with npm (https://nodejs.org, or your system's "
        "package manager: `apt-get install nodejs npm`, `brew install node`), then rerun "
        "`skilltest setup`; or point skilltest at a claude you already have with --claude PATH "
        "or SKILLTEST_CLAUDE\n"
    )
    assert not (tools / "cache").exists()


def test_a_failed_npm_install_shows_what_npm_said_and_leaves_nothing(tools, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NPM_FAIL", "1")
    assert main(["setup"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "installing @anthropic-ai/claude-code@2.1.328 with npm into "
        f"{tools / 'cache' / 'claude-code-2.1.328'} ...\n"
        "skilltest: error: npm install @anthropic-ai/claude-code@2.1.328 failed (exit 1); npm "
        "printed:\n"
        "    npm error code E404\n"
        "    npm error 404 Not Found - GET https://registry/x\n"
        "  fix: check that this machine reaches the npm registry"
    )
    assert list((tools / "cache").iterdir()) == []


def test_a_cli_of_another_version_is_not_kept(tools, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NPM_VERSION", "9.9.9")
    assert main(["setup"]) == 2
    err = capsys.readouterr().err
    assert (
        "skilltest: error: npm installed @anthropic-ai/claude-code@2.1.328, but its claude "
        "reports version 9.9.9\n"
    ) in err
    assert list((tools / "cache").iterdir()) == []
    assert not os.path.exists(cached_claude())


def test_setup_installs_several_versions_side_by_side_where_a_matrix_finds_each(tools, capsys):
    from skilltest.claude.binary import installed_claude

    assert main(["setup", "--claude-version", "2.1.328", "--claude-version", "2.1.332"]) == 0
    out = capsys.readouterr().out
    cache = tools / "cache"
    assert out.splitlines() == [
        f"claude 2.1.328 installed at {cache / 'claude-code-2.1.328/node_modules/.bin/claude'}",
        f"claude 2.1.332 installed at {cache / 'claude-code-2.1.332/node_modules/.bin/claude'}",
        "--claude-versions 2.1.328,2.1.332 finds them there",
    ]
    assert sorted(p.name for p in cache.iterdir()) == ["claude-code-2.1.328", "claude-code-2.1.332"]
    for version in ("2.1.328", "2.1.332"):
        found = installed_claude(version)
        assert found == cached_claude(version).absolute()
        assert claude_version(found) == version
    # The default stays the pinned one.
    assert resolve_claude(None) == cached_claude("2.1.328")


def test_a_version_npm_cannot_give_is_named_and_the_others_stay_installed(
    tools, capsys, monkeypatch
):
    monkeypatch.setenv("FAKE_NPM_MISSING", "2.1.999")
    assert main(["setup", "--claude-version", "2.1.332", "--claude-version", "2.1.999"]) == 2
    captured = capsys.readouterr()
    assert "claude 2.1.332 installed at" in captured.out
    assert (
        "skilltest: error: npm install @anthropic-ai/claude-code@2.1.999 failed (exit 1); npm "
        "printed:\n    npm error code ETARGET\n    npm error notarget No matching version found "
        "for @anthropic-ai/claude-code@2.1.999." in captured.err
    )
    assert sorted(p.name for p in (tools / "cache").iterdir()) == ["claude-code-2.1.332"]


@pytest.mark.parametrize("version", ["latest", "^2.1.0", "../x", "2.1"])
def test_setup_refuses_what_is_not_a_version_before_installing_anything(tools, capsys, version):
    assert main(["setup", "--claude-version", "2.1.332", "--claude-version", version]) == 2
    err = capsys.readouterr().err
    assert f"skilltest: error: --claude-version: {version!r} is not a Claude Code version" in err
    assert "e.g. 2.1.328" in err
    assert not (tools / "cache").exists()


def test_a_matrix_naming_a_version_not_installed_says_how_to_install_it(tools, capsys):
    from skilltest.claude.binary import installed_claude
    from skilltest.errors import InputError

    with pytest.raises(InputError) as caught:
        installed_claude("2.1.332")
    assert str(caught.value).startswith("--claude-versions: claude 2.1.332 is not installed")
    assert "skilltest setup --claude-version 2.1.332" in str(caught.value)
