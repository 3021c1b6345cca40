"""A match's market as several wings read it: the stored quotes as price cubes and the odds
summaries made from them, and the premium rule deciding what of a match with a locked pick a
caller sees."""
