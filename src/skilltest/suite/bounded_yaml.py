"""PyYAML's safe loader with bounds on what a small file may turn into.

Files are read through libyaml (PyYAML's C parser, ``yaml.CSafeLoader``'s) when PyYAML was built
with it, and through the pure-Python parser otherwise; the bounds (depth, aliases, duplicate
keys, tags) are kept while composing and constructing, which run the same code either way. A
file libyaml refuses is read again by the pure-Python parser, so that every error names the
place and the problem in the same words whichever parser is installed.

With libyaml, a file is first composed in C (as ``yaml.CSafeLoader`` does) and its nodes checked
against the bounds, with a margin, before anything is built; only a file near a bound, or one
refused in any way, is read again through the bounded composer, whose words every refusal keeps.

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


class _OneOfEachKey(yaml.constructor.SafeConstructor):
    """PyYAML's safe constructor, refusing a key written twice in one mapping."""

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


class _Bounds(yaml.composer.Composer, _OneOfEachKey):
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


class _Unsure(Exception):
    """A file the quick reading leaves to the bounded loader (near a bound, or refused)."""


if LIBYAML:

    class _QuickLoader(CParser, _OneOfEachKey, yaml.resolver.Resolver):
        """libyaml's parser and composer (``yaml.CSafeLoader``'s), whose nodes are checked
        against the bounds before anything is built: the common case, a small valid file,
        composed in C."""

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            _OneOfEachKey.__init__(self)
            yaml.resolver.Resolver.__init__(self)


def _quick(text: str) -> Any:
    """What ``text`` holds, read by libyaml when it is well within the bounds; :class:`_Unsure`
    for any other file (near a bound, or anything refused), which the bounded loader then
    reads, refusing in its own words."""
    loader = _QuickLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            _well_within_bounds(node)
        return loader.construct_document(node) if node is not None else None
    except Exception as exc:  # whatever it is, the bounded loader says it in its words
        raise _Unsure from exc
    finally:
        loader.dispose()


def _well_within_bounds(root: yaml.Node) -> None:
    """Raises :class:`_Unsure` unless the composed ``root`` is below every bound, counted as the
    bounded composer counts (with one to spare): a node inside itself (a recursive alias), values
    repeated through aliases, nesting with aliases expanded. A node met twice is an alias:
    libyaml composes an alias as its anchor's node."""
    shapes: dict[int, tuple[int, int]] = {}  # per node: values it stands for, levels it reaches
    open_nodes: set[int] = set()
    repeated = 0

    def shape(node: yaml.Node, depth: int) -> tuple[int, int]:
        nonlocal repeated
        key = id(node)
        if key in open_nodes:
            raise _Unsure
        if key in shapes:
            size, height = shapes[key]
            repeated += size
            if repeated >= MAX_YAML_ALIAS_NODES or depth - 1 + height >= MAX_YAML_DEPTH:
                raise _Unsure
            return size, height
        if isinstance(node, yaml.ScalarNode):
            shapes[key] = (1, 0)
            return 1, 0
        if depth >= MAX_YAML_DEPTH:
            raise _Unsure
        open_nodes.add(key)
        size, height = 1, 1
        children = (
            [part for pair in node.value for part in pair]
            if isinstance(node, yaml.MappingNode)
            else node.value
        )
        for child in children:
            child_size, child_height = shape(child, depth + 1)
            size += child_size
            height = max(height, child_height + 1)
        open_nodes.discard(key)
        shapes[key] = (size, height)
        return size, height

    shape(root, 1)


def parse(
    text: str,
    source: str,
    error: type[InputError] = SuiteError,
    loader_class: type[_Bounds] | None = None,
) -> Any:
    """What :func:`skilltest.suite.loader.parse_yaml` returns or raises (``loader_class``: the
    loader to read with, default :data:`BoundedLoader`)."""
    if loader_class is None and LIBYAML:
        try:
            return _quick(text)
        except _Unsure:
            pass  # read again, bounded as it is composed: a refusal in the bounded loader's words
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
