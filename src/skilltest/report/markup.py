"""The small pieces every part of the HTML report is built from, each escaping what it shows.

Everything a results file or a transcript holds is untrusted (a model wrote it, a tool returned
it): it reaches the page only through :func:`e`, which escapes it, quotes included, so that it
stays text wherever it lands (an element, an attribute).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

TEXT_LIMIT = 4000
"""Most characters of one text shown (a tool result can be megabytes)."""


def e(text: Any) -> str:
    """``text`` escaped for an element or a quoted attribute."""
    return escape(str(text), quote=True)


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
