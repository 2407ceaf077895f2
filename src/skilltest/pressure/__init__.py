"""The skill-pressure layer: one turn, no tools, with and without the skill, judged by regex.

The entry point is :func:`run` (``skilltest.pressure.run(options)``), which takes
:class:`PressureOptions` and returns :class:`PressureResults`. They are loaded on first use:
importing one module of the layer does not load the whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.pressure.layer import PressureOptions, PressureResults, run

__all__ = ["PressureOptions", "PressureResults", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from skilltest.pressure import layer

        return getattr(layer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
