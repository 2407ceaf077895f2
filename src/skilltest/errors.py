"""The one exception tree of skilltest.

::

    SkilltestError                  base of everything we raise on purpose
    ├── InputError                  bad input a person must fix; the CLI exits 2
    │   ├── SuiteError              a suite file: unreadable, YAML, schema, duplicate ids
    │   ├── PatternError            a regex that does not compile or exceeds its time limit
    │   ├── SkillNotFoundError      the suite names a skill with no SKILL.md
    │   ├── ModelScriptError        an emulator model script that is not valid
    │   ├── PluginError             a Claude Code plugin folder: manifest, hooks, MCP servers
    │   └── WorldError              a world file (fake services, fixtures, profiles, MCP mocks)
    ├── ConfigurationError          the environment cannot run what was asked; exit 2
    │   ├── CredentialsError        a live backend without credentials
    │   ├── ClaudeNotFoundError     no usable ``claude`` binary
    │   └── McpServerError          an MCP server that does not start or answer its handshake
    └── RunError                    a runner could not execute one run (raised by a runner
                                    instead of returning a transcript); the run is unscored

Runners report a failed run (an API error after retries, a crashed or timed-out CLI) as a
transcript with ``error`` set, not as an exception, so one bad run never stops a suite.
Third-party exceptions are translated where they cross into skilltest (``raise X(...) from exc``).
Every message names the file, the place in it and the fix, so the CLI can print it without a
traceback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class SkilltestError(Exception):
    """Base of every error skilltest raises on purpose."""


class InputError(SkilltestError):
    """Input a person has to fix. ``location`` names the file and the place in it."""

    def __init__(self, message: str, *, location: str | None = None, fix: str | None = None):
        self.message = message
        self.location = location
        self.fix = fix
        super().__init__(self.__str__())

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class SuiteError(InputError):
    """A suite file that cannot be read, parsed or validated."""


class PatternError(InputError):
    """A regular expression that does not compile or takes too long to match."""


class SkillNotFoundError(InputError):
    """A suite names a skill whose SKILL.md cannot be found."""


class ModelScriptError(InputError):
    """A model script for the emulator that cannot be read or validated."""


class PluginError(InputError):
    """A plugin folder whose manifest, hooks, skills or MCP server declarations are not valid."""


class WorldError(InputError):
    """A world file, or a fixture it names, that cannot be read, parsed or validated."""


class ConfigurationError(SkilltestError):
    """The environment cannot run what was asked (credentials, binaries, options)."""


class CredentialsError(ConfigurationError):
    """A live backend was chosen but no credentials are set."""


class ClaudeNotFoundError(ConfigurationError):
    """No usable ``claude`` binary."""


class McpServerError(ConfigurationError):
    """An MCP server that cannot be started, exits, or does not answer ``initialize`` and
    ``tools/list``; the message names the server, what failed, the end of its stderr and a fix."""


class RunError(SkilltestError):
    """One run failed to execute; reported as an unscored run, never as a score."""


def check_schema_version(
    data: Mapping[str, Any],
    supported: int,
    what: str,
    *,
    error: type[InputError] = InputError,
    fix: str = "re-run the suite with this version of skilltest",
) -> None:
    """Raises ``error`` unless ``data`` was written with the ``schema_version`` this skilltest
    reads (``supported``); ``what`` names the data in the message."""
    version = data.get("schema_version")
    if version != supported:
        raise error(
            f"{what} schema_version {version!r} is not supported "
            f"(this skilltest reads {supported})",
            fix=fix,
        )
