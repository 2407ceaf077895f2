"""Names a package gives from one of its modules, imported on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any


def lazy_attributes(package: str, module: str, names: Sequence[str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package`` that imports ``package.module`` the first
    time one of ``names`` is asked for, so importing the package stays cheap."""

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(f"{package}.{module}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
