"""Model-graded checks: a judge reads the run and votes pass or fail against the criteria.

A ``judge`` check makes ``votes`` independent calls (default 3) with the same request; each
answer is one line of JSON, ``{"verdict": "pass" | "fail", "reason": "..."}`` (a first word
PASS or FAIL is read too). The majority of the votes cast decides, a tie fails, and the
agreement (the winning share) and a split vote are reported. An answer that says neither is no
vote; a judge whose every call failed (the API down) leaves the run unscored, as an outage
would.

The judge asks through the run's own endpoint (the ``ANTHROPIC_BASE_URL`` and key the agent ran
with): offline the emulator answers from the suite's model script (a rule can match the judge's
system prompt, which starts with :data:`JUDGE_MARK`), a recording run records the votes into
the run's cassette and a replay answers them from it, live it is the real API with
``--judge-model``. Its tokens and cost are counted apart from the agent's. It is never shown
which arm the run belongs to, nor what only the arm with the skill can do (``Skill`` calls,
reads of the skill's files).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from skilltest.checks.model import CheckResult, Judge, Vote
from skilltest.transcript import Usage

if TYPE_CHECKING:
    from skilltest.checks.evaluate import RunView
    from skilltest.runners.base import TurnRequest, TurnRunner

JUDGE_MARK = "You are the skilltest judge."
"""How the judge's system prompt begins: what a model script's rule matches judge requests by
(``when: {system: "skilltest judge"}``)."""

SYSTEM = (
    f"{JUDGE_MARK} You read what one run of an AI agent produced and decide whether it meets "
    "the criteria. Be strict: a criterion the text does not show is not met. Answer with one "
    'line of JSON and nothing else: {"verdict": "pass" or "fail", "reason": "<one sentence>"}.'
)

MAX_TOKENS = 400
"""The longest judge answer asked for."""
CONTENT_CHARS = 60_000
"""The most of a run the judge is shown (the start: the rest is cut, and said so)."""

_VERDICT = re.compile(r'"verdict"\s*:\s*"(pass|fail)"', re.IGNORECASE)
_FIRST_WORD = re.compile(r"^\W*(pass|fail)\b", re.IGNORECASE)


@dataclass(frozen=True)
class JudgeModel:
    """Who judges: a one-turn runner and the model it asks for."""

    runner: TurnRunner
    """Answers one request (through the run's endpoint)."""
    model: str
    """The judge model (``--judge-model``)."""


def judge_runner(env: Mapping[str, str], *, claude: Path | None = None) -> TurnRunner:
    """A runner that asks the model the agent ran with: the SDK with the run's base URL and
    key, or, when the run has only a Claude Code OAuth token, the ``claude`` CLI for one turn."""
    if _uses_the_sdk(env):
        from skilltest.runners.anthropic_api import AnthropicRunner

        return AnthropicRunner(
            backend="judge",
            api_key=env.get("ANTHROPIC_API_KEY") or None,
            auth_token=env.get("ANTHROPIC_AUTH_TOKEN") or None,
            base_url=env.get("ANTHROPIC_BASE_URL") or None,
            max_retries=2,
        )
    from skilltest.runners.claude_turn import ClaudeTurnRunner

    return ClaudeTurnRunner(claude=claude, env=dict(env), max_retries=2)


def _uses_the_sdk(env: Mapping[str, str]) -> bool:
    """Whether a judge asks through the SDK (an API key or an auth token), not the CLI."""
    return bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"))


class ModelRunners:
    """The one-turn runners a command's judges and agent responders ask through: one per
    endpoint (base URL and credentials), opened on first use and kept for every run of the
    command, so that each run does not pay for a client, its SSL context and its connections.
    """

    def __init__(self, *, claude: Path | None = None) -> None:
        """
        Args:
            claude: The ``claude`` binary, for a run that has only an OAuth token.
        """
        self.claude = claude
        self._runners: dict[tuple[str, ...], TurnRunner] = {}
        self._loop: object = None

    async def runner(self, env: Mapping[str, str]) -> TurnRunner:
        """The runner of the endpoint ``env`` names (:func:`judge_runner`), kept for reuse; the
        SDK it needs is imported off the event loop (:mod:`skilltest.runners.sdk`) first."""
        import asyncio

        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A client's connections belong to the loop that opened them: another loop (the
            # wiring check runs on its own) opens its own.
            self._runners, self._loop = {}, loop
        key = tuple(
            env.get(name, "")
            for name in (
                "ANTHROPIC_BASE_URL",
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
            )
        )
        if key not in self._runners:
            if _uses_the_sdk(env):
                from skilltest.runners.sdk import sdk_imported

                await sdk_imported()
            if key not in self._runners:  # another run may have opened it meanwhile
                self._runners[key] = judge_runner(env, claude=self.claude)
        return self._runners[key]

    async def aclose(self) -> None:
        """Closes every runner opened on the running loop."""
        runners, self._runners = list(self._runners.values()), {}
        for runner in runners:
            await runner.aclose()


def content(check: Judge, view: RunView) -> tuple[str, str]:
    """What the judge reads, and how the prompt names it."""
    from skilltest.checks.evaluate import inside, read_text, trace_text

    if check.focus == "trace":
        return "The run (tool calls, their results, the agent's answers)", trace_text(
            view.transcript, blind=True
        )
    if check.focus == "mock_calls":
        return "The calls the run made to mocked tools", view.mock_calls or "(none)"
    if check.focus == "files":
        parts = []
        for relative in view.changed_files():
            path = inside(view.workdir, relative)
            if path is not None:
                parts.append(f"--- {relative}\n{read_text(path)}")
        return "The files the run created or changed", "\n".join(parts) or "(none)"
    if check.focus == "file":
        assert check.focus_path is not None
        path = inside(view.workdir, check.focus_path)
        text = read_text(path) if path is not None and path.is_file() else "(the file is missing)"
        return f"The file {check.focus_path}", text
    return "The agent's final answer", view.transcript.final_answer or "(no answer)"


def judge_prompt(check: Judge, view: RunView) -> str:
    """The user message of every vote: the criteria, then what the focus shows."""
    label, text = content(check, view)
    if len(text) > CONTENT_CHARS:
        text = text[:CONTENT_CHARS] + f"\n… [cut: {len(text) - CONTENT_CHARS} more characters]"
    parts = [f"Criteria:\n{check.criteria}"]
    if check.baseline is not None:
        parts.append(
            f"A reference answer to compare with:\n<reference>\n{check.baseline}\n</reference>"
        )
    parts.append(f"{label}:\n<run>\n{text}\n</run>")
    parts.append("Does the run meet the criteria? Answer with the one line of JSON.")
    return "\n\n".join(parts)


def parse_vote(text: str) -> Vote:
    """One answer as a vote; neither pass nor fail is no vote."""
    stripped = text.strip()
    found = _VERDICT.search(stripped) or _FIRST_WORD.search(stripped)
    if found is None:
        shown = stripped[:120] or "(empty)"
        return Vote(None, f"no verdict in the answer: {shown!r}")
    reason = ""
    try:
        data = json.loads(stripped[stripped.find("{") : stripped.rfind("}") + 1])
        reason = str(data.get("reason") or "") if isinstance(data, dict) else ""
    except (ValueError, RecursionError):
        reason = stripped[:200]
    return Vote("pass" if found.group(1).lower() == "pass" else "fail", reason)


def plugin_eval_request(check: Judge, view: RunView) -> tuple[str | None, str]:
    """The user message of a ``plugin_eval`` judge's votes, as Claude Code's plugin eval writes
    it, or ``None`` and why the run cannot be judged (a focus file that is missing)."""
    from skilltest.checks import plugin_eval
    from skilltest.checks.evaluate import NO_MOCKS, read_focus_file

    if check.baseline_trace is not None:
        return plugin_eval.baseline_prompt(check.criteria, check.baseline_trace, view.events), ""
    focus = check.focus
    if focus == "trace":
        text = plugin_eval.elided_trace(view.events)
    elif focus == "files":
        text = "\n".join(view.created_files()) or "(no file changes)"
    elif focus == "mock_calls":
        if not view.mocks_active:
            return None, NO_MOCKS
        text = view.mock_calls or "(no mocked tool calls)"
    elif focus == "file":
        assert check.focus_path is not None
        found, why = read_focus_file(view, check.focus_path)
        if found is None:
            return None, why
        text, focus = found, f"file {check.focus_path}"
    else:
        text = plugin_eval.last_message(view.events)
    return plugin_eval.llm_prompt(check.criteria, focus, text), ""


async def _plugin_eval_check(check: Judge, view: RunView, judge: JudgeModel) -> CheckResult:
    """Asks as the CLI does: its prompt, each vote PASS when the answer says PASS and not FAIL,
    a strict majority passing."""
    from skilltest.checks import plugin_eval
    from skilltest.runners.base import TurnRequest

    prompt, why = plugin_eval_request(check, view)
    if prompt is None:
        return replace(_unjudged(check), evidence=why)
    request = TurnRequest(
        prompt=prompt, system=plugin_eval.JUDGE_SYSTEM, model=judge.model, max_tokens=MAX_TOKENS
    )
    result = await _ask(check, judge, request, _plugin_eval_vote)
    if result.error is not None:
        return result
    votes = result.votes
    passes = sum(1 for v in votes if v.verdict == "pass")
    shown = " ".join("PASS" if v.verdict == "pass" else "FAIL" for v in votes)
    return replace(result, passed=passes > check.votes / 2, evidence=f"judge votes: {shown}")


def _plugin_eval_vote(text: str) -> Vote:
    from skilltest.checks import plugin_eval

    return Vote("pass" if plugin_eval.vote(text) else "fail", text.strip()[:200])


def _unjudged(check: Judge) -> CheckResult:
    """A judge check's result before any vote: not passed, no evidence."""
    return CheckResult(
        name=check.name,
        kind=check.kind,
        passed=False,
        evidence="",
        veto=check.veto,
        weight=check.weight,
        scored=check.scored,
    )


async def _ask(
    check: Judge, judge: JudgeModel, request: TurnRequest, read: Callable[[str], Vote]
) -> CheckResult:
    """Sends ``request`` to the judge ``check.votes`` times: the check's result with the votes
    (each ``read`` from its answer; a failed call's is no verdict), their tokens and cost, not
    yet decided; with an error when every call failed."""
    import asyncio

    votes: list[Vote] = []
    usage, cost, errors = Usage(), 0.0, []
    # The votes are independent: asked side by side, they take the time of one.
    answers = await asyncio.gather(*(judge.runner.run_turn(request) for _ in range(check.votes)))
    for answer in answers:
        usage = usage + answer.usage
        cost += answer.cost_usd or 0.0
        if answer.error is not None:
            errors.append(answer.error)
            votes.append(Vote(None, f"the call failed: {answer.error}"))
        else:
            votes.append(read(answer.text))
    result = replace(
        _unjudged(check),
        votes=tuple(votes),
        tokens={"input": usage.input_tokens, "output": usage.output_tokens},
        cost_usd=cost or None,
    )
    if len(errors) == check.votes:
        return replace(result, error=f"every judge call failed: {errors[0]}")
    return result


async def judge_check(check: Judge, view: RunView, judge: JudgeModel) -> CheckResult:
    """Asks the judge ``check.votes`` times and decides by the majority of the votes cast."""
    from skilltest.runners.base import TurnRequest

    if check.dialect == "plugin_eval":
        return await _plugin_eval_check(check, view, judge)

    request = TurnRequest(
        prompt=judge_prompt(check, view), system=SYSTEM, model=judge.model, max_tokens=MAX_TOKENS
    )
    result = await _ask(check, judge, request, parse_vote)
    if result.error is not None:
        return result
    votes = result.votes
    passes = sum(1 for vote in votes if vote.verdict == "pass")
    fails = sum(1 for vote in votes if vote.verdict == "fail")
    cast = passes + fails
    agreement = max(passes, fails) / cast if cast else 0.0
    split = " (split vote)" if passes and fails else ""
    evidence = f"{passes} pass, {fails} fail of {check.votes} vote(s){split}; agreement "
    evidence += f"{agreement:.0%}"
    if cast < check.votes:
        evidence += f"; {check.votes - cast} gave no verdict"
    reasons = [vote.reason for vote in votes if vote.verdict is not None and vote.reason]
    if reasons:
        evidence += f"; e.g. {reasons[0]!r}"
    return replace(result, passed=passes > fails, evidence=evidence)
