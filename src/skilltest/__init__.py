"""skilltest: does an agent skill really change how a model behaves?

The Python API, for pytest, notebooks and scripts; the command line is a thin layer over it::

    from pathlib import Path
    import skilltest

    results = skilltest.pressure.run(
        skilltest.PressureOptions(suites=(Path("tests/skill-pressure/lgtm.yaml"),), repeat=5)
    )
    for scenario in results.scenarios:
        print(scenario.scenario.id, scenario.verdict)

Each layer has one entry point that takes its options and returns its results:
``skilltest.pressure.run`` (:class:`PressureOptions` -> :class:`PressureResults`),
``skilltest.scenarios.run`` (:class:`ScenarioOptions` -> :class:`ScenarioResults`) and
``skilltest.triggers.run`` (:class:`TriggerOptions` -> :class:`TriggerResults`). The files a run
writes are its options' :class:`Outputs`; :func:`write_outputs` writes them again from results.
Bad input raises :class:`InputError` (with the file, the place and the fix), an environment that
cannot run the suites :class:`ConfigurationError`; both derive from :class:`SkilltestError`.

Stability: the names in ``__all__`` are the API. Within a minor version they keep working as
documented; a change to them is named in the release notes, and a name to be removed first
warns for one minor version. Everything else (the modules below ``skilltest``) may change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from skilltest import pressure, scenarios, triggers
    from skilltest.errors import ConfigurationError, InputError, SkilltestError
    from skilltest.flow.options import Observer
    from skilltest.flow.shard import Shard
    from skilltest.pressure.layer import PressureOptions, PressureResults
    from skilltest.report.outputs import Outputs, write_outputs
    from skilltest.scenarios.layer import ScenarioOptions, ScenarioResults
    from skilltest.triggers.layer import TriggerOptions, TriggerResults

_API: dict[str, str] = {
    "pressure": "skilltest.pressure",
    "scenarios": "skilltest.scenarios",
    "triggers": "skilltest.triggers",
    "PressureOptions": "skilltest.pressure.layer",
    "PressureResults": "skilltest.pressure.layer",
    "ScenarioOptions": "skilltest.scenarios.layer",
    "ScenarioResults": "skilltest.scenarios.layer",
    "TriggerOptions": "skilltest.triggers.layer",
    "TriggerResults": "skilltest.triggers.layer",
    "Outputs": "skilltest.report.outputs",
    "write_outputs": "skilltest.report.outputs",
    "Observer": "skilltest.flow.options",
    "Shard": "skilltest.flow.shard",
    "SkilltestError": "skilltest.errors",
    "InputError": "skilltest.errors",
    "ConfigurationError": "skilltest.errors",
}
"""Where each name of the API is defined; each is imported on first use."""

__all__ = [
    "ConfigurationError",
    "InputError",
    "Observer",
    "Outputs",
    "PressureOptions",
    "PressureResults",
    "ScenarioOptions",
    "ScenarioResults",
    "Shard",
    "SkilltestError",
    "TriggerOptions",
    "TriggerResults",
    "__version__",
    "pressure",
    "scenarios",
    "triggers",
    "write_outputs",
]


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _API:
        raise AttributeError(f"module 'skilltest' has no attribute {name!r}")
    module = importlib.import_module(_API[name])
    return module if module.__name__ == f"skilltest.{name}" else getattr(module, name)
