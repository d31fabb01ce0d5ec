"""Definitions in Python: flows (pure; no database)."""
