"""Public reads: match cards, the pages, the explorer, the day's picks, the track record, and the
premium lock deciding what a caller sees."""
