"""Prompt caching, as far as the usage figures go.

A request marks cache breakpoints with ``cache_control`` on tool definitions, system blocks or
message blocks. Everything up to the last breakpoint (tools, then system, then messages) is the
cached prefix: the first request that sends a prefix writes it to the cache
(``cache_creation_input_tokens``), later requests with the same prefix read it
(``cache_read_input_tokens``), and ``input_tokens`` counts only what follows the prefix, as the
real API reports it. The emulator never expires entries: runs last minutes, the real cache lives
five. As on the real API, a prefix shorter than :data:`MIN_CACHEABLE_TOKENS` is not cached at
all. So an offline run shows whether a client marks what it resends (the skill text, K times).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from skilltest.emulator.sse import estimate_tokens, input_tokens

MIN_CACHEABLE_TOKENS = 1024
"""The shortest prefix the API caches (Sonnet and Opus models; Haiku needs more)."""


@dataclass(frozen=True)
class InputUsage:
    """The input side of a response's usage."""

    input_tokens: int
    """Tokens after the cached prefix (all of them when nothing is cached)."""
    cache_creation_input_tokens: int = 0
    """Tokens of a prefix this request wrote to the cache."""
    cache_read_input_tokens: int = 0
    """Tokens of a prefix this request read from the cache."""


def _segments(body: Mapping[str, Any]) -> Iterator[tuple[object, bool]]:
    """Every cacheable piece of a request in cache order, and whether it is a breakpoint."""
    for tool in body.get("tools") or []:
        yield tool, isinstance(tool, Mapping) and "cache_control" in tool
    system = body.get("system")
    if isinstance(system, list):
        for block in system:
            yield block, isinstance(block, Mapping) and "cache_control" in block
    elif system:
        yield system, False
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            for block in content:
                yield block, isinstance(block, Mapping) and "cache_control" in block
        else:
            yield content, False


def _serialise(segments: list[tuple[object, bool]]) -> str:
    return json.dumps(
        [
            {key: value for key, value in segment.items() if key != "cache_control"}
            if isinstance(segment, Mapping)
            else segment
            for segment, _ in segments
        ],
        ensure_ascii=False,
        sort_keys=True,
    )


def breakpoint_prefixes(body: Mapping[str, Any]) -> list[str]:
    """The request up to each of its cache breakpoints, in order, serialised."""
    segments = list(_segments(body))
    return [_serialise(segments[: i + 1]) for i, (_, marked) in enumerate(segments) if marked]


def cached_prefix(body: Mapping[str, Any]) -> str | None:
    """The request up to its last cache breakpoint, serialised; ``None`` without one."""
    prefixes = breakpoint_prefixes(body)
    return prefixes[-1] if prefixes else None


class PromptCache:
    """The prefixes seen so far; shared by every request a server answers."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def usage(self, body: Mapping[str, Any]) -> InputUsage:
        """The input usage of ``body``; its prefixes are written to the cache.

        The longest prefix (up to a breakpoint) already in the cache is read; the rest up to the
        last breakpoint is written, as the API does for a conversation that grows turn by turn.
        """
        total = input_tokens(body)
        prefixes = [
            (estimate_tokens(prefix), hashlib.sha256(prefix.encode()).hexdigest())
            for prefix in breakpoint_prefixes(body)
        ]
        prefixes = [(min(tokens, total), key) for tokens, key in prefixes]
        prefixes = [(tokens, key) for tokens, key in prefixes if tokens >= MIN_CACHEABLE_TOKENS]
        if not prefixes:
            return InputUsage(total)
        with self._lock:
            read = max((tokens for tokens, key in prefixes if key in self._seen), default=0)
            self._seen.update(key for _, key in prefixes)
        cached = prefixes[-1][0]
        return InputUsage(
            max(1, total - cached),
            cache_creation_input_tokens=max(0, cached - read),
            cache_read_input_tokens=read,
        )
