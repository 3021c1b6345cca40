"""The record: settlement of picks, the signed append-only log of live picks, and third-party
time-stamps."""
