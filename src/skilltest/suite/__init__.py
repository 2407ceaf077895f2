"""Suite files: YAML read once, validated by a shipped JSON Schema, then turned into types."""
