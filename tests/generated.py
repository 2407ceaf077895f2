"""A generated skill project for tests and benchmarks of large suites: a demo skill, its
emulator script and a pressure suite of as many scenarios as asked, answered offline."""

from __future__ import annotations

from pathlib import Path

PATTERNS = {3: "histogram_quantile", 4: '"count_over_time|grep"'}
"""In a varied suite, the with-skill pattern of the scenarios whose index is 3 or 4 modulo 50:
one the stand-in never writes (no-steer), one its baseline answer matches too (not-red)."""


def generated_project(
    folder: Path, count: int, k: int = 1, latency_ms: int = 0, *, varied: bool = False
) -> Path:
    """A skill, its emulator script (``latency_ms`` before every answer) and a suite of
    ``count`` scenarios with K fixed at ``k`` (``tests/skill-pressure/generated.yaml``);
    returns the project folder.

    The stand-in answers with the skill as the skill asks, without it otherwise: every
    scenario steers given runs enough. A ``varied`` suite's verdicts differ: one scenario in
    fifty steers (five runs per arm, a threshold of 0.5), one in fifty misses with the skill
    (no-steer) and one in fifty passes without it too (not-red), six runs per arm each; the
    rest run ``k`` times per arm.
    """
    skill = folder / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: demo\ndescription: Aggregate logs first.\n---\nDEMO SKILL: aggregate first.\n"
    )
    (folder / "model.yaml").write_text(
        "schema_version: 1\n"
        f"faults: {{latency_ms: {latency_ms}}}\n"
        "rules:\n"
        "  - id: with-skill\n"
        '    when: {system: "DEMO SKILL"}\n'
        '    reply: {text: "sum by (level) (count_over_time({app=\\"x\\"}[5m]))"}\n'
        'default: {text: "I would grep the error logs."}\n'
    )
    scenarios = []
    for i in range(count):
        pattern = PATTERNS.get(i % 50, "count_over_time") if varied else "count_over_time"
        scenarios.append(
            f"  - id: s{i:03d}\n    prompt: Investigate error spike {i}.\n"
            f"    with_skill: {{required_patterns: [{pattern}]}}\n"
        )
        if varied and i % 50 == 2:
            scenarios.append("    repetitions: 5\n    threshold: 0.5\n")
        elif varied and i % 50 in PATTERNS:
            scenarios.append("    repetitions: 6\n")
    suite = folder / "tests" / "skill-pressure" / "generated.yaml"
    suite.parent.mkdir(parents=True)
    suite.write_text(
        f"skill: demo\nmodel_script: ../../model.yaml\nrepetitions: {k}\nscenarios:\n"
        + "".join(scenarios)
    )
    return folder
