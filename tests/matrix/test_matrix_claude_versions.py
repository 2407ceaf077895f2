"""`skilltest scenarios --models A,B --claude-versions V,W`: the example suite in four cells, both
Claude Code versions really installed (`make claude-next`: `skilltest setup --claude-version`
into .tools/claude-versions) and run against the emulator."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from skilltest.claude.binary import PINNED_VERSION, cached_install, claude_version
from skilltest.cli import main
from skilltest.matrix import read_matrix

from ..conftest import REPO_ROOT

pytestmark = pytest.mark.cli

NEXT = "2.1.332"
"""The second version, as the Makefile's CLAUDE_CODE_NEXT_VERSION pins it."""
VERSIONS = Path(os.environ.get("SKILLTEST_CLAUDE_VERSIONS") or REPO_ROOT / ".tools/claude-versions")
MISSING = f"claude {NEXT} is not installed under {VERSIONS} (make claude-next installs it)"
REQUIRED = os.environ.get("CI", "").strip().lower() not in ("", "0", "false")


@pytest.fixture
def next_cli(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache holding the second version, as skilltest's cache for the test."""
    monkeypatch.setenv("SKILLTEST_CACHE_DIR", str(VERSIONS))
    found = cached_install(NEXT) / "node_modules" / ".bin" / "claude"
    if not found.is_file():
        if REQUIRED:
            pytest.fail(MISSING, pytrace=False)
        pytest.skip(MISSING)
    assert claude_version(found.absolute()) == NEXT
    return found


def test_two_models_on_two_cli_versions_give_four_cells_and_the_cli_comparison(
    next_cli, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO_ROOT)
    text = (REPO_ROOT / "tests/model-scripts/lgtm.scenarios.yaml").read_text()
    script = tmp_path / "echo-model.yaml"
    script.write_text(re.sub(r"(?m)^model: .*$", "", text))
    results = tmp_path / "matrix.json"
    code = main(
        [
            "scenarios",
            "tests/scenarios/lgtm.yaml",
            "--models",
            "haiku,opus",
            "--claude-versions",
            f"{PINNED_VERSION},{NEXT}",
            "--script",
            str(script),
            "--only",
            "investigate-*",
            "-k",
            "3",
            "--results",
            str(results),
            "--output-dir",
            str(tmp_path / "out"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    document = read_matrix(results)
    ids = [cell["id"] for cell in document["cells"]]
    assert ids == [
        f"model=haiku,claude={PINNED_VERSION}",
        f"model=haiku,claude={NEXT}",
        f"model=opus,claude={PINNED_VERSION}",
        f"model=opus,claude={NEXT}",
    ]
    for cell in document["cells"]:
        provenance = cell["results"]["provenance"]
        # Each cell ran the CLI of its version, which asked for the cell's model.
        assert provenance["claude_version"] == cell["values"]["claude"]
        assert provenance["models"] == [f"claude-{cell['values']['model']}-5-5"]
        assert cell["results"]["scenarios"][0]["verdict"] == "improved"
    # By CLI version: the script answers alike under both, so no pass rate moved; 3 runs per
    # arm cannot show "same" (the band is +-5%), and the verdict says so.
    changes = document["versions"]
    assert len(changes) == 4  # two arms, in each model
    for change in changes:
        assert (change["first"], change["second"]) == (PINNED_VERSION, NEXT)
        assert change["change"] == 0.0
        assert change["change_ci"][0] < 0 < change["change_ci"][1]
        assert change["verdict"] == "inconclusive"
    assert re.search(
        rf"^lgtm/investigate-error-spike\s+{NEXT} vs {PINNED_VERSION} at model=haiku\s+"
        r"inconclusive \+0% \[-\d+%, \+\d+%\]\s+inconclusive \+0%",
        out,
        re.MULTILINE,
    ), out
    # By model, at each version: the lifts do not differ.
    lifts = document["comparisons"]
    assert sorted(c["cells"][0] for c in lifts) == [
        f"model=haiku,claude={PINNED_VERSION}",
        f"model=haiku,claude={NEXT}",
    ]
    assert {c["verdict"] for c in lifts} == {"no difference shown"}
    assert re.search(rf"haiku - opus at claude={NEXT}\s+\+0%", out), out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--claude-versions", "latest"],
            "--claude-versions: 'latest' is not a Claude Code version",
        ),
        (["--claude-versions", "2.1.328,2.1.328"], "--claude-versions names '2.1.328' twice"),
        (
            ["--claude-versions", "2.1.328", "--claude", "/bin/true"],
            "--claude /bin/true and --claude-versions name the CLI twice",
        ),
        (
            ["--claude-versions", "9.9.999"],
            "--claude-versions: claude 9.9.999 is not installed",
        ),
    ],
)
def test_bad_cli_versions_are_refused_before_any_run(extra, message, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.setenv("SKILLTEST_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["scenarios", "tests/scenarios/lgtm.yaml", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert "cell 1 of" not in err
