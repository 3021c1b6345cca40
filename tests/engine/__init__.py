"""The engine: the mathematics, pure (no database, no web)."""
