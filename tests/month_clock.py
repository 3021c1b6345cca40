"""A clock the month's test advances and every process reads: an ISO 8601 instant in a file.

The web processes (``tests.month_wsgi``), the workers (``tests.month_worker``) and the fake
upstreams all read the file each time they ask the time, so one write moves them all.
"""

import os
from datetime import datetime
from pathlib import Path


class FileClock:
    """The instant written in ``path`` (aware, UTC); ``set`` moves it."""

    def __init__(self, path):
        self.path = Path(path)

    def __call__(self) -> datetime:
        """The instant the file holds."""
        return datetime.fromisoformat(self.path.read_text().strip())

    def set(self, moment: datetime) -> None:
        """Move the clock to ``moment`` (written whole, then renamed: no reader sees half)."""
        draft = self.path.with_suffix(".next")
        draft.write_text(moment.isoformat())
        os.replace(draft, self.path)


def from_environment() -> FileClock:
    """The clock ``MONTH_CLOCK_FILE`` names."""
    return FileClock(os.environ["MONTH_CLOCK_FILE"])
