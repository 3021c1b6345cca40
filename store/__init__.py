"""Storage below the tables: connections and snapshots (database), column types (fields), bulk
rows (bulk) and the schema's creation (schema)."""
