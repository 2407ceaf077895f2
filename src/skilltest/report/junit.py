"""JUnit XML, the format every CI system shows as test results."""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skilltest.report.files import write_report
from skilltest.report.provenance import Provenance, agent_text, model_text, notice
from skilltest.report.text import escape_controls

NOT_XML = "\ud800-\udfff\ufffe\uffff"
"""Characters beside the controls that XML 1.0 documents cannot hold."""


@dataclass(frozen=True)
class JUnitCase:
    """One scenario as a JUnit test case."""

    name: str
    """The test case's name (the scenario id)."""
    classname: str
    """Its class (the layer and skill, e.g. ``pressure.lgtm``)."""
    time_s: float = 0.0
    """Seconds spent."""
    failure: str | None = None
    """Why it failed (a failing verdict)."""
    error: str | None = None
    """Why it could not be judged (no completed run)."""
    skipped: str | None = None
    """Why it was skipped."""
    output: str = ""
    """Text shown with the case (the verdict line and the figures)."""
    properties: tuple[tuple[str, str], ...] = ()
    """Name and value pairs shown as the case's ``<properties>`` (``against HEAD~1`` and the
    verdict against that revision with its delta)."""


def render_junit(
    suite_name: str,
    cases: Sequence[JUnitCase],
    properties: Sequence[tuple[str, str]] = (),
) -> str:
    """Renders one ``<testsuites>`` document; ``properties`` are the test suite's (what
    produced the results: :func:`provenance_properties`)."""
    root = ET.Element("testsuites", name=suite_name)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=suite_name,
        tests=str(len(cases)),
        failures=str(sum(1 for c in cases if c.failure is not None)),
        errors=str(sum(1 for c in cases if c.error is not None)),
        skipped=str(sum(1 for c in cases if c.skipped is not None)),
        time=f"{sum(c.time_s for c in cases):.3f}",
    )
    if properties:
        # The suite's properties come first inside it, as the JUnit schema orders them.
        listed = ET.SubElement(suite, "properties")
        for name, value in properties:
            ET.SubElement(listed, "property", name=name, value=value)
    for case in cases:
        element = ET.SubElement(
            suite, "testcase", name=case.name, classname=case.classname, time=f"{case.time_s:.3f}"
        )
        if case.properties:
            # Inside the test case, before failure and output, as the JUnit schema orders them.
            own = ET.SubElement(element, "properties")
            for name, value in case.properties:
                ET.SubElement(own, "property", name=name, value=value)
        if case.failure is not None:
            ET.SubElement(
                element, "failure", message=case.failure.splitlines()[0]
            ).text = case.failure
        if case.error is not None:
            ET.SubElement(element, "error", message=case.error.splitlines()[0]).text = case.error
        if case.skipped is not None:
            ET.SubElement(element, "skipped", message=case.skipped)
        if case.output:
            ET.SubElement(element, "system-out").text = case.output
    ET.indent(root)
    text = ET.tostring(root, encoding="unicode")
    # Characters XML 1.0 cannot hold (a CI system would refuse the whole file), and those that
    # act on a terminal where a CI log prints the file, are written as visible escapes.
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + escape_controls(text, also=NOT_XML) + "\n"


def provenance_properties(provenance: Provenance) -> list[tuple[str, str]]:
    """What produced the results, as test suite properties: an offline run's notice first, then
    the backend, the model, the versions, the date, each suite file's checksum and the command
    line."""
    said = notice(provenance)
    props = [("notice", said)] if said else []
    props += [("origin", provenance.origin), ("backend", provenance.backend or "")]
    if provenance.recorded_with:
        props.append(("recorded_with", ", ".join(provenance.recorded_with)))
    props += [
        ("model", model_text(provenance)),
        ("claude_version", provenance.claude_version or ""),
        *([("agent", agent)] if (agent := agent_text(provenance)) else []),
        ("skilltest_version", provenance.skilltest_version or ""),
        ("date", provenance.started_at or ""),
    ]
    props += [(f"suite {suite.path}", suite.sha256 or "") for suite in provenance.suites]
    props += [("command", shlex.join(provenance.command)), ("run_id", provenance.run_id)]
    return props


def write_junit(
    path: Path,
    suite_name: str,
    cases: Sequence[JUnitCase],
    properties: Sequence[tuple[str, str]] = (),
) -> None:
    """Writes JUnit XML to ``path`` atomically."""
    write_report(path, render_junit(suite_name, cases, properties))
