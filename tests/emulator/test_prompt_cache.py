"""Prompt caching in the emulator's usage figures: written once, read after, minimum length."""

from skilltest.emulator.prompt_cache import MIN_CACHEABLE_TOKENS, PromptCache, cached_prefix

LONG = "skill text " * (MIN_CACHEABLE_TOKENS // 2)  # comfortably above the minimum


def request(system_text: str, user: str, *, mark: bool = True) -> dict:
    block = {"type": "text", "text": system_text}
    if mark:
        block["cache_control"] = {"type": "ephemeral"}
    return {"system": [block], "messages": [{"role": "user", "content": user}]}


def test_a_marked_prefix_is_written_once_then_read():
    cache = PromptCache()
    first = cache.usage(request(LONG, "one"))
    second = cache.usage(request(LONG, "two"))
    assert first.cache_creation_input_tokens > MIN_CACHEABLE_TOKENS
    assert first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0
    # Only what follows the prefix (the user message, and the request's JSON framing in this
    # estimate) is counted as uncached input.
    assert 0 < second.input_tokens < 50


def test_nothing_is_cached_without_a_mark_or_below_the_minimum():
    cache = PromptCache()
    for _ in range(2):
        unmarked = cache.usage(request(LONG, "x", mark=False))
        short = cache.usage(request("short skill", "x"))
        assert unmarked.cache_creation_input_tokens == unmarked.cache_read_input_tokens == 0
        assert short.cache_creation_input_tokens == short.cache_read_input_tokens == 0
        assert unmarked.input_tokens > MIN_CACHEABLE_TOKENS


def test_the_prefix_ends_at_the_last_breakpoint_and_ignores_the_marks_themselves():
    body = {
        "tools": [{"name": "Bash"}],
        "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "after"}]}],
    }
    assert cached_prefix(body) == '[{"name": "Bash"}, {"text": "s", "type": "text"}]'
    assert cached_prefix({"system": "plain", "messages": []}) is None


def test_a_growing_conversation_reads_the_longest_cached_prefix_and_writes_the_rest():
    cache = PromptCache()
    system = [{"type": "text", "text": LONG, "cache_control": {"type": "ephemeral"}}]

    def turn(*texts: str) -> dict:
        messages = [
            {"role": "user", "content": [{"type": "text", "text": text * 300}]} for text in texts
        ]
        messages[-1]["content"][0]["cache_control"] = {"type": "ephemeral"}
        return {"system": system, "messages": messages}

    first = cache.usage(turn("a"))
    second = cache.usage(turn("a", "b"))
    assert first.cache_read_input_tokens == 0
    # The first request wrote the prefix up to each of its marks, the system prompt's among them.
    # The second marks the system prompt and its own last turn: it reads the system prompt and
    # writes the rest.
    system_only = PromptCache().usage({"system": system, "messages": []})
    assert second.cache_read_input_tokens == system_only.cache_creation_input_tokens
    assert second.cache_creation_input_tokens > 0
    total_second = cache.usage(turn("a", "b"))  # the same request again: all of it is read
    assert total_second.cache_read_input_tokens == (
        second.cache_read_input_tokens + second.cache_creation_input_tokens
    )
