"""Which cells ``--require-cell`` requires, on a matrix of two axes."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.errors import InputError
from skilltest.gate.cells import MatrixFile, parse_require, required

MATRIX = MatrixFile(
    path=Path("out/matrix.json"),
    layer="scenarios",
    axes=(("model", ("haiku", "opus")), ("claude", ("2.1.328", "2.1.332"))),
    planned=(
        "model=haiku,claude=2.1.328",
        "model=haiku,claude=2.1.332",
        "model=opus,claude=2.1.328",
        "model=opus,claude=2.1.332",
    ),
    cells=(),
    claims=(),
)


@pytest.mark.parametrize(
    ("specs", "wanted"),
    [
        ([], MATRIX.planned),
        (["model=opus"], ("model=opus,claude=2.1.328", "model=opus,claude=2.1.332")),
        (["claude=2.1.332"], ("model=haiku,claude=2.1.332", "model=opus,claude=2.1.332")),
        (["model=haiku,claude=2.1.332"], ("model=haiku,claude=2.1.332",)),
        (["claude=2.1.332, model=haiku"], ("model=haiku,claude=2.1.332",)),
        (
            ["model=opus", "model=haiku,claude=2.1.328"],
            (
                "model=haiku,claude=2.1.328",
                "model=opus,claude=2.1.328",
                "model=opus,claude=2.1.332",
            ),
        ),
        (["model=sonnet"], ()),
    ],
)
def test_a_spec_requires_every_cell_with_the_values_it_names(specs, wanted):
    parsed = parse_require(specs, [MATRIX])
    assert tuple(c for c in MATRIX.planned if required(c, parsed)) == wanted


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("opus", "--require-cell: 'opus': expected AXIS=VALUE[,AXIS=VALUE]"),
        ("model=", "--require-cell: 'model=': expected AXIS=VALUE[,AXIS=VALUE]"),
        ("model=opus,", "--require-cell: 'model=opus,': expected AXIS=VALUE[,AXIS=VALUE]"),
        ("agent=codex", "--require-cell: agent=codex: the results have no axis 'agent'"),
    ],
)
def test_a_malformed_spec_names_the_axes_and_values_the_file_has(spec, message):
    with pytest.raises(InputError) as caught:
        parse_require([spec], [MATRIX])
    assert str(caught.value).startswith(message)
    assert "model: haiku, opus; claude: 2.1.328, 2.1.332" in str(caught.value.fix)
    assert caught.value.location == "--require-cell"
