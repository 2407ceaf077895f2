"""How a run flows, the same way in every layer: options in, results out.

::

    options ──> suites ──> plan ──> runs ──> transcripts ──> scores ──> verdicts ──> results
                 │          │        │                                                │
              select     repeat   backend, tape (record/replay),            write_outputs: results
              (--only)   (-k)     --against (a previous revision)           JSON, JUnit, Markdown,
                                                                            HTML

Each layer (``skilltest.pressure``, ``skilltest.scenarios``, ``skilltest.triggers``) has one
entry point, ``run(options, observer=...)``, that takes its typed options and returns its typed
results. What the layers do alike lives here once:

``options``   the options every layer takes (``RunOptions``, ``ComparedOptions``) and the
              ``Observer`` a caller watches a run through
``tape``      ``record``/``replay``/``record_missing``, checked, and how a results file says so
``plan``      which scenarios run (``only``), how many times (``repeat``), no id twice
``loop``      running a layer's asynchronous work from synchronous code, interrupts kept whole

The outputs a run writes (``Outputs``) and the one function that writes them
(``write_outputs``) are in :mod:`skilltest.report.outputs`.
"""
