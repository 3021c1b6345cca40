"""Accounts: credentials, users as operators see them, and the monthly Data API quotas."""
