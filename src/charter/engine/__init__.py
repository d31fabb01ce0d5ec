"""The client of charter's SQL API (sync for now)."""
