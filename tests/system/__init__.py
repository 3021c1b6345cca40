"""The house as a whole: its layout, documents, configuration, deployment, faults, benches,
generated client, CLI."""
