"""Long texts that many runs of a page hold, written once: the skill text Claude Code adds.

Every with-skill run of a scenario suite holds the same skill text (up to
:data:`~skilltest.report.markup.TEXT_LIMIT` characters), so a page of a thousand scenarios would
hold it thousands of times. A run's timeline links to the page's one copy instead (under "Texts
the runs share", at the end of the page), which says how many times the runs hold it and opens
on a click.
"""

from __future__ import annotations

from skilltest.report.markup import e, later, pre


class SharedTexts:
    """The shared texts of one page, in the order the page first cites them."""

    def __init__(self) -> None:
        self._texts: dict[tuple[str, str], list[int]] = {}

    def cite(self, kind: str, text: str) -> str:
        """A link to ``text`` (a ``kind`` of text, e.g. "skill text added by Claude Code") in
        the page's shared texts, which it joins on its first citation."""
        entry = self._texts.setdefault((kind, text), [len(self._texts) + 1, 0])
        entry[1] += 1
        return (
            f'<a class="shared-link" href="#text-{entry[0]}">{len(text):,} characters, '
            "shown once under texts the runs share</a>"
        )

    def section(self) -> str:
        """The panel of every text cited, each in a ``<details>`` made when opened; empty when
        nothing was cited."""
        if not self._texts:
            return ""
        items = "".join(
            f'<details class="shared-text" id="text-{number}"><summary>{e(kind)}: '
            f"{len(text):,} characters, {runs} time{'' if runs == 1 else 's'} in the runs</summary>"
            + later(pre(text))
            + "</details>"
            for (kind, text), (number, runs) in self._texts.items()
        )
        return (
            '<section class="panel shared" id="shared-texts"><h2>Texts the runs share</h2>'
            '<p class="note">Written once for every run that holds them.</p>'
            f"{items}</section>"
        )
