"""A dataclass's fields taken together, in declaration order: as a plain dict, and summed
field by field. Pure.

Unlike :func:`dataclasses.asdict`, nothing is copied or converted: a field that holds a
dataclass, a list or a mapping is given as it is.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    Record = TypeVar("Record", bound=DataclassInstance)


def field_dict(record: DataclassInstance) -> dict[str, Any]:
    """``record``'s fields by name, in the order the class declares them."""
    return {field.name: getattr(record, field.name) for field in fields(record)}


def field_sum(record: Record, other: Record) -> Record:
    """A record of ``record``'s type whose every field is ``record``'s plus ``other``'s."""
    return type(record)(
        **{
            field.name: getattr(record, field.name) + getattr(other, field.name)
            for field in fields(record)
        }
    )
