"""The release gate: from results files already written, may this skill ship?

``skilltest gate NEW.json... [--baseline OLD.json...]`` reads pressure, scenario and trigger
results files and applies eight rules (nine with a matrix: ``cells``, below). Each rule gives
PASS or BLOCK with its evidence; the gate blocks when any rule does, and every BLOCK line is
one reason. What a file says about itself is a claim: its origin is taken from what answered
its runs, its figures are recomputed from its runs, and the suite and skill files it ran are
compared with the disk (the only I/O besides reading the files, done as they are read).

``offline``      Every file comes from a real model, as what answered its runs shows it, never
                 as its ``--backend`` says: an answer carrying the emulator's mark (served
                 behind ``ANTHROPIC_BASE_URL`` too), a model named ``...-emulated``, or cassettes
                 recorded against the emulator make a scripted stand-in's results: they test the
                 suite's wiring and say nothing about a real model, so they block unless
                 ``allow_offline`` (``--allow-offline``). Requests sent anywhere but the
                 Anthropic API (a loopback server, another host, named), and a file that does not
                 say what answered (written before skilltest recorded it), block alike.
``authority``    No with-skill run in a controlled world violated authority (wrote what it must
                 not, wrote twice, wrote before the user confirmed, left the world, claimed an
                 unobserved write). Without-skill runs do not count: their violations are what
                 the skill is there to prevent. Results without a world have nothing to check.
``failing``      No scenario of the pressure or scenario layer fails: ``passed: false`` as the
                 results file gives it (``regressed``, ``no-steer``, a skill-only mean credibly
                 below ``min_score``, an expected skill that did not fire, a with-skill mean below
                 ``min_score``), with its reason, unless its id matches an ``allow_failing`` glob
                 (``--allow-failing ID``). ``inconclusive`` is noise, not a failure (the
                 ``critical`` rule asks for more evidence where it matters); ``error`` is the
                 ``evidence`` rule's. Trigger queries fail the same way: a ``miss`` or
                 ``false-trigger`` is decided by the exact interval of the firing rate (wrong at
                 most 2.5% of the time); on the emulator it is listed and does not block, as a
                 trigger regression there does not. A ``regressed`` scenario that misses no bar
                 blocks only when its regression holds suite-wide (below).
``regressions``  No scenario or trigger query regressed against the previous revision
                 (``--against REF``), among the regressions that hold suite-wide (below). A
                 trigger query's regression on the emulator does not block: the emulator fires a
                 skill when its description shares words with the query, which says nothing
                 about how a real model reads a description.
``critical``     Every scenario marked ``critical: true`` (in the new results or the baseline) is
                 in the new results with judged with-skill runs and a decided verdict (an
                 ``inconclusive`` one is not enough evidence: run ``-k auto``), and, when the
                 baseline has it, its with-skill pass rate is not credibly below the baseline's:
                 the 95% exact unconditional interval of (now - baseline) lying entirely below 0
                 blocks (Newcombe's, on older files that count scores rather than passing runs);
                 a dip the interval still covers with 0 is noise and passes. A pressure run passes
                 when it meets the criteria; a scenario run when its score reaches ``min_score``
                 with no authority violation (the runs pass@k counts, ``passes``). Unscored runs
                 are left out, as in the verdicts. Results files without ``passes`` count each
                 run's score in [0, 1] as its share of a pass (the bounded mean the verdicts
                 use), on both sides of the comparison so that like is compared with like. The
                 same scenario in several files (shards) is pooled.
``evidence``     The new results are complete (not interrupted), no canary failed (the
                 comparison would not be meaningful), no scenario's verdict is ``error`` (fewer
                 than half of an arm's runs could be scored), and there is at least one scenario;
                 and, those being met, at least one scenario is decided (not inconclusive or
                 skipped) unless ``allow_undecided`` (``--allow-undecided``).
                 Unscored runs of a scenario that still has a verdict are already counted in its
                 interval: they are reported, not blocked on.

``fresh``        The suite files and the skills' and plugins' folders on disk are the ones the
                 runs read (checksums, file by file; each change named), unless
                 ``--no-stale-check`` (:mod:`skilltest.gate.trust`).
``consistent``   Every figure, verdict and the origin follow from the runs the file holds,
                 recomputed with the layers' own functions; no run is a copy of another under a
                 new id (:mod:`skilltest.merge.claims`).

Suite-wide: each ``improved`` or ``regressed`` errs at most 2.5% on its own, but a suite of
many scenarios where nothing differs shows some false one far more often (50 scenarios at K=3:
79.6%). A regression blocks only when it holds by Holm's step-down rule at 5% family-wise over
two claims per compared scenario (:mod:`skilltest.stats.family`): the chance that the gate
blocks on any false regression is at most 5%, whatever the dependence between scenarios. The
with-skill against without-skill decisions are one family, the ``--against`` decisions another.
A regression that does not hold is listed, not blocked on; ``per_scenario``
(``--per-scenario``) blocks on every one. Files written before the scenario layer recorded
``misses_a_bar`` block on every ``regressed`` scenario, as before.

A matrix's results file (``--models``, ``--claude-versions``) is gated cell by cell
(:mod:`skilltest.gate.cells`): each cell's document goes through every rule as a results file
of its own, each line naming its cell (``out/matrix.json [model=opus]``); a baseline matrix is
compared cell by cell, a single run's baseline with every cell. What the matrix's file says of
itself (the cells its axes make and it holds, their values and the model and CLI version each
ran, ``complete``, the comparisons across cells, the cells ``spending`` says were stopped) is
checked against its cells under ``consistent``. ``require_cells`` (``--require-cell
AXIS=VALUE[,AXIS=VALUE]``; none: every cell) names the cells a release needs:

``cells``        Every required cell is there (named by the plan and held by the file; a spec
                 some cell matches), complete (not interrupted, not stopped by
                 ``--max-cost-usd``), and has a decided scenario (unless ``allow_undecided``).
                 In a cell not required, a failing, regressed or critical scenario, an
                 ``error`` verdict or a failed canary is listed, not blocked on; an authority
                 violation blocks in any cell.

Each run is counted once, known by its content (all it holds but its id and timings), not by
its id. A file given twice (or a copy of one) is read once; a scenario whose runs are all in
another file's entry for it (under the same ids or others) is counted there only; two entries
that share some runs and not others are refused (:class:`InputError`). Every such case is said
in the ``evidence`` rule's lines.
"""

from skilltest.gate.read import ResultsFile, ScenarioEntry, load_results
from skilltest.gate.render import render
from skilltest.gate.rules import BLOCK, PASS, Decision, RuleOutcome, decide

__all__ = [
    "BLOCK",
    "PASS",
    "Decision",
    "ResultsFile",
    "RuleOutcome",
    "ScenarioEntry",
    "decide",
    "load_results",
    "render",
]
