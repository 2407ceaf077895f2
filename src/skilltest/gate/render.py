"""The gate's decision as the command line prints it."""

from __future__ import annotations

from skilltest.gate.read import OFFLINE_ALLOWED
from skilltest.gate.rules import Decision
from skilltest.report.provenance import rescored_text, summary


def render(decision: Decision) -> str:
    """The decision as the CLI prints it: the headline, what produced each file, then every
    rule with its evidence."""
    count = len(decision.reasons)
    headline = (
        f"gate: BLOCK ({count} reason{'s' if count != 1 else ''})"
        if decision.blocked
        else "gate: PASS"
    )
    if decision.offline_allowed:
        headline += f" on offline results (--allow-offline): {OFFLINE_ALLOWED}"
    rescored = [file for _, file in decision.files if file.provenance.rescored_from]
    if rescored:
        # Scored again from kept transcripts: today's suite, the runs of another day.
        headline += f" ({len(rescored)} file(s) rescored from kept transcripts, not run)"
    lines = [headline]
    lines += [
        f"{role}: {file.name} ({file.layer}): {summary(file.provenance)}"
        + (
            f"; rescored, nothing run: {rescored_text(file.provenance.rescored_from)}"
            if file.provenance.rescored_from
            else ""
        )
        for role, file in decision.files
    ]
    width = max(len(rule.name) for rule in decision.rules)
    for rule in decision.rules:
        lines.append(f"{rule.status:<5}  {rule.name:<{width}}  {rule.rule}")
        lines += [f"         - {reason}" for reason in rule.blocks]
        lines += [f"         {note}" for note in rule.evidence]
    return "\n".join(lines)
