"""What docs/agents.md says about Codex is what the code does."""

from __future__ import annotations

import re
from pathlib import Path

from skilltest.agents.codex import codex_command, codex_config
from skilltest.agents.codex_events import READERS, TOOL_NAMES

PAGE = Path(__file__).resolve().parents[3] / "docs" / "agents.md"


def codex_section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split("## Codex CLI", 1)[1].split("\n## ", 1)[0]


def test_the_config_shown_is_the_config_written():
    block = re.search(r"```toml\n(.*?)\n *```", codex_section(), re.DOTALL)
    assert block is not None
    shown = "".join(line.removeprefix("  ") + "\n" for line in block[1].splitlines())
    assert shown == codex_config("http://127.0.0.1:PORT", model="gpt-5.1-codex")


def test_the_command_shown_is_the_command_run():
    block = re.search(r"### Run\n\n```sh\n(.*?)\n```", codex_section(), re.DOTALL)
    assert block is not None
    assert block[1] == " ".join(codex_command("codex", '"PROMPT"')) + " < /dev/null"
    resume = re.findall(r"```sh\n(codex exec resume .*?)\n```", codex_section())
    command = codex_command("codex", '"NEXT MESSAGE"', session="THREAD_ID")
    assert resume == [" ".join(command) + " < /dev/null"]


def test_the_tool_table_is_the_parsers_table():
    rows = re.findall(r"^\| `(\w+)`(?:, kind `(\w+)`)? \| `(\w+)` \|", codex_section(), re.M)
    shown = {f"{item}:{kind}" if kind else item: tool for item, kind, tool in rows}
    assert shown == TOOL_NAMES
    assert "| `mcp_tool_call` | `mcp__<server>__<tool>` |" in codex_section()


def test_the_readers_named_are_the_readers_that_fire():
    sentence = re.search(r"`<name>/SKILL\.md` with (.*?) \(in any part", codex_section(), re.S)
    assert sentence is not None
    named = set(re.findall(r"`(\w+)`", sentence[1]))
    assert named == READERS
