"""Revision A/B: --against REF."""
