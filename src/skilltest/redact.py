"""Secrets kept out of everything skilltest stores or shows.

A credential (an API key, an OAuth token, a controlled world's agent token) must never reach a
results file, a trace, a cassette, a report or the terminal, even when a model or an agent
repeats it. :class:`Redactor` replaces every secret, and every piece of one long enough to
matter, by ``[REDACTED:<NAME>]``.

A suite declares secrets of its own that are not credentials: the values it lists under
``replay: {redact: [...]}`` and the caller's values of the variables its world names. Once a
layer has loaded its suites it declares them (:func:`declare_secrets`), and every redactor made
after that keeps them out too, as ``[REDACTED:SUITE_SECRET]``.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import functools
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

CREDENTIAL_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
"""Environment variables that carry credentials to the live API."""


def per_unit_forms(secret: str) -> list[str]:
    """The forms that encode each byte or character on its own: percent-encoding of every byte
    (``%73%6b``) and ``\\uXXXX`` escapes of every character (``\\u0073\\u006b``)."""
    raw = secret.encode("utf-8")
    return [
        "".join(f"%{byte:02x}" for byte in raw),
        "".join(f"\\u{ord(char):04x}" for char in secret if ord(char) < 0x10000),
    ]


SEPARATORS = r"[\s\u00ad\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\ufeff:;,.|/'\"`_+-]"
"""What may stand between two characters of a secret's form in a text that splits it: white
space and line breaks (``fold``, ``base64 -w``, ``xxd -p``), zero-width and other invisible
characters, punctuation (``:``-separated hex, a list of characters)."""

JSON_SEPARATORS = re.compile(r"\\(?:[nrt]|u(?:00ad|200[b-f]|2060|feff))")
"""The JSON escapes of line breaks and invisible characters (a transcript is JSON): read as as
many separators as they have characters."""

_SKELETON_GAPS = re.compile(SEPARATORS.replace("+-]", "+\\\\-]") + "+")
"""Runs of separators, and backslashes (an escape may be escaped again in JSON), which a split
form is searched without."""


def skeleton(form: str) -> str:
    """``form`` lower-cased without its separators and backslashes: what a split form of it
    leaves once those are taken out of the text around it."""
    return _SKELETON_GAPS.sub("", form.lower())


def _positions(text: str) -> tuple[list[int], list[int]]:
    """For each run of the text between separators: where it starts in the skeleton, and in the
    text (for :func:`_position`)."""
    starts: list[int] = []
    at: list[int] = []
    length = last = 0
    for gap in _SKELETON_GAPS.finditer(text):
        if gap.start() > last:
            starts.append(length)
            at.append(last)
            length += gap.start() - last
        last = gap.end()
    if last < len(text):
        starts.append(length)
        at.append(last)
    return starts, at


def _position(positions: tuple[list[int], list[int]], index: int) -> int:
    """Where the skeleton's character ``index`` stands in the text."""
    starts, at = positions
    piece = bisect.bisect_right(starts, index) - 1
    return at[piece] + index - starts[piece]


def encodings(secret: str) -> list[str]:
    """The forms a secret takes once encoded, each as text that stays the same wherever the secret
    sits in a longer encoded text: percent-encoding, hex (lower case; matching ignores case), and
    base64 and URL-safe base64 at each of the three alignments (the characters that encode the
    secret's bytes alone), with and without padding when it stands alone."""
    raw = secret.encode("utf-8")
    forms = [quote(secret, safe=""), raw.hex()]
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        whole = encode(raw).decode("ascii")
        forms += [whole, whole.rstrip("=")]
        for lead in (1, 2):
            # After `lead` other bytes, the first 4 characters mix them in, and so do the last 4
            # unless the secret ends a 3-byte group.
            text = encode(b"\0" * lead + raw).decode("ascii").rstrip("=")
            tail = 0 if (lead + len(raw)) % 3 == 0 else 4
            forms.append(text[4 : len(text) - tail])
    return [form for form in forms if form and form != secret]


DECLARED = "SUITE_SECRET"
"""The name a declared secret is redacted under."""

SHORTEST_DECLARED = 4
"""A suite may declare values this short (``replay.redact`` refuses shorter ones)."""

_declared: dict[str, None] = {}
_declared_lock = threading.Lock()


def declare_secrets(values: Iterable[str]) -> None:
    """Keeps ``values`` (secrets a suite declares) out of everything this process writes from
    now on: every :class:`Redactor` made after this call replaces them too. Values shorter than
    :data:`SHORTEST_DECLARED` are ignored."""
    with _declared_lock:
        _declared.update((value, None) for value in values if len(value) >= SHORTEST_DECLARED)


def declared_secrets() -> tuple[str, ...]:
    """The secrets declared so far (:func:`declare_secrets`)."""
    with _declared_lock:
        return tuple(_declared)


@contextlib.contextmanager
def declarations_kept_apart() -> Iterator[None]:
    """What is declared inside is forgotten at its end: one command's suites' secrets are not
    the next command's (the command line runs each command inside)."""
    with _declared_lock:
        saved = dict(_declared)
    try:
        yield
    finally:
        with _declared_lock:
            _declared.clear()
            _declared.update(saved)


class Redactor:
    """Replaces secret values, and any piece of one 12 characters or longer, in what is stored.

    An agent that prints a key without its ``sk-ant-`` prefix, or a slice of it, still leaks
    the part that matters: every run of 12 or more characters that also occurs in a secret is
    replaced whole (the longest such run, not just 12 characters) by ``[REDACTED:<VARIABLE>]``.
    Shorter values (8 to 11 characters) are replaced only where they occur whole; so are the
    declared secrets (:func:`declare_secrets`) of 4 to 7 characters, as written.

    The same holds for the secret's encodings (:func:`encodings`: base64 and URL-safe base64 at
    each of the three alignments a longer encoded text can give it, percent-encoding, per byte
    too, hex, ``\\uXXXX`` escapes), and whatever the case: an agent that base64-encodes a key
    for a ``Basic`` header, or upper-cases it, leaks it all the same.

    A whole secret, or a whole encoded form, split by separators is replaced too (searched in
    the text without its separators, so nothing is compiled per secret): folded into short
    lines, base64 wrapped at any width, a zero-width space between characters, hex separated by
    colons or spaces.

    Made for transcripts of megabytes: any run of :data:`FRAGMENT` characters of a secret holds
    one of the secret's :data:`_BLOCK`-character blocks that start at a multiple of
    ``_BLOCK``, so the text is searched for those few blocks (``str.find``, in C) and each hit
    is widened to the longest run it belongs to.
    """

    MIN_LENGTH = 8
    """Shorter values are not treated as secrets (they would redact ordinary words)."""

    FRAGMENT = 12
    """The shortest piece of a secret that is redacted wherever it occurs."""

    _BLOCK = FRAGMENT // 2
    """Any FRAGMENT-long slice of a secret holds a whole block starting at a multiple of this."""

    def __init__(self, secrets: Mapping[str, str], *, placeholder: str | None = None) -> None:
        """
        Args:
            secrets: Each secret's value by its name (``[REDACTED:<NAME>]`` replaces it).
            placeholder: One text to replace every secret with instead (``[REDACTED]``).
        """
        self.placeholder = placeholder
        declared = declared_secrets()
        named = [*secrets.items(), *((DECLARED, value) for value in declared)]
        self._exact = sorted(
            (value for value in declared if len(value) < self.MIN_LENGTH), key=len, reverse=True
        )
        pairs = [
            (form.lower(), name)
            for name, value in named
            if value and len(value) >= self.MIN_LENGTH
            for form in dict.fromkeys((value, *encodings(value)))
            if len(form) >= self.MIN_LENGTH
        ]
        # Longest first, so a secret that contains another is named by the longer one.
        pairs.sort(key=lambda pair: len(pair[0]), reverse=True)
        self._whole = [
            (re.compile(re.escape(value), re.IGNORECASE), name)
            for value, name in pairs
            if len(value) < self.FRAGMENT
        ]
        # Every form split by separators (folded, wrapped, one character at a time) and the
        # per-byte forms: whole only, since a separator may stand anywhere.
        split = [
            (form, name)
            for name, value in named
            if value and len(value) >= self.MIN_LENGTH
            for form in per_unit_forms(value)
        ]
        # Searched in the text's skeleton (no separators), so nothing is compiled per secret: a
        # run's own secrets (its placeholder key, its world's tokens) cost nothing to set up.
        self._split = [
            (bare, name, value.startswith("\\"))
            for value, name in [*pairs, *split]
            if len(bare := skeleton(value)) >= self.MIN_LENGTH
        ]
        self._blocks: dict[str, list[tuple[str, str, int]]] = {}
        for value, name in pairs:
            if len(value) < self.FRAGMENT:
                continue
            for offset in range(0, len(value) - self._BLOCK + 1, self._BLOCK):
                block = value[offset : offset + self._BLOCK]
                self._blocks.setdefault(block, []).append((value, name, offset))

    def _label(self, name: str) -> str:
        return self.placeholder if self.placeholder is not None else f"[REDACTED:{name}]"

    @classmethod
    def for_environment(cls, env: Mapping[str, str]) -> Redactor:
        """A redactor for the credential variables found in ``env`` and the declared secrets:
        what this process knows to keep out. One is made for each set of them, and kept."""
        credentials = tuple((name, env[name]) for name in CREDENTIAL_VARIABLES if env.get(name))
        return _known(credentials, declared_secrets())

    def __call__(self, text: str) -> str:
        if not (self._split or self._blocks or self._whole or self._exact):
            return text  # nothing to keep out (no credential set, no secret declared)
        # One pass over both kinds of span, merged: a split form ends at its last character
        # that is not a separator, and the run it shares with the secret carries on to the
        # secret's own trailing `_` or `-`, which two passes would leave behind.
        text = self._replace(
            text,
            lambda folded: _merged([*self._split_spans(folded), *self._fragment_spans(folded)]),
        )
        for pattern, name in self._whole:
            text = pattern.sub(self._label(name), text)
        for value in self._exact:
            if value in text:
                text = text.replace(value, self._label(DECLARED))
        return text

    def _replace(self, text: str, find: Callable[[str], list[tuple[int, int, str]]]) -> str:
        """``text`` with the spans ``find`` finds replaced by their labels."""
        # Matched case-insensitively: on the lower-cased text, when lower-casing keeps every
        # position (it does for ASCII, which secrets and their encodings are), else as written.
        folded = text.lower()
        if len(folded) != len(text):
            folded = text
        spans = find(folded)
        if not spans:
            return text
        parts, last = [], 0
        for start, end, name in spans:
            parts += [text[last:start], self._label(name)]
            last = end
        return "".join([*parts, text[last:]])

    def _split_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where a whole form of a secret stands split by separators, merged, in order."""
        if JSON_SEPARATORS.search(text):
            text = JSON_SEPARATORS.sub(lambda match: " " * len(match.group()), text)
        bare = _SKELETON_GAPS.sub("", text)
        hits = [
            (hit, form, name, escaped)
            for form, name, escaped in self._split
            for hit in _finds(bare, form)
        ]
        if not hits:
            return []
        # Where the skeleton's characters stand, worked out only for a text that holds a form.
        positions = _positions(text)
        found = []
        for hit, form, name, escaped in hits:
            start = _position(positions, hit)
            end = _position(positions, hit + len(form) - 1) + 1
            # The backslashes an escaped form starts with go with it.
            while escaped and start > 0 and text[start - 1] == "\\":
                start -= 1
            found.append((start, end, name))
        return _merged(found)

    def _fragment_spans(self, text: str) -> list[tuple[int, int, str]]:
        """The runs of the text shared with a secret (FRAGMENT or longer), merged, in order."""
        found: list[tuple[int, int, str]] = []
        for block, owners in self._blocks.items():
            hit = text.find(block)
            while hit >= 0:
                for value, name, offset in owners:
                    start, end = _common_run(text, hit, value, offset, len(block))
                    if end - start >= self.FRAGMENT:
                        found.append((start, end, name))
                hit = text.find(block, hit + 1)
        return _merged(found)


@functools.lru_cache(maxsize=16)
def _known(credentials: tuple[tuple[str, str], ...], declared: tuple[str, ...]) -> Redactor:
    """A redactor for ``credentials`` and the ``declared`` secrets (those declared now: a
    redactor takes them when it is made)."""
    del declared  # the cache's key: the redactor reads them itself
    return Redactor(dict(credentials))


def _finds(text: str, form: str) -> list[int]:
    """Every place ``form`` starts in ``text``."""
    hits, hit = [], text.find(form)
    while hit >= 0:
        hits.append(hit)
        hit = text.find(form, hit + 1)
    return hits


def _merged(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans in order, those that overlap or touch made one (named by the first)."""
    found.sort(key=lambda span: (span[0], -span[1]))
    merged: list[tuple[int, int, str]] = []
    for start, end, name in found:
        if merged and start <= merged[-1][1]:
            first_start, first_end, first_name = merged[-1]
            merged[-1] = (first_start, max(first_end, end), first_name)
        else:
            merged.append((start, end, name))
    return merged


def _common_run(text: str, at: int, secret: str, offset: int, length: int) -> tuple[int, int]:
    """Widens ``text[at:at+length] == secret[offset:offset+length]`` as far as both agree."""
    start, low = at, offset
    while start > 0 and low > 0 and text[start - 1] == secret[low - 1]:
        start, low = start - 1, low - 1
    end, high = at + length, offset + length
    while end < len(text) and high < len(secret) and text[end] == secret[high]:
        end, high = end + 1, high + 1
    return start, end


def map_strings(value: Any, rule: Callable[[str], str]) -> Any:
    """``value`` (JSON-ready data: mappings, lists, tuples, scalars) with every string passed
    through ``rule``; tuples come back as lists, as JSON has them."""
    if isinstance(value, str):
        return rule(value)
    if isinstance(value, dict):
        return {key: map_strings(item, rule) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [map_strings(item, rule) for item in value]
    return value


@functools.lru_cache(maxsize=64)
def redactor_of(values: tuple[str, ...], placeholder: str) -> Callable[[str], str]:
    """One function replacing each of ``values`` by ``placeholder``: values of
    :attr:`Redactor.MIN_LENGTH` or more in every form a :class:`Redactor` knows (pieces,
    encodings, any case), shorter ones (a suite may name values of 4 characters) where they occur
    whole and as written."""
    long = Redactor(
        {str(index): value for index, value in enumerate(values)}, placeholder=placeholder
    )
    short = sorted((v for v in values if v and len(v) < Redactor.MIN_LENGTH), key=len, reverse=True)

    def redact(text: str) -> str:
        text = long(text)
        for value in short:
            if value in text:
                text = text.replace(value, placeholder)
        return text

    return redact


# --- what this process knows to be secret ----------------------------------------------------


def known_redactor(env: Mapping[str, str] | None = None) -> Callable[[str], str]:
    """The redactor of every secret this process knows: the credential variables of ``env``
    (this process's environment by default) and the secrets the suites declared
    (:func:`declare_secrets`).

    Where no run exists yet (a health check of an MCP server, an error message, ``lint``),
    this keeps a child's stderr or an exception's text from showing a secret.
    """
    return Redactor.for_environment(os.environ if env is None else env)
