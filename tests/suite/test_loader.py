"""The YAML loader's bounds: size, nesting, aliases, duplicate keys, encoding; parsed once."""

from __future__ import annotations

import json
import time

import pytest

import skilltest.suite.loader as loader
from skilltest.errors import ModelScriptError, SuiteError
from skilltest.limits import (
    MAX_REPETITIONS,
    MAX_YAML_ALIAS_NODES,
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
)
from skilltest.suite.loader import read_yaml
from tests.refusals import refusal

BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def nested(levels: int) -> str:
    """Mappings nested ``levels`` deep, in block style."""
    return (
        "".join("  " * i + f"k{i}:\n" for i in range(levels - 1)) + "  " * (levels - 1) + "k: v\n"
    )


def merge_chain(levels: int) -> str:
    """Each mapping merges the previous one twice: 2**levels keys from a few hundred bytes."""
    lines = ["m0: &m0 {x: 1}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], y{i}: 1}}" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


REFUSED = [
    (
        "billion-laughs",
        BILLION_LAUGHS,
        "x.yaml:5:8: aliases repeat more than 10,000 values (*d alone stands for 7,381)\n"
        "  fix: write the values out, or repeat less through aliases (nested aliases multiply)",
    ),
    (
        "merge-bomb",
        merge_chain(40),
        "x.yaml:11:17: aliases repeat more than 10,000 values (*m9 alone stands for 4,091)\n"
        "  fix: write the values out, or repeat less through aliases (nested aliases multiply)",
    ),
    (
        "recursive-alias",
        "a: &a [1, *a]\n",
        "x.yaml:1:11: the alias *a repeats a value that contains it (endless)\n"
        "  fix: an alias may only repeat a value that is complete where the alias stands",
    ),
    (
        "500-levels-block",
        nested(500),
        "x.yaml:65:129: nested deeper than 64 levels\n"
        "  fix: flatten the structure; suites and model scripts need only a few levels "
        "(a value repeated through an alias counts as deep as the original)",
    ),
    (
        "500-levels-flow",
        "x: " + "[" * 500 + "]" * 500 + "\n",
        "x.yaml:1:67: nested deeper than 64 levels\n"
        "  fix: flatten the structure; suites and model scripts need only a few levels "
        "(a value repeated through an alias counts as deep as the original)",
    ),
    (
        "deep-through-an-alias",
        "a: &a " + "[" * 40 + "]" * 40 + "\nb: " + "[" * 30 + "*a" + "]" * 30 + "\n",
        "x.yaml:2:34: nested deeper than 64 levels\n"
        "  fix: flatten the structure; suites and model scripts need only a few levels "
        "(a value repeated through an alias counts as deep as the original)",
    ),
    (
        "duplicate-key",
        "scenarios:\n  - id: a\n    prompt: first\n    with_skill: {}\n    prompt: second\n",
        "x.yaml:5:5: duplicate key 'prompt' (first at line 3)\n"
        "  fix: keep one of the two; YAML would silently use only the last",
    ),
    (
        "duplicate-key-in-flow",
        "with_skill: {required_patterns: [a], required_patterns: [b]}\n",
        "x.yaml:1:38: duplicate key 'required_patterns' (first at line 1)\n"
        "  fix: keep one of the two; YAML would silently use only the last",
    ),
    (
        "duplicate-top-level-key",
        "skill: a\nrepetitions: 3\nskill: b\n",
        "x.yaml:3:1: duplicate key 'skill' (first at line 1)\n"
        "  fix: keep one of the two; YAML would silently use only the last",
    ),
]


@pytest.mark.parametrize(("text", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_what_the_loader_refuses_names_file_line_limit_and_fix(tmp_path, text, message):
    path = tmp_path / "x.yaml"
    path.write_text(text)
    started = time.monotonic()
    said = refusal(read_yaml, path, SuiteError)
    assert time.monotonic() - started < 60  # refused while composing: expanded, it would not end
    assert said == f"{tmp_path}/{message}"


def test_the_billion_laughs_file_is_small():
    assert len(BILLION_LAUGHS.encode()) < 620


def test_the_class_of_error_is_the_callers(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(BILLION_LAUGHS)
    with pytest.raises(ModelScriptError, match="aliases repeat more than"):
        read_yaml(path, ModelScriptError)


def test_nesting_up_to_the_limit_is_read(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(nested(MAX_YAML_DEPTH))
    data = read_yaml(path)
    for _ in range(MAX_YAML_DEPTH - 1):
        (data,) = data.values()
    assert data == {"k": "v"}
    path.write_text(nested(MAX_YAML_DEPTH + 1))
    with pytest.raises(SuiteError, match=f"nested deeper than {MAX_YAML_DEPTH} levels"):
        read_yaml(path)


def test_aliases_within_the_budget_and_merge_keys_are_read(tmp_path):
    # Anchors that share patterns between scenarios are a fair use; a merged key may be
    # overridden without being a duplicate.
    path = tmp_path / "x.yaml"
    path.write_text(
        "common: &common {required_patterns: [a, b], anti_patterns: [c]}\n"
        "base: &base {prompt: p, model: m}\n"
        "scenarios:\n"
        "  - {<<: *base, id: one, with_skill: *common}\n"
        "  - {<<: *base, id: two, prompt: q, with_skill: *common}\n"
    )
    data = read_yaml(path)
    assert data["scenarios"] == [
        {"prompt": "p", "model": "m", "id": "one", "with_skill": data["common"]},
        {"prompt": "q", "model": "m", "id": "two", "with_skill": data["common"]},
    ]
    per_alias = 7  # the mapping, its two keys, the list and three numbers
    path.write_text(
        "a: &a {x: [1, 2], y: 3}\nb: ["
        + ", ".join(["*a"] * (MAX_YAML_ALIAS_NODES // per_alias))
        + "]\n"
    )
    assert len(read_yaml(path)["b"]) == MAX_YAML_ALIAS_NODES // per_alias
    path.write_text(
        "a: &a {x: [1, 2], y: 3}\nb: ["
        + ", ".join(["*a"] * (MAX_YAML_ALIAS_NODES // per_alias + 1))
        + "]\n"
    )
    with pytest.raises(SuiteError, match="aliases repeat more than 10,000 values"):
        read_yaml(path)


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    path = tmp_path / "big.yaml"
    line = "- " + "x" * 98 + "\n"
    path.write_text(line * (MAX_YAML_BYTES // len(line) + 1))
    monkeypatch.setattr(loader, "parse_yaml", lambda *_: pytest.fail("parsed"))
    assert refusal(read_yaml, path, SuiteError) == (
        f"{path}: the file is 2.0 MiB, more than the 2 MiB a suite or model script may be\n"
        "  fix: split it into several files (a folder of suites runs as one)"
    )


def test_a_file_at_the_size_limit_is_read(tmp_path):
    path = tmp_path / "big.yaml"
    body = "x: " + "y" * (MAX_YAML_BYTES - 4) + "\n"
    path.write_text(body)
    assert path.stat().st_size == MAX_YAML_BYTES
    assert len(read_yaml(path)["x"]) == MAX_YAML_BYTES - 4


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"skill: demo\nname: caf\xe9\n", "x.yaml:2:10: not UTF-8: byte 0xe9 cannot be decoded"),
        (b"\xff\xfes\x00k\x00", "x.yaml:1:1: not UTF-8: byte 0xff cannot be decoded"),
    ],
    ids=["latin-1", "utf-16"],
)
def test_a_file_that_is_not_utf8_says_where_and_how_to_fix_it(tmp_path, raw, message):
    path = tmp_path / "x.yaml"
    path.write_bytes(raw)
    assert refusal(read_yaml, path, SuiteError) == (
        f"{tmp_path}/{message}\n"
        "  fix: save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8 FILE > NEW`)"
    )


def test_a_folder_is_not_a_file(tmp_path):
    assert refusal(read_yaml, tmp_path, SuiteError) == (
        f"{tmp_path}: cannot read the file: it is a folder, not a regular file\n"
        "  fix: pass a regular file"
    )


def test_a_file_read_twice_is_parsed_once_and_each_reader_gets_its_own_copy(tmp_path, monkeypatch):
    parsed: list[str] = []
    real = loader.parse_yaml

    def counting(text, source, error=SuiteError):
        parsed.append(source)
        return real(text, source, error)

    monkeypatch.setattr(loader, "parse_yaml", counting)
    path = tmp_path / "x.yaml"
    path.write_text("scenarios: [{id: a}]\n")
    first = read_yaml(path)
    first["scenarios"].append("changed by the first reader")
    assert read_yaml(path) == {"scenarios": [{"id": "a"}]}
    assert parsed == [str(path)]
    path.write_text("scenarios: [{id: b}]\n")  # the same size: the content decides
    assert read_yaml(path) == {"scenarios": [{"id": "b"}]}
    assert parsed == [str(path), str(path)]


@pytest.mark.parametrize("schema", ["pressure", "scenarios"])
def test_the_schemas_bound_repetitions_by_the_documented_limit(schema):
    text = json.dumps(loader.load_schema(schema))
    assert f'"minimum": 1, "maximum": {MAX_REPETITIONS}' in text
    assert f"an integer from 1 to {MAX_REPETITIONS}" in text
