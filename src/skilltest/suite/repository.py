"""The suite's repository: the one folder every path a suite names must resolve inside.

A suite names other files: the skill's SKILL.md, a model script, a plugin, a world and its
fixtures, a workspace copied into each run, setup scripts, session files, MCP mocks, folders the
agent may read. skilltest reads each of them, copies it into a run, or sends it to the model,
and what a run sees can end up in a cassette, a trace or a report. A suite from an untrusted
pull request must not be able to read ``/proc/self/environ``, ``/etc/passwd`` or a CI secret
beside the checkout that way. So every path a suite (or a world file, or a plugin's eval cases)
names, once symbolic links are followed, lies inside the suite's repository, and every symbolic
link inside a folder it names points inside it too:

- the git work tree holding the suite file (the nearest folder at or above it with ``.git``);
- outside any git work tree, the current directory when the suite lies inside it;
- else the suite file's own folder.

Paths a person gives on the command line (``--skills-dir``, ``--plugin-dir``, ``--results``,
``--output-dir``, ``--record``...) are that person's choice and are not restricted; nor are the
paths a run's checks name, which are read inside the run's own working directory
(:mod:`skilltest.checks.model` keeps those there).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skilltest.errors import InputError, SuiteError

NOT_COPIED = ("__pycache__", ".git", ".DS_Store", "*.pyc")
"""What a run's copy of a skill, plugin or workspace folder leaves out (so neither is it
checked for links)."""

MOVE_IT = "a suite reads only its own repository"
"""Why a path is refused, said in every fix."""


def holds_git(folder: Path) -> bool:
    """Whether ``folder`` is the top of a git work tree: its ``.git`` is the file a worktree or
    submodule has, or a folder with a ``HEAD`` as git requires. A ``.git`` folder without one is
    not a repository: sandboxes leave such folders behind in the temporary directory (mount
    points for the ``.git/hooks`` they protect), and git itself ignores them."""
    git = folder / ".git"
    return git.is_file() or (git / "HEAD").is_file()


def git_work_tree(path: Path) -> Path | None:
    """The nearest folder at or above ``path`` that is the top of a git work tree
    (:func:`holds_git`), or ``None`` when ``path`` is in no git work tree."""
    for folder in (path, *path.parents):
        if holds_git(folder):
            return folder
    return None


@dataclass(frozen=True)
class Repository:
    """The folder a suite's paths must resolve inside (:func:`repository_of`)."""

    root: Path
    """The folder, resolved (no symbolic link in it)."""
    chosen: str
    """How it was chosen, for messages: ``the git work tree holding the suite``..."""

    def holds(self, path: Path) -> bool:
        """Whether ``path`` (resolved) is the root or lies below it."""
        return path == self.root or path.is_relative_to(self.root)

    def inside(
        self,
        path: Path,
        *,
        written: str,
        location: str,
        error: type[InputError] = SuiteError,
    ) -> Path:
        """``path`` resolved (symbolic links followed, whether or not it exists), when that
        lies inside the repository.

        Args:
            path: The path the suite names, joined to the folder it is relative to (an
                absolute path stays as it is).
            written: The path as the suite writes it, for the message.
            location: ``file#/json/pointer`` of the field that names it.
            error: The class of error raised.

        Raises:
            InputError: (of class ``error``) the path resolves outside the repository, naming
                the field, what it resolved to and the fix.
        """
        resolved = path.resolve()
        if self.holds(resolved):
            return resolved
        shown = f"{written!r} is" if str(resolved) == written else f"{written!r} resolves to"
        where = "" if str(resolved) == written else f" {resolved},"
        raise error(
            f"{shown}{where} outside the suite's repository {self.root} ({self.chosen})",
            location=location,
            fix=f"name a file or folder inside {self.root} ({MOVE_IT}; a symbolic link there "
            "must point inside it too)",
        )

    def check_links(
        self,
        folder: Path,
        *,
        location: str,
        error: type[InputError] = SuiteError,
        left_out: Callable[[str, list[str]], set[str]] | None = None,
    ) -> None:
        """Refuses a symbolic link anywhere below ``folder`` (a folder whose files a run copies
        or reads: a skill's, a plugin's, a workspace, mocks) that points outside the
        repository. Links to folders inside it are followed, each folder once. ``left_out``
        (as ``shutil.copytree``'s ``ignore``) names what the run's copy leaves out, besides
        :data:`NOT_COPIED`: a root skill's ``.venv`` is not checked, as it is not copied.

        Raises:
            InputError: (of class ``error``) naming the field, the link and where it points.
        """
        seen: set[Path] = set()
        waiting = [folder]
        while waiting:
            current = waiting.pop()
            real = current.resolve()
            if real in seen:
                continue
            seen.add(real)
            try:
                entries = sorted(os.scandir(current), key=lambda entry: entry.name)
            except OSError:
                continue  # not a folder, or unreadable: the copy or the reader says so
            skipped = left_out(str(current), [e.name for e in entries]) if left_out else set()
            for entry in entries:
                if entry.name in skipped:
                    continue
                if any(fnmatch.fnmatch(entry.name, pattern) for pattern in NOT_COPIED):
                    continue
                link = Path(entry.path)
                if entry.is_symlink():
                    target = link.resolve()
                    if not self.holds(target):
                        raise error(
                            f"{link} is a symbolic link to {target}, outside the suite's "
                            f"repository {self.root} ({self.chosen})",
                            location=location,
                            fix=f"put the file itself there, or point the link inside "
                            f"{self.root} ({MOVE_IT})",
                        )
                    if target.is_dir():
                        waiting.append(link)
                elif entry.is_dir(follow_symlinks=False):
                    waiting.append(link)


def repository_of(suite_path: Path, *, cwd: Path | None = None) -> Repository:
    """The repository of a suite file (or of a folder standing for one, such as an eval
    folder): the git work tree holding it; outside any, the current directory when the suite
    lies inside it; else the suite's own folder.

    Args:
        suite_path: The suite file, or a folder of eval cases.
        cwd: The current directory (default: the process's).
    """
    place = suite_path.resolve()
    folder = place if place.is_dir() else place.parent
    tree = git_work_tree(folder)
    if tree is not None:
        return Repository(tree, "the git work tree holding the suite")
    here = (cwd if cwd is not None else Path.cwd()).resolve()
    if folder == here or folder.is_relative_to(here):
        return Repository(here, "the current directory: the suite is in no git work tree")
    return Repository(folder, "the suite's folder: it is in no git work tree")
