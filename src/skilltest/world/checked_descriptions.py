"""The API descriptions ``openapi-spec-validator`` has already passed, kept in skilltest's cache.

Checking a description is a pure function of its content and of the validating libraries
installed, and costs a fifth of a second (their import included) for a small file. A description
that passed is recorded under a digest of both; the next check of the same content, with the same
libraries, passes without running them. A description that failed is never recorded: its errors
come from the validator every time, in its words. A new version of any validating library (its
``*.dist-info`` folder's name), or any change to the description, is another digest.

The record is an empty file, ``<cache>/openapi-checked/<sha256>``: a cache folder that cannot be
written (or read) costs the check, never the answer.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from functools import cache
from pathlib import Path
from typing import Any

VALIDATING = (
    "openapi_spec_validator",
    "openapi_schema_validator",
    "jsonschema",
    "jsonschema_path",
    "jsonschema_specifications",
    "referencing",
)
"""The libraries whose versions decide whether a description is valid."""


def passed(document: Any) -> bool:
    """Whether this description, exactly, passed the installed validator before."""
    record = _record(document)
    return record is not None and record.is_file()


def remember(document: Any) -> None:
    """Records that this description passed the installed validator."""
    record = _record(document)
    if record is None:
        return
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        record.touch()
    except OSError:
        pass  # an unwritable cache: the next check runs the validator again


def _record(document: Any) -> Path | None:
    """Where the record of ``document`` is, or ``None`` when the installed validators cannot be
    told apart from others (a library not found, or without its ``dist-info``)."""
    libraries = _installed()
    if libraries is None:
        return None
    from skilltest.claude.binary import cache_dir

    # repr tells apart what the YAML held (a date from its text, 1 from 1.0 and from True) and
    # keeps the order of the keys, which decides the order the validator reports in.
    digest = hashlib.sha256(f"{libraries}\n{document!r}".encode()).hexdigest()
    return cache_dir() / "openapi-checked" / digest


@cache
def _installed() -> str | None:
    """The validating libraries as installed: the name (with the version) of each one's
    ``dist-info`` folder and where it lies, found without importing them."""
    found = []
    for name in VALIDATING:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(next(iter(spec.submodule_search_locations))).parent
        try:
            infos = sorted(
                entry
                for entry in os.listdir(folder)
                if entry.endswith(".dist-info")
                and entry.removesuffix(".dist-info").rpartition("-")[0].lower().replace(".", "_")
                == name
            )
        except OSError:
            return None
        if len(infos) != 1:
            return None
        found.append(f"{folder / infos[0]}")
    return "\n".join(found)
