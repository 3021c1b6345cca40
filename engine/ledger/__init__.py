"""The ledger's mathematics: entries and commitments in canonical JSON, the Merkle tree over them,
and signed notes and checkpoints."""
