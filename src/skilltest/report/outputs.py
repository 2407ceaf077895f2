"""Every output a run was asked for, written from its results by one function.

The layers' results (``PressureResults``, ``ScenarioResults``, ``TriggerResults``) each give
their results file document and their JUnit cases; :func:`write_outputs` writes the results JSON
and the JUnit XML whenever it is called, and the Markdown summary and the HTML report once, at
the end. Everything written passes the redactor of the secrets the process knows.

A run writes its results file (``complete: false``) when it starts and the whole file once it
has ended or was interrupted; in between, each finished scenario is appended to the file's
journal (:class:`Journal`, ``<results>.journal.jsonl``), one line each, redacted once: saving
costs the same for the thousandth scenario as for the first. The whole file replaces the journal;
a run killed outright leaves the incomplete file and its journal, which the readers of results
files fold in (:func:`skilltest.report.files.read_results`), as an incomplete run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skilltest.errors import InputError
from skilltest.report.junit import JUnitCase

if TYPE_CHECKING:
    from collections.abc import Callable

JOURNAL_SUFFIX = ".journal.jsonl"
"""What a results file's journal adds to its name (``results.json.journal.jsonl``)."""


@dataclass(frozen=True, kw_only=True)
class Outputs:
    """The files a run writes; each is optional."""

    results: Path | None = None
    """The results JSON: written (``complete: false``) when the run starts and whole at its end;
    in between, each finished scenario is appended to its journal (:func:`journal_path`)."""
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
            # The whole file holds what the journal held: a reader sees one or the other.
            journal_path(outputs.results).unlink(missing_ok=True)
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


def journal_path(results: Path) -> Path:
    """The journal beside a results file: its finished scenarios while the run goes."""
    return results.with_name(results.name + JOURNAL_SUFFIX)


class Journal:
    """The finished scenarios of a run that has not ended, appended to the results file's
    journal as they finish: one JSON line each, as the results file's ``scenarios`` (or
    ``queries``) will list it, with the environment's credentials redacted.

    Each append writes one scenario's line and nothing else, so a run's saving is linear in its
    suite; the line is flushed to the operating system at once, so a run killed outright keeps
    every scenario that had finished (a line cut short by the kill is left out by readers).
    """

    def __init__(self, outputs: Outputs) -> None:
        self.path = None if outputs.results is None else journal_path(outputs.results)
        self._redact: Callable[[str], str] | None = None
        self._handle: Any = None

    def append(self, part: Mapping[str, Any]) -> None:
        """Appends one finished scenario (``part``, a JSON object) to the journal.

        Raises:
            InputError: the journal cannot be written, naming it.
        """
        if self.path is None:
            return
        from skilltest.redact import known_redactor, map_strings

        if self._redact is None:
            self._redact = known_redactor()
        line = json.dumps(
            map_strings(part, self._redact), ensure_ascii=False, default=str, separators=(",", ":")
        )
        try:
            if self._handle is None:
                self._handle = self.path.open("a", encoding="utf-8", errors="backslashreplace")
            self._handle.write(line + "\n")
            self._handle.flush()
        except OSError as exc:
            raise InputError(
                f"cannot write the file: {exc.strerror or exc}",
                location=str(self.path),
                fix="choose a results file in a folder you can write to",
            ) from exc

    def start(self) -> None:
        """Empties the journal a killed run may have left beside the results file."""
        self.close()
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def close(self) -> None:
        """Closes the journal (the whole results file, once written, removes it)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
