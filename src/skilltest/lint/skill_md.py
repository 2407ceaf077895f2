"""Checks of one skill folder: its SKILL.md front matter, the files it links to, and the
scripts it runs."""

from __future__ import annotations

import difflib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from skilltest.errors import InputError
from skilltest.lint.findings import Finding
from skilltest.skills import is_root_skill, load_skill, safe_name
from skilltest.suite.loader import parse_yaml

# The limits of the Agent Skills format (https://agentskills.io/specification, "Frontmatter":
# name at most 64 characters of lowercase letters, digits and hyphens, not starting or ending
# with a hyphen, no "--", matching the skill's folder; description non-empty, at most 1024
# characters), which Anthropic's skill documentation states too. Claude Code 2.1.328 itself
# names a skill after its folder and loads longer values, but other clients of the format
# refuse them.
NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 1024
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

CONVENTIONAL_FOLDERS = frozenset(
    {"scripts", "reference", "references", "assets", "templates", "examples", "resources"}
)
"""Folders a skill's files live in by convention: a path into one of them is a file of the
skill even when the folder is missing."""
SCRIPT_SUFFIXES = frozenset({"", ".sh", ".bash", ".zsh", ".py", ".rb", ".pl", ".js", ".mjs"})
NAMED_SCRIPT_SUFFIXES = tuple(sorted(SCRIPT_SUFFIXES - {""}))
"""What a script named without its extension may be missing."""
INTERPRETER = re.compile(
    r"(?:^|[\s;&|(`])(?:bash|sh|zsh|source|\.|python[0-9.]*|node|ruby|perl|deno run|bun|"
    r"uv run|npx|exec python[0-9.]*)(?:\s+-\S+)*\s+[\"']?$"
)
"""What stands before a script run through its interpreter (``bash x.sh``, ``python x.py``),
which needs no execute permission."""
COMMAND_POSITION = re.compile(r"(?:^|[;&|(]|\$)\s*[\"']?$")
RUN_VERB = re.compile(r"(?i)\b(?:run|execute|invoke|launch)\s+(?:(?:the|this)\s+(?:script\s+)?)?$")
"""Prose that tells the reader to run what the code span after it names (``Run `x.sh` first``);
a script only mentioned (``handled by `x.py```) is not run."""

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")
MARKDOWN_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?([^\s>]+)>?")
PATH_MENTION = re.compile(
    r"(?<![\w./$}{:*-])(\$\{CLAUDE_SKILL_DIR\}/|\$\{CLAUDE_PLUGIN_ROOT\}/|\./|"
    r"<[\w .-]*skill[\w .-]*>/)?"
    r"((?:[\w.-]+/)+[\w.-]*[\w-](?:\.[A-Za-z0-9]+)?)(?![\w/(*?\[{])"
)
"""A path of the skill's files in the text. ``<skill-path>/`` (a placeholder naming the skill)
stands for the skill's folder."""
GLOB = re.compile(r"[*?\[\]{}]")
TOKEN_END = re.compile(r"[\s`'\"()<>|,;]|$")
FILE_NAME = re.compile(
    r"(?<![\w./$}{:*<-])([A-Za-z0-9][\w-]*\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/(*?\[{-])"
)
"""A file name on its own (``FORMS.md``): checked only against the skill's own top-level files."""
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Mention:
    """A file of the skill that its SKILL.md names."""

    text: str
    """As written."""
    path: Path
    """The file it stands for."""
    line: int
    """The line of SKILL.md it is on."""
    link: bool
    """A markdown link (always a file), rather than a path in the text."""
    runs: bool = False
    """The skill runs it directly here (a command in code, or "run `x.sh`"), so it must be
    executable."""
    interpreted: bool = False
    """The skill runs it through its interpreter here (``python x.py``): no execute bit needed,
    and a mere "run `x.py`" elsewhere means the same."""
    bare: bool = False
    """A file name without a folder (``FORMS.md``): only a case mismatch with a file of the
    skill is reported, since such names are often files of the user's project."""


def front_matter_lines(lines: list[str]) -> tuple[int, int] | None:
    """The indexes of the opening and closing ``---`` lines, if the front matter is there."""
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return 0, index
    return None


def _line_of(lines: list[str], key: str, end: int) -> int:
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    return next((i + 1 for i in range(1, end) if pattern.match(lines[i])), 1)


def check_front_matter(
    skill_md: Path, text: str, folder_name: str, *, root_skill: bool = False
) -> list[Finding]:
    """SKILL.md front matter: present, valid YAML, ``name`` and ``description`` within the
    limits of the Agent Skills format, ``name`` matching the folder, unless the skill is a
    repository's root (``root_skill``): installed from there, the folder it is installed in is
    its name, and ``folder_name`` is only the name suggested when there is none."""
    lines = text.splitlines()
    shape = (
        'start SKILL.md with ---, then "name: <folder name>" and "description: <what it does '
        'and when to use it>", then ---'
    )
    bounds = front_matter_lines(lines)
    if bounds is None:
        opened = bool(lines) and lines[0].strip() == "---"
        message = (
            "the front matter is not closed: no --- line after it"
            if opened
            else "no front matter: SKILL.md does not start with a --- line"
        )
        return [Finding(f"{skill_md}:1", message, shape, "front-matter")]
    _, end = bounds
    # One empty line first, so that the YAML parser's line numbers are SKILL.md's.
    yaml_text = "\n" + "\n".join(lines[1:end])
    try:
        data = parse_yaml(yaml_text, str(skill_md))
    except InputError as exc:
        fix = exc.fix or ""
        if exc.message.startswith("YAML syntax error"):
            fix = (
                'quote a value that contains ": " or starts with a special character '
                '(description: "Use when: ..."), and check the indentation'
            )
        return [
            Finding(
                exc.location or f"{skill_md}:1",
                f"the front matter is not valid YAML: {exc.message}",
                fix,
                "front-matter",
            )
        ]
    if not isinstance(data, dict):
        return [
            Finding(
                f"{skill_md}:2",
                "the front matter is not a mapping of keys to values",
                shape,
                "front-matter",
            )
        ]
    findings: list[Finding] = []
    findings += _check_name(skill_md, data, lines, end, folder_name, root_skill)
    findings += _check_description(skill_md, data, lines, end)
    return findings


def _check_name(
    skill_md: Path,
    data: dict[object, object],
    lines: list[str],
    end: int,
    folder: str,
    root_skill: bool,
) -> list[Finding]:
    place = f"{skill_md}:{_line_of(lines, 'name', end)}"
    name = data.get("name")
    if name is None:
        why = (
            "the skill's name: it is at the repository's root"
            if root_skill
            else "the skill's folder name"
        )
        return [
            Finding(
                f"{skill_md}:1",
                "the front matter has no name",
                f"add name: {folder} ({why})",
                "front-matter",
            )
        ]
    if not isinstance(name, str):
        return [
            Finding(place, f"name {name!r} is not text", f"write name: {folder}", "front-matter")
        ]
    findings = []
    if len(name) > NAME_MAX_CHARS:
        findings.append(
            Finding(
                place,
                f"name is {len(name)} characters long, more than the {NAME_MAX_CHARS} allowed",
                "shorten the name (and rename the folder to match)",
                "front-matter",
            )
        )
    if not NAME_PATTERN.match(name):
        findings.append(
            Finding(
                place,
                f"name {name!r} is not lowercase letters, digits and single hyphens",
                "use kebab-case such as log-triage (no capitals, spaces, underscores, leading, "
                "trailing or double hyphens), and name the folder the same",
                "front-matter",
            )
        )
    if name != folder and not root_skill:
        findings.append(
            Finding(
                place,
                f"name {name!r} does not match the skill's folder {folder!r}",
                f"rename one of the two; Claude Code lists the skill as {folder!r}, after its "
                "folder",
                "front-matter",
            )
        )
    return findings


def _check_description(
    skill_md: Path, data: dict[object, object], lines: list[str], end: int
) -> list[Finding]:
    place = f"{skill_md}:{_line_of(lines, 'description', end)}"
    description = data.get("description")
    fix = "say what the skill does and when to use it, in one paragraph"
    if description is None:
        return [
            Finding(
                f"{skill_md}:1",
                "the front matter has no description",
                f"add description: ({fix})",
                "front-matter",
            )
        ]
    if not isinstance(description, str):
        return [
            Finding(
                place, "description is not text", f"write it as one string: {fix}", "front-matter"
            )
        ]
    if not description.strip():
        return [Finding(place, "description is empty", fix, "front-matter")]
    if len(description) > DESCRIPTION_MAX_CHARS:
        return [
            Finding(
                place,
                f"description is {len(description)} characters long, more than the "
                f"{DESCRIPTION_MAX_CHARS} allowed",
                "shorten it to what decides when the skill applies; move details to the body",
                "front-matter",
            )
        ]
    return []


def _resolve(prefix: str | None, relative: str, folder: Path, plugin_root: Path | None) -> Path:
    if prefix == "${CLAUDE_PLUGIN_ROOT}/" and plugin_root is not None:
        return plugin_root / relative
    return folder / relative


def _is_skill_file(prefix: str | None, relative: str, folder: Path) -> bool:
    """Whether a path in the text is meant as a file of the skill (not a path of the project
    the skill works on)."""
    if prefix:
        return True
    first = relative.split("/", 1)[0]
    return first in CONVENTIONAL_FOLDERS or (first not in {".", ".."} and (folder / first).exists())


def _how_run(
    relative: str, before: str, fenced: bool, span: bool, prose: str, args: str
) -> tuple[bool, bool]:
    """``(runs directly, runs through an interpreter)`` for a path and what surrounds it.

    Args:
        relative: The path.
        before: What stands before it in its command: the line (in a fenced block or in
            prose), or the code span up to it.
        fenced: Whether the line is in a fenced code block.
        span: Whether the path is in a code span.
        prose: For a code span, the text before the span on its line.
        args: For a code span, what follows the path inside it.
    """
    if INTERPRETER.search(before):
        return False, True
    if Path(relative).suffix not in SCRIPT_SUFFIXES or not COMMAND_POSITION.search(before):
        return False, False
    if span:
        # A span runs it when it holds a command (the path and its arguments) or the prose
        # before it says to run it; `scripts/x.py` alone in a sentence only names it.
        return bool(args.strip()) or bool(RUN_VERB.search(prose)), False
    return fenced, False


def _links(line: str, number: int, folder: Path) -> list[Mention]:
    """Markdown links (``[text](target)``, ``[id]: target``) to files, outside code."""
    prose = INLINE_CODE.sub(lambda m: " " * len(m.group()), line)
    matches = [*MARKDOWN_LINK.finditer(prose), *filter(None, [REFERENCE_LINK.match(prose)])]
    found = []
    for match in matches:
        target = match.group(1)
        if SCHEME.match(target) or target.startswith(("#", "/")):
            continue  # a URL, a section of this file, or an absolute path
        relative = unquote(target.split("#", 1)[0].split("?", 1)[0])
        if relative:
            # A link is for reading: it runs nothing.
            found.append(Mention(target, folder / relative, number, True))
    return found


def _paths(
    line: str, number: int, fenced: bool, folder: Path, plugin_root: Path | None
) -> list[Mention]:
    """Paths of the skill's files in the text, in code or not, and file names on their own."""
    spans = [(m.start(), m.end()) for m in INLINE_CODE.finditer(line)]
    found = []
    taken: list[tuple[int, int]] = []
    for match in PATH_MENTION.finditer(line):
        prefix, relative = match.group(1), match.group(2)
        taken.append(match.span())
        token_end = TOKEN_END.search(line, match.end())
        token = line[match.start(2) : token_end.start() if token_end else len(line)]
        if GLOB.search(token) or not _is_skill_file(prefix, relative, folder):
            continue  # a glob (shared/agents-*.md) names no one file
        # What stands before it in its command: the line in a code block, the span inline.
        opened = [(a, b) for a, b in spans if a < match.start() < b]
        if opened:
            start, stop = max(opened)
            before = line[start + 1 : match.start()]
            prose, args = line[:start], line[match.end() : stop - 1]
        else:
            before, prose, args = line[: match.start()], "", ""
        runs, interpreted = _how_run(relative, before, fenced, bool(opened), prose, args)
        path = _resolve(prefix, relative, folder, plugin_root)
        found.append(Mention(match.group(0), path, number, False, runs, interpreted))
    for match in FILE_NAME.finditer(line):
        if any(a <= match.start() < b for a, b in taken):
            continue
        found.append(Mention(match.group(1), folder / match.group(1), number, False, bare=True))
    return found


def mentions(text: str, folder: Path, plugin_root: Path | None = None) -> list[Mention]:
    """The files of the skill its SKILL.md links to or names, outside the front matter."""
    lines = text.splitlines()
    bounds = front_matter_lines(lines)
    found: list[Mention] = []
    fenced = False
    for index in range(bounds[1] + 1 if bounds else 0, len(lines)):
        line, number = lines[index], index + 1
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            found += _links(line, number, folder)
        found += _paths(line, number, fenced, folder, plugin_root)
    return found


EXECUTE_BITS = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH


def _exact(path: Path, folder: Path) -> Path | None:
    """``path`` as it is on disk when every part of it below ``folder`` exists with exactly
    this spelling, else ``None``. A case-insensitive file system (macOS, Windows) finds
    ``FORMS.md`` for ``forms.md``; Linux, where skills often run, does not."""
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return path if path.exists() else None  # outside the skill: reported as such
    current = folder
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        try:
            names = os.listdir(current)
        except OSError:
            return None
        if part not in names:
            return None
        current = current / part
    return current


def _case_insensitive(path: Path, folder: Path) -> Path | None:
    """The file whose path differs from ``path`` only in case, if there is one."""
    try:
        parts = path.relative_to(folder).parts
    except ValueError:
        return None
    current = folder
    for part in parts:
        try:
            names = os.listdir(current)
        except OSError:
            return None
        same = [name for name in names if name.lower() == part.lower()]
        if not same:
            return None
        current = current / same[0]
    return current


def _shown(path: Path, folder: Path) -> str:
    return str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path)


def _missing(mention: Mention, folder: Path, known: list[str]) -> tuple[str, str]:
    wanted = mention.text
    if mention.path.is_relative_to(folder):
        wanted = str(mention.path.relative_to(folder))
    close = difflib.get_close_matches(wanted, known, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    what = "dead link" if mention.link else "missing file"
    return (
        f"{what}: {mention.text} does not exist in {folder}",
        f"{hint}create the file or fix the path (relative to the skill folder)",
    )


def _wrong_case(mention: Mention, actual: Path, folder: Path) -> tuple[str, str]:
    what = "a link to" if mention.link else ""
    real = _shown(actual, folder)
    return (
        f"{what + ' ' if what else ''}{mention.text}: no such file in {folder}; the file is "
        f"{real}, whose name differs in case (found on macOS and Windows, not on Linux)",
        f"write {real}, or rename the file to {Path(mention.text).name}",
    )


def _without_extension(mention: Mention, actual: Path, folder: Path) -> tuple[str, str]:
    real = _shown(actual, folder)
    return (
        f"{mention.text}: no such file in {folder}; the script is {real}",
        f"name it with its extension: {real}",
    )


def _outside(mention: Mention, in_plugin: bool) -> tuple[str, str]:
    where = "the skill folder and its plugin" if in_plugin else "the skill folder"
    return (
        f"{mention.text} is outside {where}",
        "copy the file into the skill folder: the skill is installed without what lies around it",
    )


def _not_executable(mention: Mention) -> tuple[str, str]:
    shown = mention.text
    return (
        f"{shown} is not executable, and the skill runs it directly",
        f"chmod +x {mention.path} (git keeps the mode: commit it), or run it through its "
        f"interpreter (bash {shown}, python3 {shown})",
    )


def _with_extension(path: Path, folder: Path) -> Path | None:
    if path.suffix:
        return None
    for suffix in NAMED_SCRIPT_SUFFIXES:
        found = _exact(path.with_name(path.name + suffix), folder)
        if found is not None and found.is_file():
            return found
    return None


def _problem(
    group: list[Mention], folder: Path, home: Path, known: list[str], in_plugin: bool
) -> tuple[Mention, str, str, str] | None:
    """The finding for one file of the skill, from every mention of it: ``(the mention it is
    reported at, message, fix, check)``."""
    first = group[0]
    actual = _exact(first.path, folder)
    if actual is None:
        other_case = _case_insensitive(first.path, folder)
        if other_case is not None:
            return (first, *_wrong_case(first, other_case, folder), "link")
        named = _with_extension(first.path, folder)
        if named is not None:
            return (first, *_without_extension(first, named, folder), "script")
        if first.bare:
            return None
        return (first, *_missing(first, folder, known), "link")
    if not actual.resolve().is_relative_to(home):
        return (first, *_outside(first, in_plugin), "link")
    runs = [m for m in group if m.runs]
    if not runs or any(m.interpreted for m in group) or not actual.is_file():
        return None
    if actual.stat().st_mode & EXECUTE_BITS:
        return None
    return (runs[0], *_not_executable(runs[0]), "script")


def check_files(skill_md: Path, text: str, plugin_root: Path | None = None) -> list[Finding]:
    """Dead links, files named that do not exist (or only in another case, or only with an
    extension), files outside the skill (and its plugin), and scripts the skill runs directly
    that are not executable; each file reported once."""
    folder = skill_md.parent
    home = (plugin_root or folder).resolve()
    known = sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and path.name != "SKILL.md"
    )
    groups: dict[str, list[Mention]] = {}
    for mention in mentions(text, folder, plugin_root):
        key = os.path.normpath(mention.path)
        groups.setdefault(key, []).append(mention)
    findings = []
    for group in groups.values():
        problem = _problem(group, folder, home, known, plugin_root is not None)
        if problem is not None:
            mention, message, fix, check = problem
            findings.append(Finding(f"{skill_md}:{mention.line}", message, fix, check))
    return sorted(findings, key=lambda f: int(f.place.rsplit(":", 1)[1]))


def check_skill(folder: Path, plugin_root: Path | None = None) -> tuple[str, list[Finding]]:
    """Every check of one skill folder.

    Returns:
        SKILL.md's text ("" when it cannot be read) and the findings.
    """
    skill_md = folder / "SKILL.md"
    try:
        text = load_skill(skill_md).text
    except InputError as exc:
        return "", [Finding.from_error(exc, "front-matter", str(skill_md))]
    root_skill = is_root_skill(folder)
    folder_name = safe_name(folder.resolve().name) if root_skill else folder.name
    findings = check_front_matter(skill_md, text, folder_name, root_skill=root_skill)
    findings += check_files(skill_md, text, plugin_root)
    return text, findings
