"""Text shown to a person: answers and evidence cut to a readable length."""

from __future__ import annotations


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def snippet(text: str, start: int, end: int, context: int = 30) -> str:
    """The match ``text[start:end]`` with ``context`` characters around it, on one line."""
    left = max(0, start - context)
    right = min(len(text), end + context)
    inner = text[left:right].replace("\n", " ")
    return ("…" if left else "") + inner + ("…" if right < len(text) else "")
