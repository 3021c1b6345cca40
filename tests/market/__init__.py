"""The market wing: the premium lock, walked across every public answer and against an outside
attacker."""
