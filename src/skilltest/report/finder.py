"""How a reader finds their way in a large HTML report: each layer's filter-and-search form.

The form sits above a layer's verdict table, hidden: only the page's script
(:mod:`skilltest.report.script`) shows it, so a reader without JavaScript, who gets every
scenario open, never sees controls that would do nothing. It offers a checkbox per verdict the
layer holds, with its count, a search of the scenario ids (a substring, case-insensitive), a
button that shows everything again, and a line that says how many scenarios are shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from skilltest.report.markup import chip, e
from skilltest.report.reading import tone

FOLD_ABOVE = 30
"""Most scenarios (or queries) a layer shows open when the page's script runs; a larger layer
starts with each one folded to its heading, opening on a click (without JavaScript every
scenario is open)."""


def finder(layer: str, noun: str, counts: Sequence[tuple[str, int]]) -> str:
    """The filter-and-search form of a layer whose rows are ``noun`` (``scenarios``) and whose
    verdicts are ``counts`` (each with how many rows have it)."""
    boxes = "".join(
        f'<label><input type="checkbox" name="verdict" value="{e(verdict)}" checked>'
        f"{chip(verdict, tone(layer, verdict, failed=None))} {number}</label>"
        for verdict, number in counts
    )
    return (
        f'<form class="finder" hidden role="search" aria-label="{e(f"find {noun}")}">'
        f'<label class="find">{e(noun)} whose id contains '
        '<input type="search" name="id" autocomplete="off" spellcheck="false"></label>'
        f"<fieldset><legend>verdicts shown</legend>{boxes}</fieldset>"
        '<button type="button" class="all">show all</button>'
        '<p class="shown" role="status" aria-live="polite"></p></form>'
    )
