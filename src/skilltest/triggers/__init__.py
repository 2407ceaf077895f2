"""The trigger layer: does the skill's description make it fire when it should, and only then?

The entry point is :func:`run` (``skilltest.triggers.run(options)``), which takes
:class:`TriggerOptions` and returns :class:`TriggerResults`. They are loaded on first use: importing
one module of the layer does not load the whole of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skilltest.flow.lazy import lazy_attributes

if TYPE_CHECKING:
    from skilltest.triggers.layer import TriggerOptions, TriggerResults, estimate, run

__all__ = ["TriggerOptions", "TriggerResults", "estimate", "run"]
__getattr__ = lazy_attributes(__name__, "layer", __all__)
