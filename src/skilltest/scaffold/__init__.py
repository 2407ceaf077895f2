"""``skilltest init``: a first pressure, scenario and trigger suite for a skill or a plugin.

``target``  what is scaffolded: the skill (or a plugin's skills), its project and its neighbours
``words``   requests derived from a description that the emulator's stand-in tells apart
``render``  the suites, their model scripts, a Makefile snippet and ignore entries, as text
``write``   puts them on disk without overwriting anything

The files run green at once on the emulator (offline); what only the skill's author can know is
marked with ``# TODO:`` comments, which ``skilltest validate`` lists (:mod:`skilltest.suite.todo`).
"""

from skilltest.scaffold.render import Answers, GeneratedFile, render_scaffold
from skilltest.scaffold.target import SkillToTest, Target, read_target
from skilltest.scaffold.write import Written, write_scaffold

__all__ = [
    "Answers",
    "GeneratedFile",
    "SkillToTest",
    "Target",
    "Written",
    "read_target",
    "render_scaffold",
    "write_scaffold",
]
