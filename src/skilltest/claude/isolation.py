"""Isolation: the two arms of a scenario differ only by the skill.

Every run gets a fresh working directory and a fresh ``$HOME`` under the system temp folder, an
environment built from an allowlist, and the flags and settings that keep the user's own
configuration and the CLI's bundled skills and built-in plugins out. Verified against Claude Code
2.1.328 by driving the real CLI against a scripted API and reading the requests it sent:

* ``--setting-sources project``: user (``~/.claude``) settings, hooks, skills and CLAUDE.md are not
  loaded even when ``$HOME`` is the user's; project skills in the working directory still are.
* ``--settings '{"disableBundledSkills": true, "enabledPlugins": {<built-ins>: false}}'``: the
  bundled skills and the built-in plugins are gone; ``doctor`` is the only skill left in both arms.
* ``--strict-mcp-config``: no MCP servers from any settings file.
* ``CLAUDE_CODE_DISABLE_CLAUDE_MDS=1``: no CLAUDE.md from the folders above the working directory
  (Claude Code walks up from the cwd for those, whatever the setting sources).
* ``CLAUDE_CODE_DISABLE_AUTO_MEMORY=1``: no auto-memory section inviting the agent to write notes.

* The working directory is made the root of an empty git repository (in both arms): Claude Code
  looks for ``.claude/skills``, ``.claude/agents`` and ``.claude/commands`` in every folder above
  the working directory up to the repository root, so without a root of its own a sandbox would
  pick up whatever sits above the system temp folder. :func:`ancestor_leaks` reports what would
  leak when ``git`` is not installed.

With the skill installed at ``.claude/skills/<name>/``, the model's requests differ only by the
skill listing ("The following skills are available for use with the Skill tool: ...") and the
run's own paths.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from skilltest.skills import Skill

# Built-in plugins of each known CLI version; an unknown version gets the newest list, and the
# init event of every run is checked (see ``init_warnings``) so that a change shows up.
BUILTIN_PLUGINS: dict[str, tuple[str, ...]] = {
    "2.1.328": (
        "cc-plugin-agents-md@builtin",
        "cc-plugin-privacy@builtin",
        "cc-plugin-plugin-authoring@builtin",
    ),
}
LATEST_KNOWN = "2.1.328"

ALWAYS_PRESENT_SKILLS = frozenset({"doctor"})
"""Skills Claude Code lists in both arms even when bundled skills are disabled."""

CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
"""Environment variables that carry credentials to the live API."""

# Inherited from the caller's environment: what processes need to run (locale, temp dir, proxies
# and CA bundles for corporate networks). Everything else, including the user's CLAUDE_* and
# ANTHROPIC_* variables and CLAUDE_CONFIG_DIR, stays out.
_PASSTHROUGH = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)

_FIXED_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
}

# What, above the working directory, Claude Code would pick up.
_LEAKY_NAMES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/skills",
    ".claude/commands",
    ".claude/agents",
)


@dataclass(frozen=True)
class Sandbox:
    """The fresh folders of one run."""

    root: Path
    """The run's own temp folder; removed after the run."""
    workdir: Path
    """The working directory Claude Code starts in."""
    home: Path
    """The run's ``$HOME``."""

    @property
    def tmp(self) -> Path:
        """The run's ``$TMPDIR``: what the CLI and its tools leave there goes with the sandbox."""
        return self.root / "tmp"

    @property
    def skills_dir(self) -> Path:
        """Where Claude Code discovers project skills."""
        return self.workdir / ".claude" / "skills"

    def remove(self) -> None:
        """Deletes the sandbox (the raw output is kept elsewhere)."""
        shutil.rmtree(self.root, ignore_errors=True)


def create_sandbox(
    *, skill: Skill | None, workspace: Path | None = None, base: Path | None = None
) -> Sandbox:
    """Makes fresh folders for one run and installs the skill when there is one.

    Args:
        skill: The skill for the with-skill arm; ``None`` for the without-skill arm.
        workspace: A fixture folder copied into the working directory in both arms.
        base: Where to create the sandbox; the system temp folder by default.
    """
    root = Path(tempfile.mkdtemp(prefix="skilltest-run-", dir=base))
    workdir, home = root / "work", root / "home"
    workdir.mkdir()
    home.mkdir()
    (root / "tmp").mkdir()
    if workspace is not None:
        shutil.copytree(workspace, workdir, dirs_exist_ok=True, ignore=_IGNORED)
    make_repository_root(workdir, home)
    sandbox = Sandbox(root=root, workdir=workdir, home=home)
    if skill is not None:
        install_skill(skill, sandbox)
    return sandbox


_IGNORED = shutil.ignore_patterns("__pycache__", ".git", ".DS_Store", "*.pyc")


def install_skill(skill: Skill, sandbox: Sandbox) -> Path:
    """Copies the whole skill folder (SKILL.md, references, scripts) into ``.claude/skills/``."""
    target = sandbox.skills_dir / skill.name
    shutil.copytree(skill.directory, target, ignore=_IGNORED, symlinks=False)
    return target


def make_repository_root(workdir: Path, home: Path) -> bool:
    """Makes ``workdir`` an empty git repository, which stops Claude Code's upward search.

    The user's git configuration and templates (hooks) stay out. Returns ``False`` when git is
    not installed or fails; the run goes on and :func:`ancestor_leaks` says what may leak.
    """
    git = shutil.which("git")
    if git is None:
        return False
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    try:
        done = subprocess.run(
            [git, "-c", "init.defaultBranch=main", "init", "--quiet", "--template=", str(workdir)],
            env=env,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def ancestor_leaks(path: Path) -> list[Path]:
    """What above ``path`` Claude Code would load into a run.

    Nothing, when ``path`` is a repository root (the search stops there) and CLAUDE.md files are
    disabled; otherwise the ``.claude`` folders (and CLAUDE.md files) above it.
    """
    if (path / ".git").is_dir():
        return []
    found = []
    for folder in path.resolve().parents:
        for name in _LEAKY_NAMES:
            candidate = folder / name
            if candidate.exists():
                found.append(candidate)
    return found


def isolation_settings(cli_version: str | None) -> dict[str, object]:
    """The ``--settings`` JSON: no bundled skills, every built-in plugin disabled."""
    plugins = BUILTIN_PLUGINS.get(cli_version or "", BUILTIN_PLUGINS[LATEST_KNOWN])
    return {
        "disableBundledSkills": True,
        "enabledPlugins": {name: False for name in plugins},
    }


def isolation_flags(cli_version: str | None) -> list[str]:
    """The CLI flags shared by both arms that keep outside configuration out."""
    return [
        "--setting-sources",
        "project",
        "--strict-mcp-config",
        "--settings",
        json.dumps(isolation_settings(cli_version), separators=(",", ":")),
    ]


def isolated_env(
    *,
    home: Path,
    credentials: Mapping[str, str],
    base: Mapping[str, str] | None = None,
    tmp: Path | None = None,
) -> dict[str, str]:
    """The run's environment: an allowlist of the caller's, a fresh home, and the credentials.

    Args:
        home: The sandbox's ``$HOME``.
        credentials: ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` / ... for this backend.
        base: The caller's environment (``os.environ`` by default).
        tmp: The run's own temp folder (``Sandbox.tmp``), so nothing outlives the sandbox.
    """
    source = os.environ if base is None else base
    env = {key: source[key] for key in _PASSTHROUGH if key in source}
    env.update({key: value for key, value in source.items() if key.startswith("LC_")})
    env.setdefault("PATH", os.defpath)
    env.update(_FIXED_ENV)
    env["HOME"] = str(home)
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
    env.update(credentials)
    return env


def live_credentials(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's credentials for the live API (and a custom ``ANTHROPIC_BASE_URL``)."""
    source = os.environ if environ is None else environ
    names = (*CREDENTIAL_VARIABLES, "ANTHROPIC_BASE_URL")
    return {name: source[name] for name in names if source.get(name)}


class Redactor:
    """Replaces secret values with ``[REDACTED:<VARIABLE>]`` in everything that is stored."""

    MIN_LENGTH = 8
    """Shorter values are not treated as secrets (they would redact ordinary words)."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        pairs = [(v, k) for k, v in secrets.items() if v and len(v) >= self.MIN_LENGTH]
        # Longest first, so a secret that contains another is replaced whole.
        self._pairs = sorted(pairs, key=lambda pair: len(pair[0]), reverse=True)

    @classmethod
    def for_environment(cls, env: Mapping[str, str]) -> Redactor:
        """A redactor for the credential variables found in ``env``."""
        return cls({name: env[name] for name in CREDENTIAL_VARIABLES if env.get(name)})

    def __call__(self, text: str) -> str:
        for value, name in self._pairs:
            if value in text:
                text = text.replace(value, f"[REDACTED:{name}]")
        return text


def init_event(lines: Iterable[str]) -> dict[str, object] | None:
    """The first ``system/init`` event of a stream-json output, when there is one."""
    for line in lines:
        if '"init"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and (event.get("type"), event.get("subtype")) == (
            "system",
            "init",
        ):
            return event
    return None


def skills_available(init: Mapping[str, object] | None) -> tuple[str, ...]:
    """The skills the CLI listed at startup."""
    skills = init.get("skills") if init else None
    return tuple(str(s) for s in skills) if isinstance(skills, list) else ()


def init_warnings(init: Mapping[str, object] | None, installed: Sequence[str]) -> list[str]:
    """What the CLI loaded beyond the skill under test, or the skill it failed to load."""
    if init is None:
        return []
    warnings = []
    listed = skills_available(init)
    for name in installed:
        if not any(skill_name_matches(s, name) for s in listed):
            warnings.append(
                f"the CLI did not list skill {name!r} at startup (check SKILL.md's frontmatter)"
            )
    extra = [
        s
        for s in listed
        if s not in ALWAYS_PRESENT_SKILLS and not any(skill_name_matches(s, n) for n in installed)
    ]
    if extra:
        warnings.append("skills from outside the sandbox were loaded: " + ", ".join(extra))
    plugins = init.get("plugins")
    if isinstance(plugins, list) and plugins:
        names = [str(p.get("name", p)) if isinstance(p, dict) else str(p) for p in plugins]
        warnings.append("plugins were loaded: " + ", ".join(names))
    return warnings


def skill_name_matches(listed: str, expected: str) -> bool:
    """``lgtm`` matches ``lgtm`` and a plugin's ``plugin:lgtm``."""
    return listed == expected or listed.rsplit(":", 1)[-1] == expected
