"""One run as the HTML report shows it: its outcome, and what happened in order.

A run opens on a click (``<details>``, its body made only then:
:func:`~skilltest.report.markup.later`): its outcome as a coloured label (a pressure baseline that
fails is ``RED (as wanted)``, the outcome a pressure test needs), the patterns matched and
missing, each outcome check with what decided it, the vetoes, then the timeline: the user's
turns, the assistant's text, tool calls with their inputs and results, the skill text Claude
Code added, errors, and the HTTP calls the controlled world saw.

``claude -p`` does not echo the user's messages in its stream-json output, so the timeline
places them as ``skilltest show`` does: the prompt first, each follow-up turn after the result
that ended the turn before it (the first :data:`PLACED_LIMIT` characters of each: the scenario
shows them in full, once). A transcript that does hold the user's messages shows those. The
skill text Claude Code adds is a link to the page's one copy of it
(:mod:`skilltest.report.shared`), with the run's own skill folder beside it.

Reads the kept transcript a run names (a regular file only, at most
:data:`TRANSCRIPT_LIMIT` bytes); a transcript that cannot be read is named, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.repetitions import run_number
from skilltest.report.markup import chip, e, file_href, later, pre
from skilltest.report.overview import run_cost
from skilltest.report.plots import bar_chart
from skilltest.report.provenance import duration_text
from skilltest.report.reading import BAD, GOOD, PLAIN, WARN
from skilltest.report.shared import SharedTexts
from skilltest.stats import DIGITS
from skilltest.transcript.stream_json import SKILL_BODY

TRANSCRIPT_LIMIT = 2_000_000
"""Most bytes of one transcript file read."""

ARM_LABELS = {
    "with_skill": "with skill",
    "without_skill": "without skill",
    "previous": "previous revision",
}
"""How the page names each arm (``previous``: the skill at ``--against REF``)."""


def entry(kind: str, css: str, body: str) -> str:
    """One ``<li>`` of a timeline."""
    return f'<li class="{css}"><span class="kind">{e(kind)}</span>{body}</li>'


def _blocks(content: Any) -> list[Mapping[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [block for block in content or [] if isinstance(block, Mapping)]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        str(block.get("text", "")) for block in _blocks(content) if block.get("type") == "text"
    )


def _input_text(value: Any) -> Any:
    """A tool call's input as people read it: a flat object as ``key: value`` lines (a
    command as it was written, not as a JSON string with its quotes escaped); anything
    nested as JSON."""
    if (
        isinstance(value, Mapping)
        and value
        and all(
            isinstance(item, str | int | float | bool) or item is None for item in value.values()
        )
    ):
        return "\n".join(f"{key}: {item}" for key, item in value.items())
    return value


PLACED_LIMIT = 300
"""Most characters of a user's message a run's timeline repeats from the suite: every run of
the scenario was sent the same one, shown in full under "What the user says"."""


def _user_turn(index: int, text: str, *, of: int) -> str:
    kind = "user" if of == 1 else f"user, turn {index + 1} of {of}"
    if len(text) > PLACED_LIMIT:
        text = f"{text[:PLACED_LIMIT]}… (in full under what the user says)"
    return entry(kind, "user", pre(text))


SKILL_TEXT = "skill text added by Claude Code"


def _skill_text(text: str, shared: SharedTexts | None) -> str:
    if shared is not None:
        # The skill's folder differs run to run: it stays in the run, the rest is shared.
        head, body = ("", text)
        if text.startswith(SKILL_BODY):
            head, _, body = text.partition("\n")
        return entry(
            SKILL_TEXT,
            "skill",
            (pre(head) if head else "") + shared.cite(SKILL_TEXT, body.lstrip("\n")),
        )
    return entry(
        SKILL_TEXT,
        "skill",
        f"<details><summary>{len(text):,} characters</summary>{pre(text)}</details>",
    )


def _holds_user_text(events: Sequence[Any]) -> bool:
    """Whether the transcript itself holds the user's messages (not only tool results and the
    skill text Claude Code adds)."""
    for event in events:
        if isinstance(event, Mapping) and event.get("type") == "user":
            if event.get("isSynthetic") or event.get("isMeta"):
                continue
            message = event.get("message")
            content = message.get("content") if isinstance(message, Mapping) else None
            if any(block.get("type") == "text" for block in _blocks(content)):
                return True
    return False


def timeline_of_events(
    events: Sequence[Any], prompts: Sequence[str] = (), shared: SharedTexts | None = None
) -> Iterator[str]:
    """The ``<li>`` entries of a stream-json transcript's timeline, in order, with the user's
    ``prompts`` (the prompt, then each follow-up turn) placed where they were sent when the
    transcript does not hold them; the skill text Claude Code adds is a link to its one copy
    in ``shared`` (folded in place without it)."""
    pending = [] if _holds_user_text(events) else list(prompts)
    sent = 0
    said = ""  # the assistant's last text: a turn's result repeats it
    if pending:
        yield _user_turn(0, pending[0], of=len(prompts))
        sent = 1
    for event in events:
        if not isinstance(event, Mapping):
            continue
        kind = event.get("type")
        raw = event.get("message")
        message: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        if kind == "user":
            synthetic = bool(event.get("isSynthetic") or event.get("isMeta"))
            for block in _blocks(message.get("content")):
                if block.get("type") == "tool_result":
                    css = "error" if block.get("is_error") else "result"
                    label = "tool error" if block.get("is_error") else "tool result"
                    yield entry(label, css, pre(_result_text(block.get("content"))))
                elif block.get("type") == "text" and synthetic:
                    yield _skill_text(str(block.get("text", "")), shared)
                elif block.get("type") == "text":
                    yield entry("user", "user", pre(block.get("text", "")))
        elif kind == "assistant":
            for block in _blocks(message.get("content")):
                if block.get("type") == "text" and str(block.get("text", "")).strip():
                    said = str(block.get("text", ""))
                    yield entry("assistant", "assistant", pre(said))
                elif block.get("type") == "tool_use":
                    yield entry(
                        f"tool call {block.get('name')}",
                        "tool",
                        pre(_input_text(block.get("input", {}))),
                    )
        elif kind == "system" and event.get("subtype") == "api_retry":
            yield entry("API retry", "error", pre(event.get("error") or event))
        elif kind == "result":
            css = "error" if event.get("is_error") else "assistant"
            label = f"result ({event.get('subtype')})"
            text = str(event.get("result") or "")
            yield entry(label, css, "" if text.strip() == said.strip() else pre(text))
            if pending and sent < len(pending):
                yield _user_turn(sent, pending[sent], of=len(prompts))
                sent += 1


def read_events(path: Path) -> tuple[list[Any], str | None]:
    """The events of a kept transcript, or why it could not be read."""
    from skilltest.files import read_head

    try:
        # A regular file only: a results file naming a FIFO or a device cannot stall the report.
        raw = read_head(path, TRANSCRIPT_LIMIT, what="the transcript")
    except InputError as exc:
        return [], f"transcript not readable: {exc}"
    events = []
    for line in raw.decode("utf-8", errors="replace").splitlines():
        try:
            events.append(json.loads(line))
        except (ValueError, RecursionError):
            continue  # a plain-text transcript or a cut-off line: the rest still shows
    return events, None


def world_calls(world: Mapping[str, Any] | None) -> Iterator[str]:
    """The HTTP calls a controlled world's fakes received, then its authority violations."""
    for call in (world or {}).get("calls") or []:
        if not isinstance(call, Mapping):
            continue
        head = " ".join(
            str(call[key])
            for key in ("service", "method", "host", "path", "url", "status")
            if call.get(key)
        )
        yield entry("HTTP", "http", pre(head or call))
    for violation in (world or {}).get("violations") or []:
        yield entry("authority violation", "error", pre(violation))


def numbers(values: Mapping[str, Any]) -> dict[str, float | None]:
    """Component (or split) scores as numbers; ``None`` for one left out."""
    out: dict[str, float | None] = {}
    for name, value in values.items():
        if isinstance(value, Mapping):  # {"score": ..., ...} per component
            value = value.get("score", value.get("mean"))
        out[str(name)] = float(value) if isinstance(value, int | float) else None
    return out


def _split_scores(run: Mapping[str, Any]) -> dict[str, float | None]:
    world = run.get("world")
    if not isinstance(world, Mapping) or not isinstance(world.get("scores"), Mapping):
        return {}
    score = run.get("score")
    return {"tool": float(score) if score is not None else None, **numbers(world["scores"])}


def is_red(run: Mapping[str, Any], rule: str | None) -> bool:
    """Whether a judged pressure baseline run is RED: as the results file says, else (files of
    older versions) by the scenario's ``baseline_red`` rule."""
    if isinstance(run.get("red"), bool):
        return bool(run["red"])
    if rule == "expected_patterns":
        return bool(run.get("expected_matched"))
    return not run.get("passed")


def pressure_outcome(run: Mapping[str, Any], rule: str | None) -> tuple[str, str]:
    """A pressure run's outcome and its tone: a baseline run that fails is RED, as wanted."""
    if run.get("error"):
        return "error", BAD
    if run.get("arm") == "without_skill":
        if is_red(run, rule):
            return "RED (as wanted)", GOOD
        return "not RED: passes without the skill", WARN
    return ("passed", GOOD) if run.get("passed") else ("failed", BAD)


def run_passes(run: Mapping[str, Any], min_score: float | None) -> bool | None:
    """Whether a scored scenario run passes on its own, as the verdict counts it: its score
    reaches ``min_score`` with no veto and no authority violation; ``None`` when the run is
    unscored or the bar is not known."""
    score = run.get("score")
    if not isinstance(score, int | float) or min_score is None:
        return None
    violated = bool(((run.get("world") or {}).get("violations")) or run.get("vetoes"))
    return round(float(score), DIGITS) >= min_score and not violated


def scenario_outcome(run: Mapping[str, Any], min_score: float | None) -> tuple[str, str]:
    """A scenario run's score, whether it passes, and its tone: a with-skill run is good when
    it passes (see :func:`run_passes`); a baseline run's result is neither good nor bad news
    by itself."""
    score = run.get("score")
    if score is None:
        return "unscored", BAD
    shown = f"score {float(score):.2f}"
    if run.get("vetoes"):
        shown += ", vetoed"
    passes = run_passes(run, min_score)
    if passes is not None:
        shown += ", passes" if passes else ", does not pass"
    if run.get("arm") != "with_skill" or passes is None:
        return shown, PLAIN
    return shown, GOOD if passes else BAD


def trigger_outcome(run: Mapping[str, Any], should_trigger: bool | None) -> tuple[str, str]:
    """A trigger run's ending and its tone: firing is good for a should-trigger query."""
    ended = str(run.get("ended") or "-")
    if ended == "error":
        return ended, BAD
    if should_trigger is None:
        return ended, PLAIN
    return ended, GOOD if (ended == "fired") == should_trigger else BAD


def check_marks(check: Mapping[str, Any]) -> str:
    """What sets a check apart, as labels after its name: it vetoes the run, it is an indicator
    (shown, never scored), it counts more or less than the others."""
    marks = []
    if check.get("veto"):
        marks.append(chip("veto", WARN))
    if check.get("scored") is False:
        marks.append(chip("indicator, not scored", PLAIN))
    weight = check.get("weight")
    if isinstance(weight, int | float) and weight != 1 and check.get("scored") is not False:
        marks.append(chip(f"weight {weight:g}", PLAIN))
    return "".join(f" {mark}" for mark in marks)


def _checks(run: Mapping[str, Any]) -> str:
    """Each check of a run with what decided it; a baseline run's results are plain (no news
    by themselves), an indicator's failure a warning (it costs the run nothing)."""
    baseline = run.get("arm") == "without_skill"
    rows = []
    for check in run.get("checks") or []:
        if not isinstance(check, Mapping):
            continue
        if check.get("error"):
            mark = chip("not evaluated", BAD)
        elif check.get("passed"):
            mark = chip("passed", PLAIN if baseline else GOOD)
        else:
            missed = WARN if check.get("scored") is False else BAD
            mark = chip("failed", PLAIN if baseline else missed)
        rows.append(
            f'<tr><td>{mark}</td><td><span class="check-name">{e(check.get("name", ""))}</span>'
            f"{check_marks(check)}</td>"
            f"<td>{pre(check.get('error') or check.get('evidence') or '')}</td></tr>"
        )
    if not rows:
        return ""
    return (
        '<div class="scroll"><table class="checks"><tr><th></th><th>check</th>'
        "<th>what decided it</th></tr>" + "".join(rows) + "</table></div>"
    )


def _meta(run: Mapping[str, Any]) -> str:
    parts = []
    if isinstance(run.get("duration_s"), int | float):
        parts.append(duration_text(float(run["duration_s"])))
    elif isinstance(run.get("latency_ms"), int | float):
        parts.append(duration_text(float(run["latency_ms"]) / 1000))
    cost = run_cost(run)
    if cost is not None:
        parts.append(f"${cost:.4f}")
    return f' <span class="meta">{e(" · ".join(parts))}</span>' if parts else ""


def run_details(
    layer: str,
    run: Mapping[str, Any],
    *,
    cwd: Path,
    item: Mapping[str, Any],
    prompts: Sequence[str],
    link_from: Path | None = None,
    shared: SharedTexts | None = None,
    made_when_opened: bool = True,
) -> str:
    """One run in a ``<details>`` element: its outcome in the summary, then its notes, a link
    to its kept transcript, checks, charts and timeline.

    Args:
        layer: The results file's layer.
        run: The run as the results file lists it.
        cwd: The folder transcript paths are relative to.
        item: The scenario (or trigger query) the run belongs to.
        prompts: The user's messages in order (empty when the results file does not say).
        link_from: The folder of the page: the transcript's link is relative to it
            (``cwd`` when not given).
        shared: The page's shared texts, which the run's skill text joins.
        made_when_opened: Whether the run's body is made only when it opens
            (:func:`~skilltest.report.markup.later`); not inside a body that is itself.
    """
    entries: list[str] = []
    notes: list[str] = []
    raw = item.get("scenario")
    about: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    arm = str(run.get("arm") or "")
    if layer == "pressure":
        rule = (about.get("expected") or {}).get("baseline_red")
        outcome, tone = pressure_outcome(run, rule)
        if prompts:
            entries.append(_user_turn(0, prompts[0], of=1))
        if not run.get("error") or run.get("output"):
            entries.append(entry("assistant", "assistant", pre(run.get("output") or "")))
        for key in ("matched", "missing", "anti_matched"):
            if run.get(key):
                notes.append(f"{key.replace('_', '-')}: {', '.join(map(str, run[key]))}")
    elif layer == "scenarios":
        min_score = about.get("min_score")
        outcome, tone = scenario_outcome(
            run, float(min_score) if isinstance(min_score, int | float) else None
        )
    else:
        should = item.get("should_trigger")
        outcome, tone = trigger_outcome(run, should if isinstance(should, bool) else None)
        if run.get("reason"):
            notes.append(str(run["reason"]))
    events: list[Any] = []
    source = ""
    if run.get("transcript"):
        path = str(run["transcript"])
        target = Path(path)
        events, problem = read_events(target if target.is_absolute() else cwd / target)
        if problem:
            notes.append(problem)
        link = file_href(path, link_from=link_from or cwd, cwd=cwd)
        shown = f'<a href="{link}">{e(path)}</a>' if link else e(path)
        source = f'<p class="note source">transcript: {shown}</p>'
    if events:
        entries.extend(timeline_of_events(events, prompts, shared))
    elif layer != "pressure":  # no transcript to place them in: the turns the run was given
        entries.extend(_user_turn(i, text, of=len(prompts)) for i, text in enumerate(prompts))
    entries.extend(world_calls(run.get("world")))
    for veto in run.get("vetoes") or []:
        entries.append(entry("veto", "error", pre(veto)))
    if run.get("error"):
        entries.append(entry("error", "error", pre(run["error"])))
    if run.get("ended") and layer == "scenarios":  # a trigger run's ending is its outcome
        entries.append(entry("ended", "error", pre(run["ended"])))
    splits = _split_scores(run)
    chart = bar_chart(splits, title="split scores") if len(splits) > 1 else ""
    components = run.get("components")
    if isinstance(components, Mapping) and components:
        # A component the scenario leaves out (no value) is not drawn.
        scored = {name: value for name, value in numbers(components).items() if value is not None}
        chart += bar_chart(scored, title="components")
    note = "".join(f'<p class="note">{e(text)}</p>' for text in notes)
    label = ARM_LABELS.get(arm, arm)
    head = f'<span class="arm">{e(label)}</span> ' if label else ""
    summary = f"{head}run #{e(run_number(layer, run.get('rep')))} {chip(outcome, tone)}{_meta(run)}"
    body = (
        f'<div class="run-body">{note}{source}{_checks(run)}'
        + (f'<div class="charts">{chart}</div>' if chart else "")
        + f'<ol class="timeline">{"".join(entries)}</ol></div>'
    )
    return (
        f'<details class="run"><summary>{summary}</summary>'
        f"{later(body) if made_when_opened else body}</details>"
    )
