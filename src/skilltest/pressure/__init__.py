"""The skill-pressure layer: one turn, no tools, with and without the skill, judged by regex.

The entry point is :func:`run` (``skilltest.pressure.run(options)``), which takes
:class:`PressureOptions` and returns :class:`PressureResults`. They are loaded on first use:
importing one module of the layer does not load the whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skilltest.flow.lazy import lazy_attributes

if TYPE_CHECKING:
    from skilltest.pressure.layer import PressureOptions, PressureResults, estimate, run

__all__ = ["PressureOptions", "PressureResults", "estimate", "run"]
__getattr__ = lazy_attributes(__name__, "layer", __all__)
