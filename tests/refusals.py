"""What a loader says when it refuses a file: the message a person acts on, checked whole."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skilltest.errors import InputError


def refusal(
    load: Callable[[Path], object], path: Path, error: type[InputError] = InputError
) -> str:
    """The message of the ``error`` that ``load(path)`` must raise."""
    with pytest.raises(error) as caught:
        load(path)
    return str(caught.value)
