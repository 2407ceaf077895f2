"""Static checks of what a skill or plugin ships (``skilltest lint``): SKILL.md front matter,
the files it links to and the scripts it runs, plugin and marketplace manifests, and the MCP
tool names skills mention against what the servers list."""

from skilltest.lint.findings import Finding
from skilltest.lint.run import LintReport, ServerProbe, lint
from skilltest.lint.targets import Targets, find_targets

__all__ = ["Finding", "LintReport", "ServerProbe", "Targets", "find_targets", "lint"]
