"""What a model, an agent or a results file says is shown as text in every report: it makes no
link, image, HTML or table cell in Markdown, keeps JUnit XML well-formed, and leaves no control
character in any file."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from skilltest.cli import main
from skilltest.report.junit import JUnitCase, render_junit
from tests.report.documents import scenario, scenarios_document, write_results

CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

REASON = (
    "refused CONNECT x<img src=https://tracker.example/p.png> [click](javascript:alert(1)) "
    "![i](https://tracker.example/i.png) PATCH /a|b `code` **bold**\x1b[2J\x9b\u202e"
)


def hostile_results(tmp_path):
    bad = scenario(
        "spike`|<b>", "regressed", False, (0.0, 0.0, 0.5), (1.0, 0.5, 1.0), (-1.0, -1.0, -0.2),
        reasons=(REASON,),
    )  # fmt: skip
    bad["runs"] = [
        {"arm": "with_skill", "rep": 0, "transcript": "javascript:alert(document.cookie)"},
        {"arm": "without_skill", "rep": 0, "transcript": "out/a b) [x](https://evil.example"},
    ]
    return write_results(tmp_path / "r.json", scenarios_document(bad))


def test_the_markdown_summary_shows_hostile_text_as_text(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hostile_results(tmp_path)
    assert main(["report", "r.json", "--markdown", "s.md"]) == 0
    text = (tmp_path / "s.md").read_text(encoding="utf-8")
    assert not CONTROLS.search(text.replace("\n", ""))
    outside_code = text.replace("``lgtm/spike`\\|<b>``", "")
    assert not re.search(r"(?<!\\)<", outside_code)  # no HTML, no autolink
    assert "](javascript:" not in text and "![i](" not in text
    reason = next(line for line in text.splitlines() if line.startswith("- **"))
    assert reason == (
        "- **lgtm/spike\\`\\|\\<b\\>** (regressed): refused CONNECT x\\<img "
        "src=https://tracker.example/p.png\\> [click]\\(javascript:alert(1)) "
        "!\\[i]\\(https://tracker.example/i.png) PATCH /a\\|b \\`code\\` \\*\\*bold\\*\\*"
        "\\u001b[2J\\u009b\\u202e"
    )
    row = next(line for line in text.splitlines() if line.startswith("| ❌"))
    # The name as code, pipes escaped; transcript paths percent-encoded: no scheme, no way out.
    assert row.startswith("| ❌ | ``lgtm/spike`\\|<b>`` | regressed |")
    assert "[with #1](javascript%3Aalert%28document.cookie%29)" in row
    assert "[without #1](out/a%20b%29%20%5Bx%5D%28https%3A/evil.example)" in row


def test_junit_stays_well_formed_xml(tmp_path):
    text = render_junit(
        "pressure", [JUnitCase("a\x00b\x1b[2J\ud800", "pressure.demo", failure=REASON)]
    )
    root = ET.fromstring(text.split("\n", 1)[1])
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == "a\\u0000b\\u001b[2J\\ud800"
    assert not CONTROLS.search(text.replace("\n", ""))
    path = tmp_path / "j.xml"
    from skilltest.report.junit import write_junit

    write_junit(path, "pressure", [JUnitCase("half \ud83e", "pressure.demo")])
    assert ET.parse(path).getroot().find("testsuite/testcase").get("name") == "half \\ud83e"
