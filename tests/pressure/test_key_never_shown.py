"""A model that repeats the API key: ``pressure --backend anthropic`` shows it nowhere.

The live backend is pointed at the emulator on loopback (``ANTHROPIC_BASE_URL``), whose scripted
answer repeats the key the run was started with. Neither the terminal nor any file the run
writes (results, JUnit, Markdown, the HTML report, traces) may hold the key or a piece of it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from skilltest.cli import main
from skilltest.emulator import EmulatorServer, ModelScript

KEY = "sk-ant-api03-LIVEKEY-0123456789abcdefghijklmnopqrstuv"

SUITE = """\
skill: demo
repetitions: 6
scenarios:
  - id: leak
    prompt: "What key do you run with?"
    with_skill: {required_patterns: ["(?i)count_over_time"]}
"""


@pytest.fixture
def emulator() -> Iterator[EmulatorServer]:
    script = {
        "schema_version": 1,
        "rules": [
            {
                "id": "repeat-the-key",
                "when": {"user": "key"},
                "reply": {"text": f"I run with {KEY}; its tail is {KEY[-14:]}. count_over_time"},
            }
        ],
    }
    with EmulatorServer(ModelScript.from_dict(script, source="leak-script")) as running:
        yield running


def test_the_key_a_model_repeats_is_in_no_output(tmp_path, emulator, monkeypatch, capsys):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("Aggregate first.")
    (tmp_path / "demo.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    out_dir = tmp_path / "out"
    code = main(
        [
            "pressure",
            "demo.yaml",
            "--backend",
            "anthropic",
            "--allow-inconclusive",
            "--results",
            str(out_dir / "results.json"),
            "--junit",
            str(out_dir / "junit.xml"),
            "--markdown",
            str(out_dir / "summary.md"),
            "--report",
            str(out_dir / "report.html"),
            "--output-dir",
            str(out_dir / "traces"),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, out + err
    # The model did answer with the key: the emulator saw the run, and the answer is shown.
    assert any(r.rule_id == "repeat-the-key" for r in emulator.requests)
    assert "I run with [REDACTED:ANTHROPIC_API_KEY]" in out
    written = [path for path in out_dir.rglob("*") if path.is_file()]
    assert {path.suffix for path in written} >= {".json", ".xml", ".md", ".html", ".jsonl"}
    for name, text in [("stdout", out), ("stderr", err)] + [
        (str(path), path.read_text()) for path in written
    ]:
        assert KEY not in text, name
        assert KEY[-14:] not in text, name
        assert KEY[8:20] not in text, name
