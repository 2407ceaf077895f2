"""Suites are read through libyaml's C parser when PyYAML has it, with the bounds and the error
messages of the pure-Python one: every YAML file of tests/bad_input reads (or is refused) the
same through both."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skilltest.errors import SuiteError
from skilltest.files import decode
from skilltest.suite import bounded_yaml
from skilltest.suite.loader import parse_yaml

BAD_INPUT = Path(__file__).resolve().parent.parent / "bad_input"


def _utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# A file that is not UTF-8 is refused before either parser sees it (tests/bad_input says how).
FILES = [path for path in sorted(BAD_INPUT.rglob("*.yaml")) if _utf8(path)]
TRICKY = {
    "alias bomb": "a: &a [x, x, x, x, x, x, x, x, x]\n"
    + "".join(
        f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcde", "bcdef", strict=True)
    ),
    "recursive alias": "a: &a [*a]\n",
    "deep": "a: " + "[" * 70 + "]" * 70 + "\n",
    "duplicate key": "a: 1\nb: 2\na: 3\n",
    "python tag": "a: !!python/object/apply:os.system [echo]\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "tab": "a:\n\tb: 1\n",
    "colon": "a: b: c\n",
    "merge": "base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n",
    **{f"{n} deep": "a: " + "[" * n + "]" * n + "\n" for n in (61, 62, 63, 64)},
    **{
        f"{n} deep through an alias": "x: &x " + "[" * (n - 1) + "]" * (n - 1) + "\ny: [*x]\n"
        for n in (62, 63, 64, 65)
    },
    **{
        f"aliases repeating {9 * n} values": "a: &a [x, x, x, x, x, x, x, x]\nb: ["
        + ", ".join(["*a"] * n)
        + "]\n"
        for n in (555, 1110, 1111, 1112)
    },
    "mutual aliases": "a: &a {b: &b [1]}\nc: *b\nd: *a\n",
}


def outcome(text: str, loader: type | None) -> object:
    try:
        return ("data", bounded_yaml.parse(text, "f.yaml", SuiteError, loader_class=loader))
    except SuiteError as exc:
        return ("refused", str(exc), exc.fix)


def test_files_are_read_through_libyaml_when_pyyaml_has_it():
    assert yaml.__with_libyaml__
    assert bounded_yaml.LIBYAML
    assert bounded_yaml.BoundedLoader.__name__ == "CBoundedLoader"
    assert "CParser" in [c.__name__ for c in bounded_yaml.BoundedLoader.__mro__]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(BAD_INPUT)) for p in FILES])
def test_every_bad_input_file_reads_the_same_through_both_parsers(path):
    text = decode(path.read_bytes(), path, error=SuiteError)
    c_loader = bounded_yaml.BoundedLoader
    assert outcome(text, c_loader) == outcome(text, bounded_yaml.PureBoundedLoader) or (
        # libyaml refuses in its own words; the default reads it again for the pure ones
        outcome(text, c_loader)[0] == "refused"
        and outcome(text, None) == outcome(text, bounded_yaml.PureBoundedLoader)
    )


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_bounds_and_errors_are_the_pure_parsers(name):
    text = TRICKY[name]
    assert outcome(text, None) == outcome(text, bounded_yaml.PureBoundedLoader)


def test_a_refusal_names_the_place_in_the_pure_parsers_words():
    with pytest.raises(SuiteError) as caught:
        parse_yaml("scenarios:\n  - id: a\n    prompt: x: y\n", "s.yaml")
    assert str(caught.value).splitlines()[0] == (
        "s.yaml:3:14: YAML syntax error: mapping values are not allowed here"
    )
    with pytest.raises(SuiteError, match=r"s.yaml:3:1: duplicate key 'a' \(first at line 1\)"):
        parse_yaml("a: 1\nb: 2\na: 3\n", "s.yaml")
    with pytest.raises(SuiteError, match="nested deeper than 64 levels"):
        parse_yaml("a: " + "[" * 70 + "]" * 70 + "\n", "s.yaml")
    with pytest.raises(SuiteError, match="aliases repeat more than 10,000 values"):
        parse_yaml(TRICKY["alias bomb"], "s.yaml")


REPOSITORY = [
    path
    for path in sorted(Path(__file__).resolve().parents[2].glob("**/*.yaml"))
    if not {".venv", ".tools", "node_modules", ".git"} & set(path.parts) and _utf8(path)
]


def test_a_file_within_the_bounds_is_composed_in_c_and_reads_as_through_the_bounded_loader(
    monkeypatch,
):
    composed_here = []
    original = bounded_yaml._Bounds.compose_node
    monkeypatch.setattr(
        bounded_yaml._Bounds,
        "compose_node",
        lambda self, *args: composed_here.append(1) or original(self, *args),
    )
    read = 0
    for path in REPOSITORY:
        text = path.read_text(encoding="utf-8")
        bounded = outcome(text, bounded_yaml.BoundedLoader)
        if bounded[0] != "data":
            continue
        composed_here.clear()
        assert outcome(text, None) == bounded, path
        assert composed_here == [], path
        read += 1
    assert read > 100
