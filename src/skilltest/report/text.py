"""Text shown to a person: answers and evidence cut to a readable length."""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skilltest.repetitions import Repetitions


CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and line feed, DEL, C1 controls, bidirectional embeddings, overrides and
isolates: characters that act on a terminal, or reorder what is read, rather than show."""


def escape_controls(text: str, *, also: str = "") -> str:
    """``text`` with every control character (and those of the character class body ``also``)
    written as a visible ``\\uXXXX`` escape (valid in a JSON string as well)."""
    pattern = _with(also) if also else CONTROLS
    return pattern.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


@functools.cache
def _with(also: str) -> re.Pattern[str]:
    return re.compile(CONTROLS.pattern[:-1] + also + "]")


def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def k_cell(k: int, plan: Repetitions | None) -> str:
    """Runs per arm taken: ``4/10`` for an adaptive plan (taken of the most), ``3`` for fixed K."""
    if plan is not None and plan.adaptive and k:
        return f"{k}/{plan.most}"
    return str(k)


OFFLINE_COST = "nothing spent: the emulator charges nothing"
"""What an offline run's cost is: the CLI prices the stand-in's tokens at list prices, but no
one was charged."""


def cost_per_pass(label: str, costs: list[float], passes: int, *, offline: bool = False) -> str:
    """One arm's cost per passing run: its runs' whole cost (failing runs included) over its
    passes; says so when no run reported a cost, none passed, or the cost was 0 (the backend
    charged nothing). ``offline``: the emulator answered, so the cost is only what the tokens
    would cost at list prices, and nothing was spent."""
    if not costs:
        return f"{label} cost unknown (no run reported one)"
    if offline:
        if passes == 0:
            return f"{label} no passing run ({OFFLINE_COST}; ${sum(costs):.4f} at list prices)"
        runs = "run" if passes == 1 else "runs"
        return (
            f"{label} {OFFLINE_COST} (${sum(costs) / passes:.4f} at list prices; "
            f"{passes} passing {runs})"
        )
    if passes == 0:
        return f"{label} no passing run (${sum(costs):.4f} spent)"
    if sum(costs) == 0:
        return f"{label} $0 (the backend reported a cost of 0)"
    runs = "run" if passes == 1 else "runs"
    return f"{label} ${sum(costs) / passes:.4f} ({passes} passing {runs})"


def inconclusive_line(count: int, *, allowed: bool) -> str:
    """The summary line for ``count`` inconclusive scenarios."""
    return (
        f"{count} inconclusive: the intervals do not decide yet; run more repetitions "
        "(-k N, or -k auto --max-k N)" + (" (not failing: --allow-inconclusive)" if allowed else "")
    )


CONSISTENT = 0.5
"""Below this pass^k, a scenario that passes on its mean gets a note in the table."""


def consistency_note(runs: int, passes: int, k: int) -> str:
    """A note for the table when pass^k tells another story than the mean: the scenario passes
    on its rate or mean, yet ``k`` runs in a row all pass less than half the time. The caller
    asks only for scenarios that pass; elsewhere the mean and its interval say enough, and the
    results file always holds pass@k and pass^k.

    Args:
        runs: Judged (scored) runs of the with-skill arm.
        passes: Those that passed on their own.
        k: The k of pass^k (used up to ``runs``).
    """
    from skilltest.stats import pass_hat_k

    k = min(k, runs)
    every = pass_hat_k(runs, passes, k) if runs else None
    if k < 2 or every is None or every >= CONSISTENT:
        return ""
    return f"pass^{k} {100 * every:.0f}%: all of {k} runs pass less than half the time"
