"""The store: connections, bulk rows, schema migrations, on SQLite and PostgreSQL."""
