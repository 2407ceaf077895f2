"""The small pieces every part of the HTML report is built from, each escaping what it shows.

Everything a results file or a transcript holds is untrusted (a model wrote it, a tool returned
it): it reaches the page only through :func:`e`, which escapes it, quotes included, so that it
stays text wherever it lands (an element, an attribute), and shows each character that would
act rather than read as its code: control characters (a terminal's colour escapes, a NUL),
the direction overrides that can make text read other than it is written, lone surrogates and
non-characters. A link's target goes through :func:`href`, which makes only a relative path or
an ``http(s)`` address one.
"""

from __future__ import annotations

import json
import os
import re
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

TEXT_LIMIT = 4000
"""Most characters of one text shown (a tool result can be megabytes)."""

UNSAFE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"  # control characters but tab and newlines
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # direction marks, embeddings, overrides
    "\ud800-\udfff"  # lone surrogates (JSON can spell them; UTF-8 cannot)
    "\ufdd0-\ufdef\ufffe\uffff]"  # non-characters
)
"""Characters shown by their code rather than as themselves."""


def _code(match: re.Match[str]) -> str:
    point = ord(match.group())
    return f"\\x{point:02x}" if point < 0x100 else f"\\u{point:04x}"


def visible(text: str) -> str:
    """``text`` with each character of :data:`UNSAFE` written as its code (``\\x1b``,
    ``\\u202e``) and carriage returns as line ends."""
    return UNSAFE.sub(_code, text.replace("\r\n", "\n").replace("\r", "\n"))


def e(text: Any) -> str:
    """``text`` escaped for an element or a quoted attribute, every character visible."""
    return escape(visible(str(text)), quote=True)


def href(target: str) -> str | None:
    """``target`` as a link's ``href`` (escaped for the attribute), when it is an
    ``http(s)`` address with a host or a relative path; ``None`` for anything else
    (``javascript:``, ``data:``, ``file:``, a protocol-relative ``//host``, an absolute
    path)."""
    if UNSAFE.search(target) or any(c.isspace() for c in target):
        return None
    parts = urlsplit(target)
    if parts.scheme:
        if parts.scheme.lower() in ("http", "https") and parts.netloc:
            return escape(target, quote=True)
        return None
    if target.startswith(("/", "\\")) or not target:
        return None
    return escape(target, quote=True)


def file_href(path: str, *, link_from: Path, cwd: Path) -> str | None:
    """A link to the file ``path`` (relative to ``cwd`` unless absolute) from a page in the
    folder ``link_from``: a relative path, percent-encoded, so that no file name becomes
    another kind of link (``javascript:``, ``https:``) or ends the attribute."""
    if UNSAFE.search(path) or not path:
        return None
    target = Path(path) if Path(path).is_absolute() else cwd / path
    try:
        relative = os.path.relpath(target, link_from)
    except ValueError:  # another drive (Windows): no relative path reaches it
        return None
    return href(quote(Path(relative).as_posix(), safe="/"))


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def pre(text: Any) -> str:
    """A block of preformatted text (JSON for anything that is not a string), clipped."""
    shown = text if isinstance(text, str) else json.dumps(text, indent=1, ensure_ascii=False)
    return f"<pre>{e(clip(shown))}</pre>"


def chip(text: Any, tone: str) -> str:
    """A verdict or an outcome as a coloured label (``tone``: good, warn, bad, plain)."""
    return f'<span class="chip {e(tone)}">{e(text)}</span>'


def code_list(values: Any) -> str:
    """Patterns or tool names, each as code."""
    return " ".join(f"<code>{e(value)}</code>" for value in values or [])


def later(body: str) -> str:
    """``body`` made when its ``<details>`` opens: inside ``<noscript class="later">``, which
    a browser without JavaScript builds as any markup and a browser running scripts keeps as
    one inert text node until the page's script (:mod:`skilltest.report.script`) builds it.

    Raises:
        ValueError: ``body`` holds a ``<noscript>`` of its own (its end would end this one
            early in a browser running scripts).
    """
    if "<noscript" in body:
        raise ValueError("a body made when opened cannot hold another one")
    return f'<noscript class="later">{body}</noscript>'
