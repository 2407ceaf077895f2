"""PyYAML's safe loader with bounds on what a small file may turn into.

Files are read through libyaml (PyYAML's C parser, ``yaml.CSafeLoader``'s) when PyYAML was built
with it, and through the pure-Python parser otherwise; the bounds (depth, aliases, duplicate
keys, tags) are kept while composing and constructing, which run the same code either way. A
file libyaml refuses is read again by the pure-Python parser, so that every error names the
place and the problem in the same words whichever parser is installed.

Its own module so that only reading a file imports PyYAML: ``skilltest.suite.loader``, which
every command imports, stays light.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, NoReturn

import yaml
import yaml.constructor

from skilltest.errors import InputError, SuiteError
from skilltest.limits import MAX_YAML_ALIAS_NODES, MAX_YAML_DEPTH

MERGE_TAG = "tag:yaml.org,2002:merge"
"""The tag of ``<<``, whose keys a mapping may override."""


class Refused(yaml.MarkedYAMLError):
    """A file the bounded loader will not build, with the mark of the place and a fix."""

    def __init__(self, problem: str, mark: Any, fix: str) -> None:
        super().__init__(problem=problem, problem_mark=mark)
        self.fix = fix


class _Bounds(yaml.composer.Composer, yaml.constructor.SafeConstructor):
    """PyYAML's safe composer and constructor with bounds on what a small file may turn into.

    Composing tracks, for every node, how many nodes it stands for with aliases expanded and
    how deep it reaches; an alias adds what its anchor stands for. So nesting, recursive
    aliases and alias bombs are refused while composing, before anything is built (PyYAML
    shares an anchored value between its aliases, but everything that walks the data later,
    the schema validation among it, walks each repetition).
    """

    def _start_bounds(self) -> None:
        self._open: list[list[int]] = []
        """Per node being composed, root first: [values it stands for, aliases expanded (itself
        and its keys included); the levels of mappings and lists it reaches (0 for a scalar)]."""
        self._open_anchors: set[str] = set()
        self._shapes: dict[str, tuple[int, int]] = {}
        """Per anchor: the size and height of its node, as in ``_open``."""
        self._repeated = 0
        """Nodes that aliases added, counted expanded."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[attr-defined]  # the parser's
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open_anchors:
                raise Refused(
                    f"the alias *{event.anchor} repeats a value that contains it (endless)",
                    event.start_mark,
                    "an alias may only repeat a value that is complete where the alias stands",
                )
            node = super().compose_node(parent, index)  # refuses undefined aliases
            size, height = self._shapes[str(event.anchor)]
            self._repeated += size
            if self._repeated > MAX_YAML_ALIAS_NODES:
                raise Refused(
                    f"aliases repeat more than {MAX_YAML_ALIAS_NODES:,} values "
                    f"(*{event.anchor} alone stands for {size:,})",
                    event.start_mark,
                    "write the values out, or repeat less through aliases "
                    "(nested aliases multiply)",
                )
            self._check_depth(len(self._open) + height, event.start_mark)
            self._add_to_parent(size, height)
            return node
        collection = not isinstance(event, yaml.ScalarEvent)
        if collection:
            self._check_depth(len(self._open) + 1, event.start_mark)
        anchor = event.anchor
        if anchor is not None:
            self._open_anchors.add(anchor)
        self._open.append([1, 1 if collection else 0])
        node = super().compose_node(parent, index)
        size, height = self._open.pop()
        if anchor is not None:
            self._open_anchors.discard(anchor)
            self._shapes[anchor] = (size, height)
        self._add_to_parent(size, height)
        return node

    def _add_to_parent(self, size: int, height: int) -> None:
        if self._open:
            shape = self._open[-1]
            shape[0] += size
            shape[1] = max(shape[1], height + 1)

    @staticmethod
    def _check_depth(depth: int, mark: Any) -> None:
        if depth > MAX_YAML_DEPTH:
            raise Refused(
                f"nested deeper than {MAX_YAML_DEPTH} levels",
                mark,
                "flatten the structure; suites and model scripts need only a few levels "
                "(a value repeated through an alias counts as deep as the original)",
            )

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        # YAML keeps the last of two equal keys without a word: `prompt:` written twice in a
        # scenario would silently drop the first. Merged keys (`<<: *base`) may be overridden.
        first: dict[object, Any] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == MERGE_TAG:
                continue
            key = self.construct_object(key_node)
            if key in first:
                raise Refused(
                    f"duplicate key {key!r} (first at line {first[key].line + 1})",
                    key_node.start_mark,
                    "keep one of the two; YAML would silently use only the last",
                )
            first[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


class PureBoundedLoader(
    _Bounds, yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, yaml.resolver.Resolver
):
    """The bounded loader on PyYAML's pure-Python parser (``yaml.SafeLoader``'s)."""

    def __init__(self, stream: str) -> None:
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self._start_bounds()


LIBYAML = bool(getattr(yaml, "__with_libyaml__", False))
"""PyYAML was built with libyaml: files are parsed in C."""

BoundedLoader: type[_Bounds] = PureBoundedLoader
"""The bounded loader files are read with: on libyaml's parser when there is one."""

if LIBYAML:
    from yaml._yaml import CParser

    class CBoundedLoader(_Bounds, CParser, yaml.resolver.Resolver):
        """The bounded loader on libyaml's parser (``yaml.CSafeLoader``'s): the events come from
        C, and are composed (with the bounds) and constructed here."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)
            self._start_bounds()

    BoundedLoader = CBoundedLoader


def parse(
    text: str,
    source: str,
    error: type[InputError] = SuiteError,
    loader_class: type[_Bounds] | None = None,
) -> Any:
    """What :func:`skilltest.suite.loader.parse_yaml` returns or raises (``loader_class``: the
    loader to read with, default :data:`BoundedLoader`)."""
    try:
        return _load(text, loader_class or BoundedLoader)
    except yaml.YAMLError as exc:
        refusal = exc
        if loader_class is None and BoundedLoader is not PureBoundedLoader:
            try:  # the refusal in the pure-Python parser's words, at its place
                _load(text, PureBoundedLoader)
            except yaml.YAMLError as pure:
                refusal = pure
        _refuse(refusal, source, error)


def _load(text: str, loader_class: type[_Bounds]) -> Any:
    loader: Any = loader_class(text)  # type: ignore[call-arg]
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _refuse(exc: yaml.YAMLError, source: str, error: type[InputError]) -> NoReturn:
    """Raises ``error`` for what the loader refused, at ``source:line:column``."""
    mark = getattr(exc, "problem_mark", None)
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
    if isinstance(exc, Refused):
        raise error(str(exc.problem), location=where, fix=exc.fix) from None
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    if context and problem.startswith("but "):  # "expected a single document..., but found"
        problem = f"{context}, {problem}"
    if isinstance(exc, yaml.constructor.ConstructorError):
        raise error(
            f"YAML value not allowed: {problem}",
            location=where,
            fix="suites and model scripts hold plain text, numbers, lists and mappings: "
            "remove the tag (!!...), or quote the value",
        ) from exc
    raise error(
        f"YAML syntax error: {problem}",
        location=where,
        fix="check indentation and quoting; quote patterns that contain ': ' or start with *",
    ) from exc
