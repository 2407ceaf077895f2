"""The scenario layer: multi-turn runs of the real claude CLI, with and without the skill."""
