"""What a person (or CI) reads: tables, progress, results files, JUnit XML."""
