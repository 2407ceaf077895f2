"""Which tool calls are actions: what the agent did to the world, as scoring counts it.

Only an action is evidence of behaviour. Not actions:

- **plans and delegations** (:data:`NOT_ACTIONS`): a ``TodoWrite`` note, an ``Agent``/``Task``
  prompt, a message to a subagent, a question to the user, a plan, a tool search. Their text is
  what the agent meant to do; what a subagent then did is its own calls, which are actions.
- **loading the skill**: a ``Skill`` call, and reading the skill's own files (a ``Read``,
  ``Glob``, ``Grep`` or a reading shell command such as ``cat`` on a path under
  ``.claude/skills/`` or ``.claude/plugins/``). Only the arm with the skill can do either, so
  counting them would measure the skill's presence, not what it changed. Running a skill's
  script is an action.
- **calls that never ran** (``refused``: an unknown tool, a permission or sandbox refusal,
  input the harness rejected).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from typing import Any

from skilltest.transcript.model import ToolCall, canonical_tool_name

NOT_ACTIONS: frozenset[str] = frozenset(
    {
        "Agent",  # a delegation: the subagent's own calls are the actions
        "AskUserQuestion",
        "ExitPlanMode",
        "ListAgents",
        "SendMessage",
        "Skill",
        "TodoRead",
        "TodoWrite",
        "ToolSearch",
    }
)
"""Tools whose calls are plans, delegations, questions or skill loading, never actions
(``Task`` is ``Agent`` under its old name)."""

READING_TOOLS: frozenset[str] = frozenset({"Read", "Glob", "Grep", "LS", "NotebookRead"})
"""Tools that only read."""

READING_COMMANDS: frozenset[str] = frozenset(
    {
        "awk",
        "cat",
        "column",
        "cut",
        "diff",
        "egrep",
        "fgrep",
        "file",
        "find",
        "fold",
        "gawk",
        "grep",
        "head",
        "hexdump",
        "jq",
        "less",
        "ls",
        "more",
        "nl",
        "od",
        "rg",
        "sed",
        "sort",
        "stat",
        "strings",
        "tac",
        "tail",
        "tr",
        "uniq",
        "wc",
        "xxd",
        "yq",
    }
)
"""Shell programs that only read: their files, or their stdin when they name none (a filter).
``sed -i``, ``awk -i inplace`` and ``find`` with an action that runs or deletes are not."""

HARMLESS_COMMANDS: frozenset[str] = frozenset({"echo", "printf", "true", ":"})
"""Shell commands that neither read nor change anything: a separator line between reads."""

_SKILL_FOLDER = re.compile(r"(?:^|[\s/'\"=])\.claude/(?:skills|plugins)/")
_SKILL_PATH = re.compile(r"(?:^|/)\.claude/(?:skills|plugins)(?:/|$)")
_SEPARATORS = frozenset({"|", "||", "&&", ";", "&", "|&", ";;", "\n"})
_SCRIPT_FIRST = frozenset({"grep", "egrep", "fgrep", "rg", "sed", "awk", "gawk", "jq", "yq"})
"""Programs whose first operand is a pattern or a script, not a file (unless given by option)."""
_SCRIPT_OPTIONS = frozenset({"-e", "-f", "--regexp", "--file", "--expression"})
_VALUE_OPTIONS: dict[str, frozenset[str]] = {
    "head": frozenset({"-n", "-c"}),
    "tail": frozenset({"-n", "-c"}),
    "grep": frozenset({"-m", "-A", "-B", "-C"}),
    "rg": frozenset({"-m", "-A", "-B", "-C", "-g", "-t"}),
    "sort": frozenset({"-k", "-t"}),
    "cut": frozenset({"-d", "-f", "-c", "-b"}),
    "uniq": frozenset({"-f", "-s", "-w"}),
    "awk": frozenset({"-F", "-v"}),
    "gawk": frozenset({"-F", "-v"}),
    "nl": frozenset({"-b", "-s", "-w", "-v", "-i"}),
    "od": frozenset({"-t", "-N", "-j"}),
}
"""Options whose value is the next word (``head -n 5``, ``cut -d , -f 1``)."""
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fls"})
_PYTHON = re.compile(r"python(?:3(?:\.\d+)?)?")
_PYTHON_READS = re.compile(r"open\(")
_PYTHON_CHANGES = re.compile(
    r"\bimport\b|__|\bexec\b|\beval\b|\bwrite|\bos\.|\bsubprocess|\bshutil|\bsystem\b"
    r"|\bunlink|\bremove|\brmtree|\brename|open\([^)]*,\s*(?:mode\s*=\s*)?['\"][^'\"]*[wax+]"
)


def strings_of(value: Any) -> Iterator[str]:
    """Every string in a tool input, nested ones included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_of(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_of(item)


def reads_the_skill(call: ToolCall) -> bool:
    """Whether the call only reads the skill's (or a plugin's) own files."""
    if not any(_SKILL_FOLDER.search(text) for text in strings_of(call.input)):
        return False
    if call.canonical_name in READING_TOOLS:
        return True
    if call.name == "Bash":
        command = call.input.get("command")
        return isinstance(command, str) and command_reads_the_skill(command)
    return False


def command_reads_the_skill(command: str) -> bool:
    """Whether a shell command's only effect is reading files of the skill under test.

    The command is split into simple commands (at ``|``, ``;``, ``&&``, ``||``, ``&``); each
    must read only skill files, be a pure filter of its stdin (``grep``, ``head``, ``sort``...),
    or change nothing (``echo``), and at least one must read a skill file. Anything that writes
    (``>`` to a file other than ``/dev/null``, ``tee``, ``sed -i``), runs something else, or
    computes a word (``$(...)``, a variable) makes the command an action.
    """
    if "$" in command or "`" in command:
        return False
    try:
        lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return False
    parts: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            parts.append([])
        else:
            parts[-1].append(word)
    read_skill = False
    in_skill_folder = False
    for part in parts:
        if not part:
            continue
        simple = _strip_redirections(part)
        if simple is None:
            return False
        if not simple:
            continue
        program = simple[0].rsplit("/", 1)[-1]
        if program == "cd":
            in_skill_folder = len(simple) == 2 and bool(_SKILL_PATH.search(simple[1] + "/"))
            if not in_skill_folder:
                return False
            continue
        if program == "xargs":
            # ``... | xargs cat``: the files come from the pipe, which read skill files.
            rest = [w for w in simple[1:] if not w.startswith("-")]
            if not rest or rest[0].rsplit("/", 1)[-1] not in READING_COMMANDS:
                return False
            continue
        files = _files_read(program, simple[1:])
        if files is None:
            return False
        for path in files:
            if not (_SKILL_PATH.search(path) or (in_skill_folder and not path.startswith("/"))):
                return False
            read_skill = True
    return read_skill


def _strip_redirections(words: list[str]) -> list[str] | None:
    """The simple command without its redirections; ``None`` when one writes a file (or the
    command reads its input from a file outside the skill)."""
    kept: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word and set(word) <= set("<>&|"):
            target = words[index + 1] if index + 1 < len(words) else ""
            if kept and kept[-1].isdigit():
                kept.pop()  # the descriptor of ``2>``
            if word in (">&", "<&") and (target.isdigit() or target == "-"):
                pass  # ``2>&1``: a descriptor, no file
            elif word.startswith(">") or word.startswith("&>"):
                if target != "/dev/null":
                    return None
            elif word == "<":
                if not _SKILL_PATH.search(target):
                    return None
                kept.append(target)  # reading a skill file through stdin
            else:
                return None
            index += 2
            continue
        kept.append(word)
        index += 1
    return kept


def _files_read(program: str, arguments: list[str]) -> list[str] | None:
    """The files a reading command reads (empty: it filters its stdin); ``None`` when the
    command is not one that only reads."""
    if _PYTHON.fullmatch(program):
        if len(arguments) == 2 and arguments[0] == "-c":
            code = arguments[1]
            if _PYTHON_READS.search(code) and not _PYTHON_CHANGES.search(code):
                opened = re.findall(r"open\(\s*['\"]([^'\"]+)['\"]", code)
                return opened if len(opened) == code.count("open(") else None
        return None
    if program in HARMLESS_COMMANDS:
        return []
    if program not in READING_COMMANDS:
        return None
    if program == "sed" and any(a.startswith("-i") or a == "--in-place" for a in arguments):
        return None
    if program in ("awk", "gawk") and any("inplace" in a or "system" in a for a in arguments):
        return None
    if program == "find" and any(a in _FIND_ACTIONS for a in arguments):
        return None
    operands: list[str] = []
    script_given = False
    index = 0
    while index < len(arguments):
        word = arguments[index]
        if word == "--":
            operands += arguments[index + 1 :]
            break
        if word.startswith("-") and len(word) > 1:
            if word in _SCRIPT_OPTIONS:
                script_given = True
            if word in _VALUE_OPTIONS.get(program, ()) or word in _SCRIPT_OPTIONS:
                index += 1
        else:
            operands.append(word)
        index += 1
    if program == "find":
        return operands[:1] if operands else None
    if program in _SCRIPT_FIRST and not script_given:
        operands = operands[1:]
    if program == "tr":
        return []
    return operands


def is_action(call: ToolCall) -> bool:
    """Whether the call is evidence of what the agent did (see the module's docstring)."""
    return (
        not call.refused
        and canonical_tool_name(call.name) not in NOT_ACTIONS
        and not reads_the_skill(call)
    )


def actions(calls: tuple[ToolCall, ...], *, succeeded_only: bool = False) -> list[ToolCall]:
    """The calls that are actions, in order; with ``succeeded_only``, those that also ran
    without an error (``require_success``)."""
    return [call for call in calls if is_action(call) and (not succeeded_only or call.succeeded)]
