"""Minimal results documents of each layer, as ``--results`` writes them (the fields reports
and the gate read), for report, gate and revision tests."""

import json
from pathlib import Path
from typing import Any


def provenance(layer: str, backend: str = "claude") -> dict[str, Any]:
    """A live run's provenance, as results files record it."""
    return {
        "run_id": "a1b2c3d4e5f6",
        "origin": "live",
        "backend": backend,
        "recorded_with": [],
        "models": ["claude-sonnet-4-5-20250929"],
        "model_requested": None,
        "claude_version": None if backend == "anthropic" else "2.1.328",
        "skilltest_version": "0.1.0",
        "started_at": "2026-12-01T09:00:00Z",
        "suites": [{"path": f"tests/{layer}/lgtm.yaml", "sha256": "sha256:" + "0123456789ab" * 5}],
        "command": ["skilltest", layer, "lgtm"],
        "answered_by": [
            {"endpoint": "api", "base_url": "https://api.anthropic.com", "emulator": None}
        ],
    }


def produced_by(layer: str, backend: str = "claude") -> str:
    """The Markdown summary's line for :func:`provenance`."""
    cli = "-" if backend == "anthropic" else "2.1.328"
    return (
        f"produced by: backend {backend}; model claude-sonnet-4-5-20250929; claude CLI {cli}; "
        f"skilltest 0.1.0; date 2026-12-01T09:00:00Z; suites `tests/{layer}/lgtm.yaml "
        f"sha256:0123456789ab`; command `skilltest {layer} lgtm`; run id a1b2c3d4e5f6"
    )


def scenario(
    id: str,
    verdict: str,
    passed: bool,
    with_mean: tuple[float, float, float],
    without_mean: tuple[float, float, float] | None,
    delta: tuple[float, float, float] | None,
    *,
    reasons: tuple[str, ...] = (),
    skill: str = "lgtm",
    transcripts: bool = True,
) -> dict[str, Any]:
    def arm(mean: tuple[float, float, float] | None) -> dict[str, Any] | None:
        if mean is None:
            return None
        return {
            "runs": 2,
            "scored": 2,
            "mean_score": mean[0],
            "ci_low": mean[1],
            "ci_high": mean[2],
        }

    runs = [
        {
            "arm": arm_name,
            "rep": rep,
            "transcript": f"output/{id}/{arm_name.replace('_', '-')}-{rep}.ndjson",
        }
        for rep in (0, 1)
        for arm_name in ("with_skill", "without_skill")
    ]
    return {
        "id": id,
        "skill": skill,
        "verdict": verdict,
        "passed": passed,
        "delta": None if delta is None else delta[0],
        "delta_ci": None if delta is None else [delta[1], delta[2]],
        "k": 2,
        "reasons": list(reasons),
        "with_skill": arm(with_mean),
        "without_skill": arm(without_mean),
        "runs": runs if transcripts else [],
    }


IMPROVED = scenario(
    "investigate-error-spike",
    "improved",
    True,
    (1.0, 0.34, 1.0),
    (0.0, 0.0, 0.66),
    (1.0, 0.07, 1.0),
)
"""A passing scenario with a transcript per run, as most report tests need one."""


def results_document(layer: str, *scenarios: dict[str, Any], complete: bool) -> dict[str, Any]:
    """The file a ``layer`` run writes; ``complete=False`` is what an interrupted run leaves."""
    return {
        "schema_version": 3,
        "layer": layer,
        "complete": complete,
        "interrupted": not complete,
        "provenance": provenance(layer, "anthropic" if layer == "pressure" else "claude"),
        # A copy: a test that changes its document leaves the shared scenarios as they are.
        "scenarios": json.loads(json.dumps(list(scenarios))),
    }


def scenarios_document(*scenarios: dict[str, Any], complete: bool = True) -> dict[str, Any]:
    return results_document("scenarios", *scenarios, complete=complete)


def pressure_document(*scenarios: dict[str, Any], complete: bool = True) -> dict[str, Any]:
    return results_document("pressure", *scenarios, complete=complete)


def write_results(path: Path, document: dict[str, Any]) -> Path:
    """Writes ``document`` as a results file at ``path``."""
    path.write_text(json.dumps(document))
    return path


def pressure_scenario(
    id: str,
    verdict: str,
    passed: int,
    red: int,
    k: int,
    lift: tuple[float, float, float],
    detail: str = "",
) -> dict[str, Any]:
    from skilltest.stats import wilson

    rate, red_rate = wilson(passed, k), wilson(red, k)
    return {
        "id": id,
        "skill": "lgtm",
        "verdict": verdict,
        "detail": detail,
        "k": k,
        "lift": lift[0],
        "lift_ci": [lift[1], lift[2]],
        "with_skill": {
            "runs": k,
            "passed": passed,
            "pass_rate": rate.value,
            "ci_low": rate.low,
            "ci_high": rate.high,
        },
        "without_skill": {
            "runs": k,
            "red": red,
            "red_rate": red_rate.value,
            "ci_low": red_rate.low,
            "ci_high": red_rate.high,
        },
    }


def triggers_document() -> dict[str, Any]:
    """Two queries of six runs each, as the trigger layer writes them: one that fired in every
    run and should (``pass``), one that fired in every run and should not (``false-trigger``),
    each decided by the exact interval of its rate."""
    from skilltest.triggers.suite import TriggerQuery
    from skilltest.triggers.verdict import QueryResult, TriggerRun

    def query(qid: str, should: bool, transcript: str | None = None) -> dict[str, Any]:
        runs = tuple(
            TriggerRun(rep=i, ended="fired", transcript=transcript if i == 0 else None)
            for i in range(6)
        )
        where = f"tests/triggers/lgtm.yaml#/queries/{qid}"
        return QueryResult(TriggerQuery(qid, f"query {qid}", should, where), runs, 0.5).to_dict()

    return {
        "schema_version": 3,
        "layer": "triggers",
        "complete": True,
        "provenance": provenance("triggers"),
        "suites": [
            {
                "skill": "lgtm",
                "variant": "current",
                "threshold": 0.5,
                "queries": [
                    query("loki-error-spike", True),
                    query(
                        "capital-of-france", False, "output/capital-of-france/with-skill-0.ndjson"
                    ),
                ],
            }
        ],
    }
