"""skilltest: does an agent skill really change how a model behaves?"""

__version__ = "0.1.0"
