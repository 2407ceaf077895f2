"""`skilltest report`: the Markdown summary of results files already written."""

from __future__ import annotations

from skilltest.cli import main
from tests.report.documents import (
    IMPROVED,
    scenario,
    scenarios_document,
    triggers_document,
    write_results,
)

NEUTRAL = scenario(
    "rename-column", "neutral", True, (0.9, 0.85, 0.94), (0.9, 0.85, 0.94), (0.0, -0.04, 0.04)
)


def test_shards_and_layers_are_combined_into_one_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_results(tmp_path / "a.json", scenarios_document(IMPROVED))
    write_results(tmp_path / "b.json", scenarios_document(NEUTRAL))
    write_results(tmp_path / "t.json", triggers_document())
    code = main(["report", "a.json", "b.json", "t.json", "--markdown", "out/summary.md"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "wrote out/summary.md\n", "")
    text = (tmp_path / "out" / "summary.md").read_text()
    assert "from `a.json`, `b.json`" in text
    assert "**2 scenarios**: 1 improved, 1 neutral; 2 passed, 0 failed" in text
    assert "**2 queries**: 1 pass, 1 false-trigger; 1 passed, 1 failed" in text
    # Links relative to out/, where the summary is.
    assert "[with #1](../output/investigate-error-spike/with-skill-0.ndjson)" in text


def test_without_markdown_the_summary_is_printed(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_results(tmp_path / "a.json", scenarios_document(IMPROVED))
    assert main(["report", "a.json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## skilltest scenarios\n\nfrom `a.json`\n")
    assert "[with #1](output/investigate-error-spike/with-skill-0.ndjson)" in out


def test_html_writes_the_report_of_every_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_results(tmp_path / "a.json", scenarios_document(IMPROVED))
    write_results(tmp_path / "t.json", triggers_document())
    assert main(["report", "a.json", "t.json", "--html", "out/r.html"]) == 0
    assert capsys.readouterr().out == "wrote out/r.html\n"
    page = (tmp_path / "out" / "r.html").read_text()
    assert "<h2>scenarios</h2>" in page and "<h2>triggers</h2>" in page
    assert "lgtm/investigate-error-spike" in page


def test_reports_follow_the_umask_as_any_file_the_user_creates(tmp_path, capsys, monkeypatch):
    # A CI artifact a team shares, a report a web server serves: not private to the writer.
    monkeypatch.chdir(tmp_path)
    write_results(tmp_path / "a.json", scenarios_document(IMPROVED))
    from skilltest.report import files

    monkeypatch.setattr(files, "_umask", lambda: 0o022)
    assert main(["report", "a.json", "--markdown", "s.md", "--html", "r.html"]) == 0
    assert (tmp_path / "s.md").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "r.html").stat().st_mode & 0o777 == 0o644
    monkeypatch.setattr(files, "_umask", lambda: 0o077)
    assert main(["report", "a.json", "--markdown", "s.md"]) == 0
    assert (tmp_path / "s.md").stat().st_mode & 0o777 == 0o600
