"""The skill-pressure layer: one turn, no tools, with and without the skill, judged by regex."""
