"""The schema migrations: ``NNN_what.py`` steps applied in order by ``flask db upgrade``."""
