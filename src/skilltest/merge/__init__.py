"""``skilltest merge``: the results files of a run's shards (``--shard i/n``) as one results file.

A shard runs whole units (a scenario with all its arms and repetitions; a trigger query with all
its runs), so every verdict, interval and count of a unit is already final in its shard: merging
puts the units back in suite order, recomputes what spans units (the scenario layer's summary
and canary, the trigger layer's per-suite metrics and description comparisons) with the
functions the layers use, and joins the provenance. The merged file equals what one unsharded
run of the same runs would have written, but for timings, run ids and the provenance's own id,
date and command.

Shards are refused, each with the file, the place and the fix (exit 2), when they are not of
one run: another layer, other suites (checksums), another skilltest or claude version, another
backend, another selection of scenarios, or another value of an option that can change a
verdict; and when one is missing or given twice.
"""

from __future__ import annotations

from skilltest.merge.shards import Shards, merge, read_shards

__all__ = ["Shards", "merge", "read_shards"]
