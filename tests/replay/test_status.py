"""`skilltest replay status`: each cassette's age and what it was recorded against, the stale
ones named with their reasons, ``--check`` failing on them, bad input refused with exit 2."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.replay.cassette import Cassette, Exchange
from skilltest.replay.normalise import fingerprint, rules_in_force
from tests.projects import demo_script, numbered_suite, write_demo_project

PINNED = "2.1.328"


def status(*args: str | Path) -> int:
    return main(["replay", "status", *(str(a) for a in args)])


def rows(out: str) -> dict[str, str]:
    """The table's lines by cassette (its first column)."""
    return {line.split()[0]: line for line in out.splitlines()[1:-1]}


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pressure suite of two scenarios recorded against the emulator: ``cassettes/``."""
    monkeypatch.chdir(tmp_path)
    suite = write_demo_project(tmp_path, numbered_suite(2, 1), demo_script("count_over_time"))
    code = main(["pressure", str(suite), "--record", str(tmp_path / "cassettes")])
    assert code in (0, 1)  # inconclusive at K=1
    return tmp_path


def age(cassette: Path, days: int) -> None:
    """Makes the cassette say it was recorded ``days`` ago."""
    when = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    text = cassette.read_text()
    text = re.sub(r"(?m)^recorded_at: .*$", f"recorded_at: '{when.isoformat()}'", text)
    cassette.write_text(text)


def test_a_fresh_recording_lists_every_cassette_and_passes_the_check(recorded, capsys):
    code = status(recorded / "cassettes", "--check", "--max-age", "30")
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    assert lines[0].split() == [
        "cassette", "recorded", "backend", "model", "claude", "rules", "status",
    ]  # fmt: skip
    today = dt.datetime.now(dt.UTC).date().isoformat()
    table = rows(out)
    assert sorted(table) == [
        "demo/s0/with_skill.yaml", "demo/s0/without_skill.yaml",
        "demo/s1/with_skill.yaml", "demo/s1/without_skill.yaml",
    ]  # fmt: skip
    for line in table.values():
        # date, backend, the model as the emulator named it, no claude (pressure), rules id
        assert re.fullmatch(rf"\S+ +{today} +emulator +\S+ +- +[0-9a-f]{{8}} +fresh", line), line
    assert lines[-1] == "4 cassettes: 4 fresh, 0 stale"


def test_an_old_cassette_is_stale_beyond_max_age(recorded, capsys):
    cassettes = recorded / "cassettes"
    age(cassettes / "demo" / "s1" / "with_skill.yaml", 40)
    code = status(cassettes, "--check", "--max-age", "30")
    out = capsys.readouterr().out
    assert code == 1
    table = rows(out)
    assert table["demo/s1/with_skill.yaml"].endswith("stale: recorded 40 days ago (--max-age 30)")
    assert table["demo/s0/with_skill.yaml"].endswith("fresh")
    assert out.splitlines()[-1] == "4 cassettes: 3 fresh, 1 stale"

    # Listing alone never fails; without --max-age, age is no criterion.
    assert status(cassettes, "--max-age", "30") == 0
    assert status(cassettes, "--check") == 0


def test_a_suite_rule_added_since_recording_makes_its_cassettes_stale(recorded, capsys):
    suite = recorded / "demo.yaml"
    suite.write_text(
        suite.read_text()
        + "replay:\n  normalise:\n    - {pattern: 'id=\\d+', replacement: 'id=N'}\n"
    )
    code = status(recorded / "cassettes", "--check")
    out = capsys.readouterr().out
    assert code == 1
    for line in rows(out).values():
        assert line.endswith(
            "stale: recorded under other normalisation rules (now also normalise id=\\d+ -> id=N)"
        ), line


def test_remove_stale_lets_record_missing_record_them_again(recorded, capsys):
    cassettes = recorded / "cassettes"
    old = cassettes / "demo" / "s0" / "without_skill.yaml"
    age(old, 90)
    assert status(cassettes, "--max-age", "30", "--remove-stale", "--check") == 1
    captured = capsys.readouterr()
    assert not old.exists()
    assert captured.err == (
        f"removed 1 stale cassette: record them again with --replay {cassettes} --record-missing\n"
    )
    code = main(
        ["pressure", str(recorded / "demo.yaml"), "--replay", str(cassettes), "--record-missing"]
    )
    assert code in (0, 1), capsys.readouterr().out
    assert old.exists()
    capsys.readouterr()
    assert status(cassettes, "--max-age", "30", "--check") == 0


def cli_cassette(
    folder: Path, scenario: str, cli_version: str | None, agent: str | None = None
) -> None:
    """A scenario cassette of suite ``s.yaml`` recorded with claude ``cli_version`` (or with
    ``agent``'s CLI at that version)."""
    request = {"model": "claude-opus-5-5", "messages": [{"role": "user", "content": "p"}]}
    message = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-5-5-20261101",
        "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }  # fmt: skip
    answer = {"status": 200, "headers": {}, "body": message, "events": None}
    cassette = Cassette(
        path=Cassette.path_for(folder, "k", scenario, "with_skill"),
        layer="scenarios",
        suite="s.yaml",
        skill="k",
        scenario=scenario,
        arm="with_skill",
        backend="anthropic",
        cli_version=cli_version,
        agent=agent,
        rules=rules_in_force(),
    )
    cassette.add(0, Exchange(0, "model", fingerprint(request), request, answer, kind="main"))
    cassette.save()


@pytest.fixture
def scenario_cassettes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text("skill: k\nscenarios: []\n")
    folder = tmp_path / "cassettes"
    cli_cassette(folder, "same", PINNED)
    cli_cassette(folder, "older", "2.1.300")
    cli_cassette(folder, "unknown", None)
    return folder


def test_another_or_an_unknown_claude_version_is_stale(scenario_cassettes, capsys):
    code = status(scenario_cassettes, "--check", "--claude-version", PINNED)
    out = capsys.readouterr().out
    assert code == 1
    table = rows(out)
    assert table["k/same/with_skill.yaml"].endswith("fresh")
    assert f" {PINNED} " in table["k/same/with_skill.yaml"]
    # the model as the API named it
    assert " claude-opus-5-5-20261101 " in table["k/same/with_skill.yaml"]
    assert table["k/older/with_skill.yaml"].endswith(
        f"stale: recorded with claude 2.1.300 (now {PINNED})"
    )
    assert table["k/unknown/with_skill.yaml"].endswith(
        f"stale: claude version unknown (now {PINNED})"
    )
    assert " unknown " in table["k/unknown/with_skill.yaml"]
    assert out.splitlines()[-1] == "3 cassettes: 1 fresh, 2 stale"


def test_another_agents_cassette_is_judged_by_that_agents_version(
    scenario_cassettes, capsys, monkeypatch
):
    cli_cassette(scenario_cassettes, "in-codex", "0.171.0", agent="codex")
    cli_cassette(scenario_cassettes, "in-opencode", "1.18.33", agent="opencode")
    now = {"codex": "0.172.0", "opencode": "1.18.33"}
    monkeypatch.setattr("skilltest.cli.replay_cmd._agent_version_now", now.get)

    code = status(scenario_cassettes, "--check", "--claude-version", PINNED)
    out = capsys.readouterr().out

    assert code == 1
    table = rows(out)
    assert " codex 0.171.0 " in table["k/in-codex/with_skill.yaml"]
    assert table["k/in-codex/with_skill.yaml"].endswith(
        "stale: recorded with codex 0.171.0 (now 0.172.0)"
    )
    # Claude's version is not OpenCode's: its cassette is fresh.
    assert " opencode 1.18.33 " in table["k/in-opencode/with_skill.yaml"]
    assert table["k/in-opencode/with_skill.yaml"].endswith("fresh")
    codex = (scenario_cassettes / "k" / "in-codex" / "with_skill.yaml").read_text()
    assert codex.count("\nagent: codex\n") == 1
    assert "\nagent:" not in (scenario_cassettes / "k" / "same" / "with_skill.yaml").read_text()
    status(scenario_cassettes, "--json", "--claude-version", PINNED)
    document = json.loads(capsys.readouterr().out)
    agents = {c["cassette"]: c["agent"] for c in document["cassettes"]}
    assert agents["k/in-codex/with_skill.yaml"] == "codex"
    assert agents["k/same/with_skill.yaml"] is None


def test_another_model_is_stale_and_json_says_why(scenario_cassettes, capsys):
    code = status(
        scenario_cassettes, "--check", "--json",
        "--claude-version", PINNED, "--model", "claude-sonnet-5-5",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1
    document = json.loads(captured.out)
    same = next(c for c in document["cassettes"] if c["cassette"] == "k/same/with_skill.yaml")
    assert same["stale"] is True
    assert same["reasons"] == ["recorded with claude-opus-5-5 (now claude-sonnet-5-5)"]
    assert same["model"] == "claude-opus-5-5-20261101"
    assert same["asked_model"] == "claude-opus-5-5"
    assert same["cli_version"] == PINNED
    assert captured.err == "3 cassettes: 0 fresh, 3 stale\n"
    # The model the API named (a dated one) counts as the model asked for too.
    for model in ("claude-opus-5-5-20261101", "claude-opus-5-5"):
        status(scenario_cassettes, "--json", "--claude-version", PINNED, "--model", model)
        document = json.loads(capsys.readouterr().out)
        same = next(c for c in document["cassettes"] if c["cassette"] == "k/same/with_skill.yaml")
        assert (same["stale"], same["reasons"]) == (False, []), model


def test_a_suite_that_is_gone_leaves_the_rules_unknown(scenario_cassettes, capsys):
    (scenario_cassettes.parent / "s.yaml").unlink()
    code = status(scenario_cassettes, "--check", "--claude-version", PINNED)
    out = capsys.readouterr().out
    assert code == 1
    assert rows(out)["k/same/with_skill.yaml"].endswith(
        "stale: rules unknown: its suite s.yaml is not found (give --suite FILE)"
    )
    elsewhere = scenario_cassettes.parent / "moved.yaml"
    elsewhere.write_text("skill: k\nscenarios: []\n")
    code = status(scenario_cassettes, "--suite", elsewhere, "--claude-version", PINNED)
    assert rows(capsys.readouterr().out)["k/same/with_skill.yaml"].endswith("fresh")


def test_an_old_cassette_lacking_facts_reads_as_unknown(scenario_cassettes, capsys):
    path = Cassette.path_for(scenario_cassettes, "k", "same", "with_skill")
    text = path.read_text()
    text = re.sub(r"(?m)^(backend|recorded_at|api): .*\n", "", text)
    path.write_text(text.replace("schema_version: 2", "schema_version: 1"))
    code = status(scenario_cassettes, "--check", "--max-age", "30", "--claude-version", PINNED)
    out = capsys.readouterr().out
    assert code == 1
    line = rows(out)["k/same/with_skill.yaml"]
    assert re.match(r"\S+ +unknown +unknown +claude-opus-5-5-20261101 +2\.1\.328 ", line), line
    assert line.endswith("stale: recorded date unknown (--max-age 30)")


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda folder: None,
            "skilltest: error: no cassette folder at {folder}\n"
            "  fix: give the folder passed to --record DIR or --replay DIR (record one with: "
            "skilltest scenarios --record {folder})\n",
        ),
        (
            lambda folder: folder.mkdir(),
            "skilltest: error: no cassette (*.yaml) under {folder}\n"
            "  fix: give the folder passed to --record DIR or --replay DIR\n",
        ),
        (
            lambda folder: (
                (folder / "k" / "x").mkdir(parents=True)
                or (folder / "k" / "x" / "with_skill.yaml").write_text(
                    "schema_version: 2\nlayer: [\n"
                )
            ),
            "skilltest: error: {folder}/k/x/with_skill.yaml:3:1: the cassette is not valid YAML: ",
        ),
    ],
    ids=["missing", "empty", "unreadable"],
)
def test_bad_input_exits_2_naming_the_file_and_the_fix(tmp_path, capsys, make, message):
    folder = tmp_path / "cassettes"
    make(folder)
    assert status(folder, "--check") == 2
    err = capsys.readouterr().err
    assert err.startswith(message.format(folder=folder)), err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay"], "usage: skilltest replay [-h] SUBCOMMAND ..."),
        (
            ["replay", "status", "cassettes", "--claude-version", "latest"],
            "skilltest: error: --claude-version: 'latest' is not a Claude Code version\n"
            "  fix: give a release as npm names it, e.g. 2.1.328",
        ),
    ],
    ids=["no-subcommand", "bad-version"],
)
def test_usage_errors_exit_2(scenario_cassettes, capsys, args, message):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_the_docs_example_is_what_the_command_prints(tmp_path, monkeypatch, capsys):
    """docs/replay.md shows the table ``replay status`` prints for three cassettes of one suite:
    one recorded with another claude version, one older than ``--max-age``, one fresh."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").mkdir()
    (tmp_path / "s.yaml").write_text("skill: safe-migrations\nscenarios: []\n")
    folder = tmp_path / "tests" / "cassettes"
    for scenario, arm, cli_version, days in (
        ("add-index", "with_skill", "2.1.300", 0),
        ("rename-column", "with_skill", PINNED, 126),
        ("rename-column", "without_skill", PINNED, 4),
    ):
        request = {"model": "claude-opus-5-5", "messages": [{"role": "user", "content": "p"}]}
        message = {
            "id": "msg_1", "type": "message", "role": "assistant",
            "model": "claude-opus-5-5-20261101", "content": [{"type": "text", "text": "done"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 1},
        }  # fmt: skip
        answer = {"status": 200, "headers": {}, "body": message, "events": None}
        cassette = Cassette(
            path=Cassette.path_for(folder, "safe-migrations", scenario, arm),
            layer="scenarios",
            suite="s.yaml",
            skill="safe-migrations",
            scenario=scenario,
            arm=arm,
            backend="anthropic",
            cli_version=cli_version,
            rules=rules_in_force(),
        )
        cassette.add(0, Exchange(0, "model", fingerprint(request), request, answer, kind="main"))
        cassette.save()
        age(cassette.path, days)
    code = status("tests/cassettes", "--check", "--max-age", "90", "--claude-version", PINNED)
    out = capsys.readouterr().out
    assert code == 1
    shown = f"$ skilltest replay status tests/cassettes --check --max-age 90 --claude-version {PINNED}\n{out}"
    day = re.compile(r"\d{4}-\d{2}-\d{2}")
    docs = (Path(__file__).parents[2] / "docs" / "replay.md").read_text()
    assert day.sub("YYYY-MM-DD", shown) in day.sub("YYYY-MM-DD", docs), shown
