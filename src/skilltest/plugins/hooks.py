"""A plugin's hooks: ``hooks/hooks.json`` and the manifest's ``hooks``, checked against the
hook events and hook types of Claude Code 2.1.328."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Sequence
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


CONFINE_SCRIPT = Path(__file__).with_name("confine.py")
"""The launcher each confined hook starts through (:mod:`skilltest.plugins.confine`)."""


def confined_command(command: str, folder: Path) -> str:
    """A hook's shell command, run so that it writes only under ``folder``.

    The command still runs in a shell of its own, with the variables Claude Code gives hooks
    (``$CLAUDE_PROJECT_DIR``, ``${CLAUDE_PLUGIN_ROOT}``) expanded there as before.
    """
    launcher = [sys.executable, "-I", str(CONFINE_SCRIPT), str(folder), "--", "/bin/sh", "-c"]
    return " ".join(shlex.quote(part) for part in (*launcher, command))


def confine_hooks(copy: Path, hook_files: Sequence[Path], root: Path, folder: Path) -> None:
    """Rewrites the command hooks of a plugin's copy to write only under ``folder``.

    Args:
        copy: The copy of the plugin a run loads.
        hook_files: The plugin's hooks files (under ``root``), found in the copy at the same place.
        root: The plugin's own folder.
        folder: Where the hooks may write (the run's sandbox).
    """
    manifest = copy / ".claude-plugin" / "plugin.json"
    files = [copy / path.relative_to(root) for path in hook_files if path.is_relative_to(root)]
    for path in (*files, manifest):
        if not path.is_file():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "hooks" in data:
            data["hooks"] = _confined(data["hooks"], folder)
            path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _confined(node: Any, folder: Path) -> Any:
    if isinstance(node, list):
        return [_confined(each, folder) for each in node]
    if not isinstance(node, dict):
        return node  # a manifest's path to a hooks file: rewritten as that file
    if node.get("type") == "command" and isinstance(node.get("command"), str):
        return {**node, "command": confined_command(node["command"], folder)}
    return {key: _confined(value, folder) for key, value in node.items()}
