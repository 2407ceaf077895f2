"""Eval formats skill authors already write, read unchanged at the boundary.

Each foreign format has one module that reads it into skilltest's own suite document (the
document ``suite/schemas/`` validates and the layers' ``suite.py`` types), as ``evalcases/``
does for Claude Code's plugin eval cases; :mod:`skilltest.formats.detect` names the format of a
file from its content, so that ``validate`` says what it read and a layer refuses a file of
another layer's format with the command that runs it.

* :mod:`skilltest.formats.skill_creator`: Anthropic's skill-creator, its trigger eval set (a
  bare JSON list of ``{query, should_trigger}``) as a trigger suite and its ``evals/evals.json``
  as a scenario suite;
* :mod:`skilltest.formats.waza`: microsoft/waza's ``eval.yaml`` and its task files as a
  scenario suite.
"""
