"""Minimal results documents of each layer, as ``--results`` writes them (the fields reports
read), for report tests."""

from typing import Any


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


def scenarios_document(*scenarios: dict[str, Any], complete: bool = True) -> dict[str, Any]:
    return {
        "schema_version": 3,
        "layer": "scenarios",
        "complete": complete,
        "interrupted": not complete,
        "scenarios": list(scenarios),
    }


def pressure_document(*scenarios: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": 3,
        "layer": "pressure",
        "complete": True,
        "scenarios": list(scenarios),
    }


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
    return {
        "schema_version": 3,
        "layer": "triggers",
        "complete": True,
        "suites": [
            {
                "skill": "lgtm",
                "variant": "current",
                "queries": [
                    {
                        "id": "loki-error-spike",
                        "should_trigger": True,
                        "fired": 3,
                        "scored": 3,
                        "total": 3,
                        "rate": 1.0,
                        "ci_low": 0.4385,
                        "ci_high": 1.0,
                        "passed": True,
                        "result": "pass",
                        "runs": [],
                    },
                    {
                        "id": "capital-of-france",
                        "should_trigger": False,
                        "fired": 2,
                        "scored": 3,
                        "total": 3,
                        "rate": 2 / 3,
                        "ci_low": 0.2077,
                        "ci_high": 0.9385,
                        "passed": False,
                        "result": "false-trigger",
                        "runs": [
                            {"rep": 0, "transcript": "output/capital-of-france/with-skill-0.ndjson"}
                        ],
                    },
                ],
            }
        ],
    }
