"""A plugin's hooks: ``hooks/hooks.json`` and the manifest's ``hooks``, checked against the
hook events and hook types of Claude Code 2.1.328."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skilltest.errors import PluginError
from skilltest.plugins.json_file import read_json
from skilltest.suite.loader import load_schema, validate

HOOK_EVENTS: tuple[str, ...] = tuple(load_schema("hooks")["$defs"]["hooksByEvent"]["properties"])
"""The events a hook can run on (read from the shipped ``hooks.schema.json``)."""


def check_hooks_file(path: Path) -> dict[str, Any]:
    """Reads and validates a hooks file (``{"hooks": {"<Event>": [...]}}``).

    Raises:
        PluginError: unreadable or malformed JSON, an unknown event (with the closest known
            one), a hook without ``type`` or a command hook without ``command``.
    """
    data = read_json(path)
    validate(data, "hooks", path, PluginError)
    return data if isinstance(data, dict) else {}


def check_inline_hooks(hooks: object, manifest: Path, pointer: str) -> None:
    """Validates hooks written in ``plugin.json`` itself (an object of hooks by event).

    Args:
        hooks: The object.
        manifest: The ``plugin.json`` that holds it.
        pointer: Where it is in the manifest (``/hooks`` or ``/hooks/2``).

    Raises:
        PluginError: as :func:`check_hooks_file`, at the place in ``plugin.json``.
    """
    try:
        validate({"hooks": hooks}, "hooks", manifest, PluginError)
    except PluginError as exc:
        # The wrapper puts the object at /hooks; its real place may be /hooks/<index>.
        location = exc.location or str(manifest)
        head, _, rest = location.partition("#/hooks")
        message = exc.message.replace("#/hooks", f"#{pointer}")
        raise PluginError(message, location=f"{head}#{pointer}{rest}", fix=exc.fix) from None
