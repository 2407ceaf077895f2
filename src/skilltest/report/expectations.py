"""What a scenario asks, as the HTML report shows it: the user's messages and what is expected.

From a results file's ``scenario`` block (pressure and scenario layers) or a trigger query's
message: the prompt (a pressure prompt with the suffix appended to it), the follow-up turns; the
patterns each arm is judged by and when a pressure baseline is RED; the rubric of a scenario
(required tools, patterns where they look, anti-patterns with their vetoes, tool order,
expected skills, the bars to pass), its world's expectations, and each outcome check with how
many runs of each arm passed it. A results file of an older version, without the block, says so
instead.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from skilltest.decision import IMPROVED_ABOVE
from skilltest.report.markup import chip, code_list, e
from skilltest.report.reading import BAD, GOOD, PLAIN, WARN
from skilltest.report.timeline import ARM_LABELS, check_marks


def about_of(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """What the suite asked of a scenario (its results ``scenario`` block); empty for files
    of older versions."""
    about = item.get("scenario")
    return about if isinstance(about, Mapping) else {}


def prompts_of(layer: str, item: Mapping[str, Any]) -> list[str]:
    """The user's messages of a scenario in order, as sent (a pressure prompt with its
    suffix); empty when the results file does not record them."""
    if layer == "triggers":
        query = item.get("query")
        return [query] if isinstance(query, str) else []
    about = about_of(item)
    prompt = about.get("prompt")
    if not isinstance(prompt, str):
        return []
    if layer == "pressure" and about.get("prompt_suffix"):
        prompt += "\n\n" + str(about["prompt_suffix"])
    return [prompt, *(str(turn) for turn in about.get("turns") or [])]


def ask(layer: str, item: Mapping[str, Any]) -> str:
    """The block "What the user says": the prompt, a pressure suffix, the follow-up turns."""
    about = about_of(item)
    prompt = item.get("query") if layer == "triggers" else about.get("prompt")
    head = "<h4>What the user says</h4>"
    if not isinstance(prompt, str):
        return (
            f'<div class="ask">{head}<p class="note">not recorded in this results file '
            "(written by an older skilltest)</p></div>"
        )
    turns = [str(turn) for turn in about.get("turns") or []] if layer != "triggers" else []
    parts = [
        '<div class="turn"><span class="who">prompt</span>'
        f'<blockquote class="prompt">{e(prompt)}</blockquote></div>'
    ]
    if layer == "pressure" and about.get("prompt_suffix"):
        parts.append(
            f'<p class="note">sent with, after a blank line: {e(about["prompt_suffix"])}</p>'
        )
    for index, turn in enumerate(turns, start=2):
        parts.append(
            f'<div class="turn"><span class="who">turn {index}: follow-up</span>'
            f'<blockquote class="prompt">{e(turn)}</blockquote></div>'
        )
    return f'<div class="ask">{head}{"".join(parts)}</div>'


def _dl(pairs: Sequence[tuple[str, str]]) -> str:
    shown = [(name, value) for name, value in pairs if value]
    if not shown:
        return '<p class="note">nothing recorded</p>'
    return (
        '<dl class="expect">'
        + "".join(f"<dt>{e(name)}</dt><dd>{value}</dd>" for name, value in shown)
        + "</dl>"
    )


def _percent(value: Any) -> str:
    return f"{100 * float(value):.0f}%" if isinstance(value, int | float) else ""


def _pressure_expected(item: Mapping[str, Any]) -> str:
    expected = about_of(item).get("expected") or {}
    rule = expected.get("baseline_red")
    red = {
        "criteria": "it misses a required pattern or matches an anti-pattern",
        "expected_patterns": "it matches every expected pattern",
    }.get(str(rule), "")
    threshold = _percent(item.get("threshold"))
    needed = f"{threshold} of the with-skill runs" if threshold else ""
    if needed and (floor := _percent(item.get("steers_at_or_above"))):
        needed += f"; steers once the rate's interval lies at or above {floor}"
    return _dl(
        [
            ("with skill, must match", code_list(expected.get("required_patterns"))),
            ("with skill, must not match", code_list(expected.get("anti_patterns"))),
            ("pass rate needed", e(needed)),
            ("a baseline run is RED when", e(red)),
            ("expected without the skill", code_list(expected.get("expected_patterns"))),
        ]
    )


SCOPES = {
    "tools": "in the tool calls",
    "text": "in the assistant's text",
    "all": "in the tool calls and the text",
}


def _anti_patterns(expected: Mapping[str, Any]) -> str:
    vetoes = set(expected.get("vetoes") or [])
    return " ".join(
        f"<code>{e(p)}</code>" + (f" {chip('veto', WARN)}" if p in vetoes else "")
        for p in expected.get("anti_patterns") or []
    )


def _world_expected(world: Mapping[str, Any]) -> list[tuple[str, str]]:
    writes = world.get("writes")
    confirm = world.get("confirm_before_write")
    claims = "; ".join(
        f"{claim.get('pattern')} only after {claim.get('requires')}"
        for claim in world.get("claims") or []
        if isinstance(claim, Mapping)
    )
    return [
        (
            "writes to the world",
            code_list(writes) if writes else ("none" if writes == [] else ""),
        ),
        ("forbidden writes", code_list(world.get("forbidden"))),
        (
            "confirmation",
            e(f"no write before user turn {int(confirm) + 1}") if isinstance(confirm, int) else "",
        ),
        ("final answer must match", code_list(world.get("must_include"))),
        ("final answer must not match", code_list(world.get("must_not_include"))),
        ("claims backed by calls", e(claims)),
        ("recovers from the fault", "yes" if world.get("recovers") else ""),
    ]


def _verdict_bar(item: Mapping[str, Any]) -> str:
    """What the scenario's verdict reads, and where it changes."""
    about = about_of(item)
    min_score, min_delta = about.get("min_score"), about.get("min_delta")
    if not isinstance(item.get("without_skill"), Mapping):
        if not isinstance(min_score, int | float):
            return ""
        return (
            "the with-skill mean score alone (no baseline ran): its interval must lie at or "
            f"above {min_score:.2f}"
        )
    read = {
        "pass": "the pass rates, with skill minus without",
        "mean": "the mean scores, with skill minus without",
    }.get(str(item.get("decide_by")), "the delta, with skill minus without")
    if not isinstance(min_delta, int | float):
        return read
    return (
        f"{read}: improved when its interval lies above {IMPROVED_ABOVE:+.2f}, regressed when "
        f"below {min_delta:+.2f}, neutral in between"
    )


def _scenario_bar(item: Mapping[str, Any]) -> str:
    """When a compared scenario passes."""
    about = about_of(item)
    min_score = about.get("min_score")
    if not isinstance(item.get("without_skill"), Mapping) or not isinstance(min_score, int | float):
        return ""
    bar = f"improved or neutral, and the with-skill mean score at least {min_score:.2f}"
    if item.get("expected_skills"):
        bar += ", and the expected skills fired in at least half of the with-skill runs"
    return bar


def _scoring(about: Mapping[str, Any]) -> str:
    """How the runs' sections added up, e.g. ``honeycomb (empty sections count as full credit,
    ...)``; empty for files written before the block kept it."""
    scoring, means = about.get("scoring"), about.get("scoring_means")
    if not isinstance(scoring, str):
        return ""
    return f"{scoring} ({means})" if isinstance(means, str) else scoring


def _scenario_expected(item: Mapping[str, Any]) -> str:
    about = about_of(item)
    expected = about.get("expected") or {}
    scope = SCOPES.get(str(expected.get("pattern_scope")), "")
    ordering = " ".join(
        "<code>" + " → ".join(e(tool) for tool in order) + "</code>"
        for order in expected.get("tool_ordering") or []
    )
    min_score = about.get("min_score")
    run_bar = ""
    if isinstance(min_score, int | float):
        run_bar = f"it scores at least {min_score:.2f} with no veto and no authority violation"
    pairs = [
        ("required tools", code_list(expected.get("required_tools"))),
        (f"must match {scope}".strip(), code_list(expected.get("required_patterns"))),
        ("must match in the text", code_list(expected.get("text_patterns"))),
        (f"must not match {scope}".strip(), _anti_patterns(expected)),
        ("tools in this order", ordering),
        ("recommended tools", code_list(expected.get("recommended_tools"))),
        ("skills that should fire", code_list(item.get("expected_skills"))),
        (
            "no action",
            "any action vetoes the run" if expected.get("expect_no_action") else "",
        ),
        (
            "evidence",
            "only calls that ran without an error count" if expected.get("require_success") else "",
        ),
        ("scoring", e(_scoring(about))),
        ("a run passes when", e(run_bar)),
        ("the verdict reads", e(_verdict_bar(item))),
        ("the scenario passes when", e(_scenario_bar(item))),
    ]
    if isinstance(about.get("world"), Mapping):
        pairs += _world_expected(about["world"])
    return _dl(pairs) + _checks_table(item)


CHECK_ARMS = {"with": "with_skill", "without": "without_skill"}
"""A check's ``arm`` (``with``, ``without``; ``both`` when absent) as the arm it runs on."""


def _checks_table(item: Mapping[str, Any]) -> str:
    """Each outcome check: what it asks, what sets it apart (a veto, an indicator, its
    weight), and how many runs of each arm passed it, coloured for the with-skill arm (the
    baseline's counts are plain)."""
    described = {
        str(check.get("name")): check
        for check in about_of(item).get("checks") or []
        if isinstance(check, Mapping)
    }
    passed: dict[str, Counter[str]] = {}
    evaluated: dict[str, Counter[str]] = {}
    for run in item.get("runs") or []:
        for check in run.get("checks") or []:
            if not isinstance(check, Mapping) or check.get("error"):
                continue
            name = str(check.get("name"))
            described.setdefault(name, check)
            evaluated.setdefault(name, Counter())[str(run.get("arm"))] += 1
            passed.setdefault(name, Counter())[str(run.get("arm"))] += bool(check.get("passed"))
    if not described:
        return ""
    arms = [arm for arm in ("with_skill", "without_skill") if isinstance(item.get(arm), Mapping)]
    rows = []
    for name, check in described.items():
        only = CHECK_ARMS.get(str(check.get("arm")))
        indicator = check.get("scored") is False
        cells = []
        for arm in arms:
            runs = evaluated.get(name, Counter())[arm]
            good = passed.get(name, Counter())[arm]
            if only is not None and arm != only:
                cells.append('<td class="note">not run on this arm</td>')
                continue
            if not runs:
                cells.append("<td>-</td>")
                continue
            missed = WARN if indicator else BAD
            tone = GOOD if good == runs else missed if not good else WARN
            # The baseline is the yardstick: what it passes or misses is no news by itself.
            shown = chip(f"{good}/{runs} passed", tone if arm == "with_skill" else PLAIN)
            cells.append(f"<td>{shown}</td>")
        what = check.get("what")
        rows.append(
            f'<tr><td><span class="check-name">{e(name)}</span>{check_marks(check)}'
            + (f'<br><span class="note">{e(what)}</span>' if what and what != name else "")
            + "</td>"
            + "".join(cells)
            + "</tr>"
        )
    head = "".join(f"<th>{e(ARM_LABELS[arm])}</th>" for arm in arms)
    return (
        '<h4 class="checks-head">outcome checks</h4><div class="scroll">'
        f'<table class="checks"><tr><th>check</th>{head}</tr>{"".join(rows)}</table></div>'
    )


def expectations(layer: str, item: Mapping[str, Any]) -> str:
    """The block "What is expected" of a scenario's runs (a trigger query's: fire or not)."""
    head = "<h4>What is expected</h4>"
    if layer == "triggers":
        should = item.get("should_trigger")
        text = "the skill fires" if should else "the skill does not fire"
        return f'<div class="expect">{head}{_dl([("expected", e(text))])}</div>'
    if not about_of(item):
        return (
            f'<div class="expect">{head}<p class="note">not recorded in this results file '
            "(written by an older skilltest)</p></div>"
        )
    body = _pressure_expected(item) if layer == "pressure" else _scenario_expected(item)
    return f'<div class="expect">{head}{body}</div>'
