"""The first day: the history the model needs, fetched and stored by the sync, then the first
walk-forward backfill (``flask data bootstrap``, the ``data-bootstrap`` operation).

The earlier seasons of the configured leagues (``FOOTBALL_DATA_LEAGUES``) come from
football-data's season files, ``{FOOTBALL_DATA_URL}/mmz4281/<yyzz>/<Div>.csv``: the current
season's and the ``seasons`` before it (by default the goal model's three-season window). They
go through the sync itself (``services.feeds.sync.run`` of football-data with those season
folders): the same conditional fetches, team names, import, price history and validators, and
the fixtures it brings predicted live. A season file the source does not serve (404, or no such
file in a local folder) is reported under ``missing`` and the rest goes on. Then the model is
backfilled walk-forward (``services.forecasting.predictions.backfill``) when the fetch stored
something or nothing was backfilled yet.

Running it again asks every file conditionally (304, or the same body: nothing stored) and,
with nothing new, skips the backfill: it changes nothing.
"""

import time
from datetime import datetime

from errors import SourceNotConfigured
from models import Prediction
from services.feeds import sync
from services.feeds.formats import footballdata
from services.feeds.sources import football_data, http
from services.forecasting import predictions
from store.database import writing

#: Earlier seasons fetched by default: the goal model's window is three seasons
#: (``engine.model.walkforward.ModelConfig.window_days``).
DEFAULT_SEASONS = 3

#: The most earlier seasons one bootstrap fetches (football-data's files go back to 1993/94).
MAX_SEASONS = 30

#: How the sync's errors (or skipped calls) say a file is not there: an HTTP answer, or a
#: local folder's.
NOT_SERVED = ("HTTP 404", "HTTP 410", "No such file or directory", "not served")


def season_codes(now: datetime, earlier: int) -> list[str]:
    """football-data's folders of the ``earlier`` seasons before ``now``'s and of ``now``'s own,
    oldest first: ``["2122", "2223", "2324"]`` for two earlier seasons in 2023/24."""
    start = int(footballdata.season_label(now.date())[:4])
    return [f"{year % 100:02d}{(year + 1) % 100:02d}" for year in range(start - earlier, start + 1)]


def season_urls(settings, codes) -> list[dict]:
    """The season files of the configured leagues: ``{"season", "league", "url"}`` each, as the
    sync asks for them."""
    base = settings["FOOTBALL_DATA_URL"].rstrip("/")
    return [
        {"season": code, "league": division, "url": f"{base}/mmz4281/{code}/{division}.csv"}
        for code in codes
        for division in football_data.leagues(settings)
    ]


def run(
    settings,
    now: datetime,
    seasons: int = DEFAULT_SEASONS,
    policy: http.Policy | None = None,
    progress=None,
) -> dict:
    """Fetch and store the current and ``seasons`` earlier seasons, then backfill (see the
    module's docstring); ``progress(done, total)`` hears of the model's fits.
    SourceNotConfigured without ``FOOTBALL_DATA_URL``."""
    if not settings["FOOTBALL_DATA_URL"]:
        raise SourceNotConfigured(
            "football-data is not configured: set FOOTBALL_DATA_URL (docs/operations.md, "
            "The first day)."
        )
    started = time.perf_counter()
    codes = season_codes(now, seasons)
    files = season_urls(settings, codes)
    synced = sync.run(
        {**settings, "FOOTBALL_DATA_SEASONS": ",".join(codes)}, now, "football-data", policy
    )
    (report,) = synced["sources"]
    said = report["errors"] + report["skipped"]
    missing = [file for file in files if _not_served(file["url"], said)]
    stored = report["matches_new"] + report["matches_updated"] + report["odds_stored"]
    backfilled, reason = None, None
    if stored or not _backfilled():
        with writing():
            backfilled = predictions.backfill(settings, now=now, progress=progress)
    else:
        reason = "nothing new was stored and the history is backfilled"
    return {
        "seasons": codes,
        "leagues": football_data.leagues(settings),
        "files": len(files),
        "missing": missing,
        "sync": synced,
        "backfill": backfilled,
        "backfill_skipped": reason,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _not_served(url: str, said: list[str]) -> bool:
    """Whether the sync's errors or skipped calls say ``url`` is not there."""
    return any(
        line.startswith(f"{url}: ") and any(word in line for word in NOT_SERVED) for line in said
    )


def _backfilled() -> bool:
    """Whether any match carries a backfilled (not live) prediction."""
    return Prediction.select(Prediction.id).where(~Prediction.is_live).exists()
