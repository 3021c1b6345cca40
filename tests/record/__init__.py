"""The record: settlement, the signed ledger, its tiles and verifier, time-stamps and witnesses."""
