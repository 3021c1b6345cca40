"""Where the shared football-data files are: FOOTBALL_DATA_DIR, else ../shared/data/football-data
beside the repository (the files are never copied into it)."""

import os
from pathlib import Path

import pytest

FOOTBALL_DATA = Path(
    os.environ.get("FOOTBALL_DATA_DIR")
    or Path(__file__).resolve().parents[2] / "shared" / "data" / "football-data"
)

needs_football_data = pytest.mark.skipif(
    not FOOTBALL_DATA.is_dir(), reason=f"the football-data set is not at {FOOTBALL_DATA}"
)
