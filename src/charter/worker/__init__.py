"""Running flows: loading them, preparing the database at start-up."""
