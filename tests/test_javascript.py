"""JavaScript patterns and JSON as Claude Code (a JavaScript program) reads and writes them.

The expected values were computed with node (``new RegExp(p, f).test(t)``, the number of
``t.match(new RegExp(p, f + "g"))``, ``JSON.stringify(x)``); each row is one place where
Python's ``regex`` reads the same text differently unless translated."""

from __future__ import annotations

import pytest

from skilltest.errors import PatternError
from skilltest.javascript import compile_js_pattern, js_json, js_json_indented, js_number, translate


@pytest.mark.parametrize(
    ("pattern", "flags", "text", "test", "count"),
    [
        ("a.c", "", "a\nc", False, 0),
        ("a.c", "s", "a\nc", True, 1),
        ("a.c", "", "a\rc", False, 0),
        ("^b", "", "a\nb", False, 0),
        ("^b", "m", "a\nb", True, 1),
        ("^b", "m", "a\rb", True, 1),
        ("a$", "", "a\n", False, 0),
        ("a$", "m", "a\nb", True, 1),
        ("a$", "m", "a\rb", True, 1),
        ("\\d+", "", "x٣y", False, 0),
        ("\\w+", "", "é", False, 0),
        ("\\bfoo\\b", "", "éfoo", True, 1),
        ("\\s", "", "", False, 0),
        ("\\s", "", " ", True, 1),
        ("[\\s]", "", "\u001c", False, 0),
        ("[\\S]", "", " ", False, 0),
        ("[\\D]", "", "5", False, 0),
        ("[^\\W]", "", "_", True, 1),
        ("FOO", "i", "foo", True, 1),
        ("(?<y>\\d{4})-\\k<y>", "", "2024-2024", True, 1),
        ("[^]", "", "\n", True, 1),
        ("[]", "", "x", False, 0),
        ("\\cJ", "", "\n", True, 1),
        ("\\u{1F600}", "u", "😀", True, 1),
        ("\\/x", "", "/x", True, 1),
        ("\\a", "", "a", True, 1),
        ("a", "y", "ba", False, 0),
        ("a", "y", "ab", True, 1),
        ("[[]", "", "[", True, 1),
        ("a|b", "", "b", True, 1),
        ("(?<=x)y", "", "xy", True, 1),
        ("(?<!x)y", "", "xy", False, 0),
        ("\\$\\d", "", "$5", True, 1),
        ("[.^$]", "", "^", True, 1),
        ("x*", "g", "abxd", True, 5),
        ("a*", "", "baa", True, 3),
        ("\\x41", "", "A", True, 1),
        ("\\t", "", "\t", True, 1),
        ("count_over_time", "i", "COUNT_OVER_TIME x count_over_time", True, 2),
        ("[a-z]+\\.md$", "", "NOTES.md\nx.md", True, 1),
        ("\\bfoo", "", "a foo", True, 1),
    ],
)
def test_a_pattern_matches_and_counts_as_javascript_does(pattern, flags, text, test, count):
    compiled = compile_js_pattern(pattern, flags, "case.yaml#/graders/0/pattern")
    assert (compiled.matches(text), compiled.count(text)) == (test, count)


def test_the_translation_keeps_what_it_need_not_change():
    assert translate("checkout: \\d+ errors", "") == "checkout: [0-9]+ errors"
    assert translate("[a-z]+", "i") == "[a-z]+"


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(x", "invalid regular expression '(x'"),
        ("x\\", "invalid regular expression /x\\/: \\ at end of pattern"),
        ("\\c1", "invalid regular expression /\\c1/: \\c must be followed by a letter"),
    ],
)
def test_a_pattern_that_does_not_compile_names_its_place(pattern, message):
    with pytest.raises(PatternError) as caught:
        compile_js_pattern(pattern, "", "graders/x.md (pattern)")
    assert str(caught.value).startswith(f"graders/x.md (pattern): {message}")


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (1e-07, "1e-7"),
        (1e-05, "0.00001"),
        (1e21, "1e+21"),
        (100000000000000000000, "100000000000000000000"),
        (2, "2"),
        (0.1, "0.1"),
        (123.456, "123.456"),
        (1.5e-10, "1.5e-10"),
        (-3.25, "-3.25"),
        (1234567890123456800, "1234567890123456800"),
        (1e-06, "0.000001"),
        (1.5e-06, "0.0000015"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (100, "100"),
        (0.5, "0.5"),
    ],
)
def test_numbers_are_written_as_javascript_writes_them(value, written):
    assert js_number(value) == written


def test_json_is_compact_and_keeps_key_order_and_text_as_written():
    value = {"b": 1, "a": [True, None, 2.0, 'é\n"x"'], "c": {"d": 1e-7}}
    assert js_json(value) == '{"b":1,"a":[true,null,2,"é\\n\\"x\\""],"c":{"d":1e-7}}'
    assert js_json(2**60) == "1152921504606847000"  # JSON.stringify(2 ** 60) in node
    assert js_json_indented({"service": "checkout", "n": [1]}) == (
        '{\n  "service": "checkout",\n  "n": [\n    1\n  ]\n}'
    )
