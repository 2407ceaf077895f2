"""`skilltest report`: the Markdown summary of results files already written."""

from __future__ import annotations

import json

from skilltest.cli import main
from tests.report.documents import scenario, scenarios_document, triggers_document

IMPROVED = scenario(
    "investigate-error-spike",
    "improved",
    True,
    (1.0, 0.34, 1.0),
    (0.0, 0.0, 0.66),
    (1.0, 0.07, 1.0),
)
NEUTRAL = scenario(
    "rename-column", "neutral", True, (0.9, 0.85, 0.94), (0.9, 0.85, 0.94), (0.0, -0.04, 0.04)
)


def write(path, document):
    path.write_text(json.dumps(document))
    return str(path)


def test_shards_and_layers_are_combined_into_one_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.json", scenarios_document(IMPROVED))
    write(tmp_path / "b.json", scenarios_document(NEUTRAL))
    write(tmp_path / "t.json", triggers_document())
    code = main(["report", "a.json", "b.json", "t.json", "--markdown", "out/summary.md"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "wrote out/summary.md\n", "")
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "from `a.json`, `b.json`" in text
    assert "**2 scenarios**: 1 improved, 1 neutral; 2 passed, 0 failed" in text
    assert "**2 queries**: 1 pass, 1 false-trigger; 1 passed, 1 failed" in text
    # Links relative to out/, where the summary is.
    assert "[with #0](../output/investigate-error-spike/with-skill-0.ndjson)" in text


def test_without_markdown_the_summary_is_printed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.json", scenarios_document(IMPROVED))
    assert main(["report", "a.json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## skilltest scenarios\n\nfrom `a.json`\n")
    assert "[with #0](output/investigate-error-spike/with-skill-0.ndjson)" in out


def test_html_is_not_available_yet(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "a.json", scenarios_document(IMPROVED))
    assert main(["report", "a.json", "--html", "r.html"]) == 2
    err = capsys.readouterr().err
    assert "--html: the HTML report is not available in this version" in err
    assert not (tmp_path / "r.html").exists()


def test_a_file_that_is_not_results_is_bad_input(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.json").write_text('{"layer": "coverage"}')
    (tmp_path / "old.json").write_text('{"layer": "scenarios", "schema_version": 1}')
    assert main(["report", "x.json"]) == 2
    assert "x.json: not a skilltest results file" in capsys.readouterr().err
    assert main(["report", "old.json"]) == 2
    assert "results schema_version 1 is not 2" in capsys.readouterr().err
    assert main(["report", "missing.json"]) == 2
    assert "missing.json: cannot read results" in capsys.readouterr().err
