"""Every link between the README and docs/ leads somewhere: the file exists, and so does the
heading a ``#anchor`` names (GitHub's anchors: lower case, punctuation dropped, spaces as ``-``).
Links inside code (fenced blocks, inline code) are examples, not links."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(title: str) -> str:
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def headings(page: Path) -> set[str]:
    found, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"^#{1,6} ", line):
            found.add(slug(line.lstrip("#")))
    return found


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [m[1] for m in LINK.finditer(text) if not re.match(r"^(https?|mailto):", m[1])]


def test_the_pages_are_there():
    assert len(PAGES) > 10 and all(page.is_file() for page in PAGES)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_of_a_page_leads_somewhere(page: Path):
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in headings(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert broken == [], f"{page.relative_to(REPO)}: {broken}"
