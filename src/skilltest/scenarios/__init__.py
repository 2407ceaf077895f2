"""The scenario layer: multi-turn runs of the real claude CLI, with and without the skill.

The entry point is :func:`run` (``skilltest.scenarios.run(options)``), which takes
:class:`ScenarioOptions` and returns :class:`ScenarioResults`. They are loaded on first use:
importing one module of the layer does not load the whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skilltest.flow.lazy import lazy_attributes

if TYPE_CHECKING:
    from skilltest.scenarios.layer import ScenarioOptions, ScenarioResults, estimate, run

__all__ = ["ScenarioOptions", "ScenarioResults", "estimate", "run"]
__getattr__ = lazy_attributes(__name__, "layer", __all__)
