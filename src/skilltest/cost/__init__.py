"""What runs cost: prices per model, estimates made before a run, and the budget of one. Pure.

``prices``    the price table (US dollars per million tokens: input, output, cache write,
              cache read) and the cost of token counts; the Message Batches discount
``estimate``  tokens and cost of a run from its text, before anything is called
              (``--dry-run``), and the constants the estimate assumes
``budget``    ``--max-cost-usd``: the spent cost and the estimate of the runs in flight,
              and whether a next run may start
``render``    the dry run's table

The room sits with the foundations: it reads and writes no file and imports only numbers, so
the layers (which estimate their runs and keep their budget) and the reports can all use it.
"""
