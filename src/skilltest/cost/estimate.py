"""Tokens and cost of runs, estimated from their text before anything is called. Pure.

**Tokens** are counted as about four characters each (:func:`tokens`), the usual rule of thumb
for English text and code with Claude's tokenizers (real counts differ by some 10-20% either
way; the emulator counts the same way, so offline estimates and offline runs agree closely).

**One turn** (the pressure layer): a request reads the system prompt (the skill, in the
with-skill arm) and the prompt, plus :data:`ONE_TURN_FRAMING_TOKENS`; the answer is assumed to
be :data:`ONE_TURN_ANSWER_TOKENS` long (at most ``max_tokens``), since no text says how long
a model will answer. A system prompt of :data:`MIN_CACHEABLE_TOKENS` or more is marked for the
prompt cache: the first request of a suite writes it, the others read it.

**A CLI run** (scenarios, triggers) is a conversation. Its first request reads what the pinned
``claude`` CLI sends before the user's words, :data:`CLI_CONTEXT_TOKENS` (its system prompt,
tool definitions and the context it adds to the first message, measured on the committed
cassettes), the listing of the installed skills (name and description, plus
:data:`SKILL_LISTING_TOKENS` each) and the prompt. Each further request reads all of it again
plus :data:`GROWTH_TOKENS` more (the last tool call and its result) and, with the skill, its
body once it fired. A scenario run is assumed to take :data:`REQUESTS_PER_PROMPT` requests per
user message, a trigger run :data:`REQUESTS_PER_TRIGGER_RUN` (it ends at the call that decides
it); each request writes :data:`OUTPUT_TOKENS_PER_REQUEST`. The CLI caches the conversation as it
grows: each request reads the previous one's context from the cache and writes what is new, and
its first request reads the CLI's own context (written by the first run of a suite's arm).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from skilltest.cost.prices import usd
from skilltest.fields import field_sum

CHARS_PER_TOKEN = 4
"""About how many characters make a token."""

ONE_TURN_FRAMING_TOKENS = 20
"""What a one-turn request adds to its text: roles, blocks, the framing of the messages."""
ONE_TURN_ANSWER_TOKENS = 400
"""The assumed length of a one-turn answer (a few paragraphs), at most ``max_tokens``."""
MIN_CACHEABLE_TOKENS = 1024
"""The shortest system prompt the API caches (Sonnet and Opus; Haiku needs 2048)."""

CLI_CONTEXT_TOKENS = 15_580
"""What claude 2.1.328 sends before the user's words in a run's first request: its system
prompt, its tool definitions and the context it adds to the first message, with no skill
installed. Measured on ``tests/cassettes/lgtm/investigate-error-spike/without_skill.yaml``
(15,611 tokens in the first request, less its 29-token prompt); a test keeps it in line with
the cassettes. MCP servers and a controlled world add their tools (the tickets suites: about
900 more)."""
SKILL_LISTING_TOKENS = 20
"""What the listing of one installed skill adds besides its name and description."""
REQUESTS_PER_PROMPT = 5
"""Model requests a scenario run makes per user message (the prompt and each later turn): a
few tool calls and an answer. The example suites take 2 to 5 on the emulator."""
REQUESTS_PER_TRIGGER_RUN = 2
"""Model requests of a trigger run, which ends at the call that decides it (1 to 3 in the
example suites)."""
GROWTH_TOKENS = 500
"""How much the context grows per request: a tool call and its result."""
OUTPUT_TOKENS_PER_REQUEST = 150
"""What one request of a CLI run writes: a tool call with a sentence, or a short answer."""
DEFAULT_CLI_MODEL = "opus"
"""The model a CLI run without ``model:`` is priced as: the pinned CLI's default asks for an
Opus model."""


def tokens(text: str | None) -> int:
    """About how many tokens ``text`` is: a quarter of its characters, rounded up."""
    if not text:
        return 0
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


@dataclass(frozen=True)
class Tokens:
    """Estimated requests, tokens and cost."""

    requests: int = 0
    """Model requests."""
    input: int = 0
    """Input tokens read without the cache."""
    cache_write: int = 0
    """Input tokens written to the prompt cache."""
    cache_read: int = 0
    """Input tokens read from the prompt cache."""
    output: int = 0
    """Output tokens."""
    usd: float = 0.0
    """What they cost at list prices."""

    @property
    def read(self) -> int:
        """Every input token, cached or not."""
        return self.input + self.cache_write + self.cache_read

    def __add__(self, other: Tokens) -> Tokens:
        return field_sum(self, other)

    def times(self, count: int) -> Tokens:
        """``count`` runs like this one."""
        return Tokens(
            self.requests * count,
            self.input * count,
            self.cache_write * count,
            self.cache_read * count,
            self.output * count,
            self.usd * count,
        )


def priced(
    model: str | None,
    *,
    requests: int,
    input: int = 0,
    cache_write: int = 0,
    cache_read: int = 0,
    output: int = 0,
) -> Tokens:
    """Token counts with their cost on ``model``."""
    cost = usd(model, input=input, output=output, cache_write=cache_write, cache_read=cache_read)
    return Tokens(requests, input, cache_write, cache_read, output, cost)


def one_turn(
    system: str | None, prompt: str, *, max_tokens: int, model: str | None, cached: bool = False
) -> Tokens:
    """One single-turn request; ``cached``: its system prompt is read from the prompt cache
    (it is long enough, and an earlier request wrote it)."""
    system_tokens = tokens(system)
    rest = tokens(prompt) + ONE_TURN_FRAMING_TOKENS
    answer = min(max_tokens, ONE_TURN_ANSWER_TOKENS)
    if system_tokens >= MIN_CACHEABLE_TOKENS:
        read, write = (system_tokens, 0) if cached else (0, system_tokens)
        return priced(
            model, requests=1, input=rest, cache_write=write, cache_read=read, output=answer
        )
    return priced(model, requests=1, input=system_tokens + rest, output=answer)


def listing(skills: Sequence[tuple[str, str | None]]) -> int:
    """The tokens of the listing of installed skills (name, description)."""
    return sum(
        tokens(name) + tokens(description) + SKILL_LISTING_TOKENS for name, description in skills
    )


@dataclass(frozen=True)
class Conversation:
    """What one CLI run reads and writes."""

    first: int
    """Tokens of the first request: the CLI's context, the skill listing, the prompt."""
    requests: int
    """Model requests."""
    skill_body: int = 0
    """Tokens of the skill's body, read from the second request on (the with-skill arm)."""
    context: int = CLI_CONTEXT_TOKENS
    """The CLI's own context in ``first``, read from the cache by all but a suite's first run."""
    later_turns: Sequence[int] = field(default_factory=tuple)
    """Tokens of each later user message (scenario ``turns``)."""


def conversation(run: Conversation, *, model: str | None, warm: bool = True) -> Tokens:
    """One CLI run's tokens and cost (see the module's docstring); ``warm``: the CLI's context
    is in the cache already (every run of a suite's arm but its first)."""
    contexts = []
    size = run.first
    per_turn = max(1, run.requests // (1 + len(run.later_turns)))
    turn_sizes = iter(run.later_turns)
    for request in range(run.requests):
        if request:
            size += GROWTH_TOKENS + (run.skill_body if request == 1 else 0)
            if request % per_turn == 0:
                size += next(turn_sizes, 0)
        contexts.append(size)
    cached_context = run.context if warm else 0
    return priced(
        model or DEFAULT_CLI_MODEL,
        requests=run.requests,
        cache_read=cached_context + sum(contexts[:-1]),
        cache_write=contexts[-1] - cached_context,
        output=OUTPUT_TOKENS_PER_REQUEST * run.requests,
    )
