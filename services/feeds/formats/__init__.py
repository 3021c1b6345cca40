"""The formats the feeds read: football-data.co.uk's CSV files and The Odds API's JSON answers
parsed into match records, the bounds a quoted market must keep, and the text of a data file.
Pure: no Flask, no database, nothing of the project but the engine's records and the leaves."""
