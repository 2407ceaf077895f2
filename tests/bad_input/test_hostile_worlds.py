"""A world that claims the model API's own host, or a host name that is a look-alike, is refused
where it is read: exit 2, the world file, the place of the host and why, before anything starts.

The runs reach the model API through the world's proxy untouched; a world that declared
``api.anthropic.com`` (or the host ``ANTHROPIC_BASE_URL`` names) would put its fake in the
model's place. A host whose label mixes scripts (``аpi.example.com``, its first letter Cyrillic)
or spells a Latin name in look-alike letters is no name a skill's text uses: it is a homograph.
The policy is checked as a table, and the commands on files that use it; no socket is opened.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.world.policy import host_problem, model_api_hosts
from tests.bad_input.commands import clean_env, skilltest

REFUSED = [
    ("api.anthropic.com", "'api.anthropic.com' is the model API's host (api.anthropic.com)"),
    ("API.Anthropic.COM.", "'API.Anthropic.COM.' is the model API's host (api.anthropic.com)"),
    ("xn--pi-6kc.example.com", "'xn--pi-6kc.example.com' (аpi.example.com): the label 'аpi' "
     "mixes scripts (Cyrillic and Latin): a look-alike of a name"),
    ("аpi.example.com", "'аpi.example.com' (xn--pi-6kc.example.com): the label 'аpi' mixes "
     "scripts (Cyrillic and Latin): a look-alike of a name"),
    ("αpi.example.com", "the label 'αpi' mixes scripts (Greek and Latin)"),
    ("münchen-ο.de", "the label 'münchen-ο' mixes scripts (Greek and Latin)"),
    ("аре.example.com", "the label 'аре' spells 'ape' in look-alike letters"),
    ("xn--80a.example.com", "(а.example.com): the label 'а' spells 'a' in look-alike letters"),
]  # fmt: skip
"""Hosts no world may declare, and why (the model API's host read from no environment)."""

ACCEPTED = [
    "api.tickets.example.com",
    "bücher.example.com",  # Latin with a diacritic
    "пример.рф",  # Cyrillic throughout
    "пример.com",  # a Cyrillic label under a Latin one
    "例え.jp",  # Han and Hiragana: one language
    "한국어漢字.kr",  # Hangul and Han
    "api.anthropic.com.example.com",  # another host
]


@pytest.mark.parametrize(("host", "reason"), REFUSED, ids=[host for host, _ in REFUSED])
def test_a_host_no_world_may_declare_says_why(host, reason):
    problem = host_problem(host, reserved=model_api_hosts({}))
    assert problem is not None and reason in problem


@pytest.mark.parametrize("host", ACCEPTED)
def test_a_real_name_in_any_one_script_is_accepted(host):
    assert host_problem(host, reserved=model_api_hosts({})) is None


def test_the_model_api_hosts_are_anthropics_and_the_base_urls():
    assert model_api_hosts({}) == {"api.anthropic.com"}
    hosts = model_api_hosts({"ANTHROPIC_BASE_URL": "https://LLM.Corp.example:8443/v1"})
    assert hosts == {"api.anthropic.com", "llm.corp.example"}
    # An address is no name a world could declare anyway.
    assert model_api_hosts({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}) == {"api.anthropic.com"}


WORLD = """\
services:
  - name: tickets
    hosts: [api.tickets.example.com, {host}]
    routes:
      - {{method: GET, path: /tickets, action: respond, status: 200, body: {{tickets: []}}}}
"""

SUITE = """\
skill: demo
world: w.yaml
scenarios:
  - id: s
    prompt: p
    expected: {text_patterns: [x]}
"""


def world_project(root: Path, host: str) -> None:
    (root / "w.yaml").write_text(WORLD.format(host=host), encoding="utf-8")
    (root / "skills" / "demo").mkdir(parents=True)
    (root / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Use for demos.\n---\nbody\n"
    )
    (root / "suite.yaml").write_text(SUITE)


@pytest.mark.parametrize(
    ("host", "base_url", "why"),
    [
        ("api.anthropic.com", None, "'api.anthropic.com' is the model API's host"),
        ("llm.corp.example", "https://llm.corp.example/v1",
         "'llm.corp.example' is the model API's host (llm.corp.example)"),
        ("аpi.example.com", None, "'аpi.example.com' (xn--pi-6kc.example.com): the label 'аpi' "
         "mixes scripts (Cyrillic and Latin)"),
        ("xn--pi-6kc.example.com", None, "'xn--pi-6kc.example.com' (аpi.example.com): "
         "the label 'аpi' mixes scripts (Cyrillic and Latin)"),
    ],
    ids=["anthropic", "base url", "cyrillic", "punycode"],
)  # fmt: skip
@pytest.mark.parametrize("command", ["validate", "scenarios", "world"])
def test_a_world_claiming_such_a_host_is_refused_at_load(tmp_path, host, base_url, why, command):
    work = tmp_path / "work"
    work.mkdir()
    world_project(work, host)
    argv = {
        "validate": ["validate", "w.yaml"],
        "scenarios": ["scenarios", "suite.yaml", "--backend", "emulator"],
        "world": ["world", "serve", "w.yaml"],
    }[command]
    env = clean_env(tmp_path, **({"ANTHROPIC_BASE_URL": base_url} if base_url else {}))
    done = skilltest(argv, work, env)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert f"w.yaml#/services/0/hosts/1: cannot fake this host: {why}" in said
    assert "fix: declare the real host name the skill text uses" in said
    assert "Traceback" not in said
