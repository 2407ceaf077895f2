"""The scenario layer: multi-turn runs of the real claude CLI, with and without the skill.

The entry point is :func:`run` (``skilltest.scenarios.run(options)``), which takes
:class:`ScenarioOptions` and returns :class:`ScenarioResults`. They are loaded on first use:
importing one module of the layer does not load the whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.scenarios.layer import ScenarioOptions, ScenarioResults, run

__all__ = ["ScenarioOptions", "ScenarioResults", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from skilltest.scenarios import layer

        return getattr(layer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
