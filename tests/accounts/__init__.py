"""Accounts: registration and sign-in, users as operators see them, quotas."""
