"""Every output a run was asked for, written from its results by one function.

The layers' results (``PressureResults``, ``ScenarioResults``, ``TriggerResults``) each give
their results file document and their JUnit cases; :func:`write_outputs` writes the results JSON
and the JUnit XML whenever it is called (a run calls it as scenarios finish, so an interrupted
run keeps what had finished), and the Markdown summary and the HTML report once, at the end.
Everything written passes the credential redactor.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from skilltest.report.junit import JUnitCase


@dataclass(frozen=True, kw_only=True)
class Outputs:
    """The files a run writes; each is optional."""

    results: Path | None = None
    """The results JSON, rewritten as scenarios finish (``complete: false`` until the end)."""
    junit: Path | None = None
    """JUnit XML, one case per scenario (or query)."""
    markdown: Path | None = None
    """A Markdown summary, written once at the end."""
    html: Path | None = None
    """One self-contained HTML report, written once at the end."""
    step_summary: Path | None = None
    """A file the Markdown summary is appended to when ``markdown`` is not given (a CI job's
    ``GITHUB_STEP_SUMMARY``; the command line fills it from that variable)."""


class Reportable(Protocol):
    """Results a run can report: a layer's results, finished or not."""

    @property
    def junit_name(self) -> str:
        """The JUnit test suite's name (``skilltest pressure``)."""
        ...

    def to_document(self) -> dict[str, Any]:
        """The results file's document."""
        ...

    def junit_cases(self) -> list[JUnitCase]:
        """One JUnit case per scenario (or query)."""
        ...


def write_outputs(
    results: Reportable, outputs: Outputs, *, final: bool, cwd: Path | None = None
) -> dict[str, Any] | None:
    """Writes what ``outputs`` asks for from ``results``.

    Args:
        results: The run's results so far.
        outputs: The files asked for.
        final: The run ended (finished or interrupted): the Markdown summary and the HTML
            report are written too; before that, only the results file and the JUnit XML.
        cwd: The folder links in the Markdown summary and the HTML report are relative to
            (default: the current folder).

    Returns:
        The results document, when one was built (a results file, JUnit or a final run).

    Raises:
        InputError: a file cannot be written, naming it.
    """
    from skilltest.report.files import write_results
    from skilltest.report.junit import provenance_properties, write_junit
    from skilltest.report.provenance import provenance_of

    document = None
    if outputs.results is not None or outputs.junit is not None or final:
        document = results.to_document()
        if outputs.results is not None:
            write_results(outputs.results, document)
        if final:
            _summaries(document, outputs, cwd or Path.cwd())
    if outputs.junit is not None:
        assert document is not None
        # What produced the results goes with them: an offline run says so in CI's test view.
        properties = provenance_properties(provenance_of(document))
        write_junit(outputs.junit, results.junit_name, results.junit_cases(), properties)
    return document


def _summaries(document: dict[str, Any], outputs: Outputs, cwd: Path) -> None:
    from skilltest.report.files import write_report
    from skilltest.report.markdown import Document, write_summary

    write_summary(
        document,
        markdown=outputs.markdown,
        step_summary=str(outputs.step_summary) if outputs.step_summary else None,
        cwd=cwd,
    )
    if outputs.html is not None:
        from skilltest.report.html import render_html

        page = render_html(
            [Document("-", document)], cwd=cwd, link_from=(cwd / outputs.html).parent
        )
        write_report(outputs.html, page)
