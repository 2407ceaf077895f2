"""The trigger layer: does the skill's description make it fire when it should, and only then?

The entry point is :func:`run` (``skilltest.triggers.run(options)``), which takes
:class:`TriggerOptions` and returns :class:`TriggerResults`. They are loaded on first use: importing
one module of the layer does not load the whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skilltest.triggers.layer import TriggerOptions, TriggerResults, run

__all__ = ["TriggerOptions", "TriggerResults", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from skilltest.triggers import layer

        return getattr(layer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
