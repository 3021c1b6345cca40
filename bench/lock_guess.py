"""The premium lock against an observer with a memory: how often a locked A pick can be guessed from
what an anonymous caller saw of its match before the pick existed, against a blind guess.

    .venv/bin/python -m bench.lock_guess [--days N] [--leagues E0,SP1] [--seasons 2223,2324]
                                        [--start YYYY-MM-DD] [--database-url URL] [--smoke]

Replays football-data seasons day by day (``services.feeds.replay.run_day``: the day's fixtures,
pre-match prices two days ahead, a live prediction of the coming week, settlement; on the match
day the market has moved: the closing prices stand as the pre-match ones), and after
each day saves every upcoming match's card as an anonymous caller receives it (the cards every
public answer is built from: the match, the slate, the pages). When a pick rated A appears (locked:
its market and rating shown, what to back withheld), the observer guesses it from the last card
it saved of that match showing that market's numbers (a match is sealed market by market: its
other markets go on showing theirs), the probe's method: of the pick's market, the
selection (and line) with the largest published probability × best price − 1, at the bookmaker
shown holding that best price; with nothing saved it guesses blind. A hit names the pick's
selection, line and bookmaker.

The blind base rate of a pick is one over the choices an observer without memory has: the
market's selections (times its quoted lines) times the bookmakers quoting the pick's market.
Printed: the A picks met, how many had a saved card with numbers, the observer's hit rate and the
mean blind rate, each with its standard error (of a proportion; of a mean of Bernoulli trials of
unequal chance). ``--smoke``: two leagues, three days, every pick rated A (so a few are met);
no goal is judged.
"""

import argparse
import dataclasses
import math
from datetime import UTC, datetime, timedelta

from bench.common import FOOTBALL_DATA, commit, machine, parse_arguments, skip_smoke
from models import Match, Pick
from services.feeds import replay
from services.reads import cards

#: What ``--every-pick-a`` (and a smoke run) sets: every pick rated A, so more are met.
EVERY_PICK_A = {"RATING_A_GROWTH": 0.0, "RATING_A_QUALITY": 0.0}
#: As the replay's own tests: every league modelled, however few matches it has.
REPLAY = {"MODEL_MIN_LEAGUE_MATCHES": 0}


def observe(now, horizon, settings) -> dict:
    """``{match_id: card}`` of every match kicking off in ``(now, now + horizon]`` as an
    anonymous caller sees it at ``now`` (stakes by ``settings``' rule)."""
    query = cards.matches().where((Match.kickoff_at > now) & (Match.kickoff_at <= now + horizon))
    include = ("odds", "predictions", "picks")
    return {card["id"]: card for card in cards.build(query, None, include, now, settings)}


def guess(card, market) -> tuple | None:
    """The observer's guess of the pick of ``market`` from a saved ``card``: ``(selection, line,
    bookmaker)`` of the largest edge shown, None where the card shows no edge to rank (locked,
    no prices or no probabilities)."""
    shares = {
        prediction["line"]: prediction["probabilities"]
        for prediction in card["predictions"]
        if prediction["market"] == market and prediction["probabilities"]
    }
    best = None
    for summary in card["odds"]:
        probabilities = shares.get(summary["line"])
        if summary["market"] != market or not probabilities:
            continue
        for row in summary["selections"]:
            price, probability = row["best_price"], probabilities.get(row["selection"])
            if price is None or probability is None:
                continue
            edge = probability * price - 1.0
            if best is None or edge > best[0]:
                best = (edge, (row["selection"], summary["line"], row["best_bookmaker"]))
    return None if best is None else best[1]


def choices(match_id, market) -> int:
    """How many ``(selection, line, bookmaker)`` a blind observer chooses among for a pick of
    ``market``: the selections of every quoted line times the bookmakers quoting the market."""
    from models import OddsQuote

    quoted = OddsQuote.select().where(
        (OddsQuote.match == match_id) & (OddsQuote.market == market) & ~OddsQuote.is_closing
    )
    options = {(quote.selection, quote.line) for quote in quoted}
    bookmakers = {quote.bookmaker for quote in quoted}
    return max(1, len(options)) * max(1, len(bookmakers))


#: From how long before kick-off the market has moved: its closing prices are quoted as the
#: pre-match ones from then on (football-data holds an opening and a closing price, no path).
LATE = timedelta(days=1)


def moved(record, now):
    """``record`` as known at ``now`` with the market moving: from ``LATE`` before kick-off its
    closing quotes stand as pre-match ones (the opening ones of a price with no closing kept),
    so a re-prediction on the match day meets prices partly public for a day and a half."""
    if record.home_goals is not None or not record.kickoff_at - LATE <= now < record.kickoff_at:
        return record
    closing = [dataclasses.replace(q, is_closing=False) for q in record.odds if q.is_closing]
    late = {(q.bookmaker, q.market, q.selection, q.line) for q in closing}
    opening = [
        q
        for q in record.odds
        if not q.is_closing and (q.bookmaker, q.market, q.selection, q.line) not in late
    ]
    return dataclasses.replace(record, odds=opening + closing)


def run(app, records, start, days, horizon) -> list[dict]:
    """Replay ``days`` days from ``start``; one row per A pick met: whether the memory guessed
    it, its blind chance, whether a saved card showed its numbers."""
    # (match id, market) -> the last card saved while it showed that market's numbers: a match
    # is sealed market by market, so its other markets go on showing theirs.
    memory: dict[tuple, dict] = {}
    seen_a: set[int] = set()
    met = []
    settings = app.config
    for number in range(days):
        now = start + timedelta(days=number)
        day = [moved(record, now) for record in records]
        replay.run_day(day, now, settings, horizon=horizon)
        for pick in Pick.select().where(Pick.rating == "A", Pick.is_live, Pick.created_at == now):
            if pick.id in seen_a:
                continue
            seen_a.add(pick.id)
            saved = memory.get((pick.match_id, pick.market))
            guessed = guess(saved, pick.market) if saved else None
            line = pick.line
            met.append(
                {
                    "saved": guessed is not None,
                    "hit": guessed == (pick.selection, line, pick.bookmaker),
                    "selection": guessed is not None and guessed[:2] == (pick.selection, line),
                    "blind": 1.0 / choices(pick.match_id, pick.market),
                }
            )
        for match_id, card in observe(now, horizon, settings).items():
            for market in {row["market"] for row in card["odds"]}:
                if guess(card, market) is not None:
                    memory[match_id, market] = card
    return met


def rates(met) -> dict:
    """The observer's and the blind rates with their standard errors."""
    n = len(met)
    if not n:
        return {"n": 0}
    hits = sum(row["hit"] for row in met) / n
    selections = sum(row["selection"] for row in met) / n
    blind = sum(row["blind"] for row in met) / n
    return {
        "n": n,
        "saved": sum(row["saved"] for row in met),
        "hit": hits,
        "hit_se": math.sqrt(hits * (1 - hits) / n),
        "selection": selections,
        "selection_se": math.sqrt(selections * (1 - selections) / n),
        "blind": blind,
        "blind_se": math.sqrt(sum(row["blind"] * (1 - row["blind"]) for row in met)) / n,
    }


def main():
    """Replay, observe, guess, and print both rates."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(FOOTBALL_DATA))
    parser.add_argument("--database-url")
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--leagues", default="E0,SP1,D1,F1")
    parser.add_argument("--seasons", default="2223,2324")
    parser.add_argument("--start", default="2023-09-15")
    parser.add_argument("--every-pick-a", action="store_true", help="rate every pick A")
    args = parse_arguments(parser, days=3, leagues="E0,SP1", every_pick_a=True)
    import tempfile
    from pathlib import Path

    from app import create_app
    from models.schema import create_tables, drop_tables

    files = [
        Path(args.data) / f"{league}_{season}.csv"
        for league in args.leagues.split(",")
        for season in args.seasons.split(",")
    ]
    missing = [str(path) for path in files if not path.is_file()]
    if missing and args.smoke:
        skip_smoke(f"no football-data files {', '.join(missing)} (--data or FOOTBALL_DATA_DIR)")
    if missing:
        parser.error(f"missing {', '.join(missing)}")
    start = datetime.fromisoformat(args.start).replace(hour=6, tzinfo=UTC)
    overrides = EVERY_PICK_A if args.every_pick_a else {}
    with tempfile.TemporaryDirectory() as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'bench.db'}"
        app = create_app(
            {
                "DATABASE_URL": url,
                "JWT_SECRET_KEY": "bench-" + "k" * 40,
                "LOG_LEVEL": "WARNING",
                **REPLAY,
                **overrides,
            }
        )
        with app.app_context():
            drop_tables()
            create_tables()
            records = replay.read_files(files)
            met = run(app, records, start, args.days, replay.HORIZON)
    found = rates(met)
    print(f"commit {commit()} on {machine()}")
    print(
        f"{args.days} days from {start:%Y-%m-%d} of {args.leagues} {args.seasons}"
        f"{' (every pick rated A)' if args.every_pick_a else ''}"
    )
    if not found["n"]:
        print("no A pick met: no rate")
        return
    print(f"A picks met: {found['n']}, with a saved card showing numbers: {found['saved']}")
    print(
        f"guessed from memory (selection, line and bookmaker): {found['hit']:.1%}"
        f" ± {found['hit_se']:.1%}"
    )
    print(
        f"  of which the selection and line: {found['selection']:.1%} ± {found['selection_se']:.1%}"
    )
    print(f"blind base rate: {found['blind']:.1%} ± {found['blind_se']:.1%}")


if __name__ == "__main__":
    main()
