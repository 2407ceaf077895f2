"""``skilltest triggers --rescore DIR``: the kept trigger runs judged against the suite as it is
now, with no CLI started, and the same results a fresh run of the edited suite gives."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from skilltest.cli import main
from tests.projects import model_script_beside
from tests.scenarios.test_rescore import counting_claude, starts

from ..conftest import REPO_ROOT

pytestmark = pytest.mark.cli

ONLY = ("--only", "capital-of-france")
FLIP = ("id: capital-of-france", "should_trigger: false}")


def suite_copy(folder: Path, flip: bool) -> Path:
    text = (REPO_ROOT / "tests" / "triggers" / "lgtm.yaml").read_text()
    text = model_script_beside(text, "lgtm.triggers.yaml", folder)
    if flip:
        line = next(line for line in text.splitlines() if FLIP[0] in line)
        text = text.replace(line, line.replace(FLIP[1], "should_trigger: true}"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lgtm.yaml").write_text(text)
    return folder / "lgtm.yaml"


def results(path: Path) -> dict[str, tuple[bool, list[str]]]:
    data = json.loads(path.read_text())
    return {
        q["id"]: (q["passed"], sorted(r["ended"] for r in q["runs"]))
        for suite in data["suites"]
        for q in suite["queries"]
    }


def test_a_flipped_expectation_rescored_matches_a_fresh_run_with_no_cli_started(
    claude_bin, tmp_path, monkeypatch, capsys
):
    wrapper, log = counting_claude(tmp_path, claude_bin)
    monkeypatch.setenv("SKILLTEST_CLAUDE", str(wrapper))
    # Six runs decide a query at threshold 0.5: it passes before the flip and misses after.
    common = ("--skills-dir", REPO_ROOT / "skills", "-k", "6", *ONLY)
    original = suite_copy(tmp_path / "original", flip=False)
    code = main([str(a) for a in ("triggers", original, *common, "--backend", "emulator",
                 "--output-dir", tmp_path / "out", "--results", tmp_path / "orig.json")])  # fmt: skip
    assert code == 0
    ran = starts(log)
    assert ran > 0
    edited = suite_copy(tmp_path / "edited", flip=True)
    began = time.monotonic()
    code = main([str(a) for a in ("triggers", edited, *common, "--rescore", tmp_path / "out",
                 "--results", tmp_path / "rescored.json")])  # fmt: skip
    assert time.monotonic() - began < 120  # ends, no hang
    assert starts(log) == ran, "a rescore started claude"
    assert "no claude started, no model asked" in capsys.readouterr().out
    rescored = results(tmp_path / "rescored.json")
    assert results(tmp_path / "orig.json")["capital-of-france"][0] is True
    assert rescored["capital-of-france"][0] is False
    assert code == 1
    fresh_code = main([str(a) for a in ("triggers", edited, *common, "--backend", "emulator",
                       "--output-dir", tmp_path / "fresh", "--results", tmp_path / "fresh.json")])  # fmt: skip
    assert starts(log) > ran
    assert rescored == results(tmp_path / "fresh.json")
    assert fresh_code == code
    provenance = json.loads((tmp_path / "rescored.json").read_text())["provenance"]
    assert provenance["rescored_from"]["runs"][0]["backend"] == "emulator"
