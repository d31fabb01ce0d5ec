"""Compiling definitions into the hashed CompiledWorkflow artifact (pure; no database)."""
