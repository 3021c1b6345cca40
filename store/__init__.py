"""Storage below the tables: connections and snapshots (database), the data version's watch
(versioning), column types (fields), bulk rows (bulk) and the schema's migrations (migrate)."""
